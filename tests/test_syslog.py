"""seqdedup as the program of the real syslog daemons, on loopback with private
configurations: rsyslog's omprog (installed by .ci/run) and syslog-ng's program()
(unpacked into .ci/syslog-ng by .ci/run: Debian's two packages conflict). Messages go in
with logger over TCP; the output file is checked against the rule, a reload keeps the
history (rsyslog: SIGHUP handed on, the file reopened after logrotate moved it), and a
SIGTERM to the daemon leaves the last fold line in the file."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import (
    HANG_GUARD,
    children,
    main_thread,
    needs,
    user_env,
    wait_until,
    waits_for_input,
)

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
SEQDEDUP = f"{BIN / 'seqdedup'} -w 2 -q --fold --fold-idle 60"
SYSLOG_NG = ROOT / ".ci" / "syslog-ng"
RSYSLOGD = shutil.which("rsyslogd", path=f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin")
FIRST = ["start", "retry", "fail", "retry", "fail", "retry", "fail", "mark1"]
SECOND = ["retry", "fail", "mark2", "retry", "fail"]

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def send(port: int, messages: list[str]) -> None:
    subprocess.run(
        ["logger", "--rfc3164", "--tcp", "-n", "127.0.0.1", "-P", str(port), "-t", "app"],
        input="\n".join(messages) + "\n",
        text=True,
        check=True,
        timeout=30,
    )


def listening(port: int) -> bool:
    """Whether something accepts connections on the port (the daemon's input)."""
    import socket

    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def wait_for(path: Path, text: str) -> str:
    """``path``'s text once it holds ``text`` (an event)."""
    wait_until(lambda: path.exists() and text in path.read_text(), f"{text!r} in {path}")
    return path.read_text()


def expected(run_cli) -> str:
    """What the rule writes for all the messages at once (no daemon, no rotation)."""
    data = "\n".join(FIRST + SECOND) + "\n"
    done = run_cli(["-w", "2", "-q", "--fold"], data.encode())
    return same_ids(done.stdout.decode())


def same_ids(text: str) -> str:
    """(a sequence id is the run's own: keyed with its seed)"""
    return re.sub(r"sequence [0-9a-f]{12}", "sequence ID", text)


def feed_with_a_reload(port: int, out: Path, pid_file: Path, rotated: Path | None) -> None:
    """Once the daemon is up: the first messages, the output moved to ``rotated`` (if
    given) and a reload, then the second messages once the reload has happened."""
    wait_until(lambda: listening(port), "the daemon's port")
    send(port, FIRST)
    wait_for(out, "mark1")
    if rotated is None:
        reload_syslog_ng(pid_file.parent / "ctl")
        send(port, SECOND)
        wait_for(out, "mark2")
        return
    out.rename(rotated)  # what logrotate does, then it signals the daemon
    child = reload_handed_on(int(pid_file.read_text().split()[0]))
    # rsyslog ends seqdedup with SIGTERM (signalOnClose), which stops it before it reads
    # what is still in its pipe: the daemon is stopped once seqdedup has read every
    # message (each its text and a newline, as the template writes it)
    before = bytes_read(child)
    send(port, SECOND)
    size = len("\n".join(SECOND)) + 1
    wait_until(lambda: bytes_read(child) - before >= size, "seqdedup reading every message")


def bytes_read(pid: int) -> int:
    """The bytes process ``pid`` has read so far (its reads counted by the kernel)."""
    fields = dict(line.split(": ") for line in Path(f"/proc/{pid}/io").read_text().splitlines())
    return int(fields["rchar"])


def reload_handed_on(daemon: int) -> int:
    """SIGHUP to rsyslog, which hands it on to seqdedup: returns seqdedup's pid once
    its main thread has been woken by it and waits for input again (its handler has run,
    so its next write reopens the file)."""
    (child,) = (
        pid for pid in children(daemon) if b"seqdedup" in Path(f"/proc/{pid}/cmdline").read_bytes()
    )
    wait_until(lambda: waits_for_input(child), "seqdedup waiting for input")
    _, before = main_thread(child)
    os.kill(daemon, signal.SIGHUP)
    wait_until(
        lambda: main_thread(child)[1] > before and waits_for_input(child),
        "seqdedup taking the SIGHUP",
    )
    return child


def reload_syslog_ng(control: Path) -> None:
    """A reload through syslog-ng's control socket (it answers once the new
    configuration runs)."""
    env = {**user_env(), "LD_LIBRARY_PATH": syslog_ng_libraries()}
    done = subprocess.run(
        [str(SYSLOG_NG / "usr" / "sbin" / "syslog-ng-ctl"), "reload", f"--control={control}"],
        capture_output=True,
        text=True,
        env=env,
        timeout=HANG_GUARD,
    )
    assert done.returncode == 0, done.stderr


def stop(daemon: subprocess.Popen[bytes], pid_file: Path) -> None:
    os.kill(int(pid_file.read_text().split()[0]), signal.SIGTERM)
    daemon.wait(timeout=30)


@needs(
    RSYSLOGD is not None and shutil.which("logger") is not None,
    "rsyslogd and logger (.ci/run installs rsyslog)",
)
def test_rsyslog_omprog_reload_reopens_the_file_and_keeps_the_history(tmp_path, run_cli):
    port, out = free_port(), tmp_path / "out.log"
    config = tmp_path / "rsyslog.conf"
    config.write_text(
        f'global(workDirectory="{tmp_path}")\n'
        'main_queue(queue.workerThreads="1")\n'
        'module(load="imtcp")\nmodule(load="omprog")\n'
        f'input(type="imtcp" port="{port}" address="127.0.0.1" ruleset="dedup")\n'
        'template(name="message" type="string" string="%msg:2:$%\\n")\n'
        'ruleset(name="dedup") {\n'
        f'  action(type="omprog" binary="{SEQDEDUP} --output {out}" template="message"\n'
        '         signalOnClose="on" closeTimeout="10000" hup.signal="HUP"\n'
        '         forceSingleInstance="on")\n'
        "}\n"
    )
    pid_file = tmp_path / "rsyslogd.pid"
    daemon = subprocess.Popen(
        [str(RSYSLOGD), "-n", "-f", str(config), "-i", str(pid_file)], env=user_env()
    )
    try:
        feed_with_a_reload(port, out, pid_file, tmp_path / "out.log.1")
    finally:
        stop(daemon, pid_file)
    rotated = (tmp_path / "out.log.1").read_text()
    assert rotated.endswith("mark1\n") and "mark2" not in rotated
    assert same_ids(rotated + out.read_text()) == expected(run_cli)
    assert out.read_text().splitlines()[-1].startswith("[FOLDED: lines 12-13 ")


def syslog_ng_libraries() -> str:
    libraries = [SYSLOG_NG / "usr" / "lib" / "syslog-ng"]
    libraries += [SYSLOG_NG / base / "x86_64-linux-gnu" for base in ("usr/lib", "lib")]
    return os.pathsep.join(map(str, libraries))


def syslog_ng_binary() -> Path:
    return SYSLOG_NG / "usr" / "sbin" / "syslog-ng"


@needs(
    syslog_ng_binary().exists() and shutil.which("logger") is not None,
    "syslog-ng in .ci/syslog-ng and logger (.ci/run unpacks it)",
)
def test_syslog_ng_program_keeps_seqdedup_across_a_reload(tmp_path, run_cli):
    port, out = free_port(), tmp_path / "out.log"
    config = tmp_path / "syslog-ng.conf"
    config.write_text(
        "@version: 3.38\n"
        f'source s_tcp {{ network(ip("127.0.0.1") port({port}) transport("tcp")); }};\n'
        f'destination d_dedup {{ program("{SEQDEDUP} --output {out}" '
        'template("${MSG}\\n") keep-alive(yes)); };\n'
        "log { source(s_tcp); destination(d_dedup); };\n"
    )
    env = {**user_env(), "LD_LIBRARY_PATH": syslog_ng_libraries()}
    pid_file = tmp_path / "syslog-ng.pid"
    daemon = subprocess.Popen(
        [
            str(syslog_ng_binary()),
            "-F",
            "-f",
            str(config),
            f"--module-path={SYSLOG_NG / 'usr' / 'lib' / 'syslog-ng' / '3.38'}",
            f"--persist-file={tmp_path / 'persist'}",
            f"--pidfile={pid_file}",
            f"--control={tmp_path / 'ctl'}",
            "--no-caps",
        ],
        env=env,
    )
    try:
        feed_with_a_reload(port, out, pid_file, None)
    finally:
        stop(daemon, pid_file)
    # keep-alive(yes): the reload did not restart seqdedup, so its history held, and
    # the daemon's SIGTERM closed its input: the last fold line was written
    assert same_ids(out.read_text()) == expected(run_cli)
    assert out.read_text().splitlines()[-1].startswith("[FOLDED: lines 12-13 ")
