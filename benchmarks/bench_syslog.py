"""Benchmark: rsyslog handing every message to seqdedup (omprog) against rsyslog writing
the same messages with its own omfile, same sender, same run: the CPU of the daemon and
of everything it started, and whether anything was lost across a reload.

    python benchmarks/bench_syslog.py            # 200,000 messages of the generated log

The messages are the lines of benchmarks/genlog.py's log (tracebacks that repeat), sent
over one TCP connection on loopback; midway through, the daemon is sent SIGHUP (a
reload). CPU is read from /proc (user + system of rsyslogd and its children) once every
message has arrived.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench import generate

TICK = os.sysconf("SC_CLK_TCK")


def cpu_of_tree(pid: int) -> float:
    """User + system seconds of a process and its descendants (alive)."""
    total = 0.0
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / TICK
        children = Path(f"/proc/{current}/task/{current}/children")
        if children.exists():
            pending += [int(child) for child in children.read_text().split()]
    return total


def run_daemon(work: Path, lines: list[bytes], action: str, out: Path) -> tuple[float, list[bytes]]:
    port = free_port()
    config = work / "rsyslog.conf"
    config.write_text(
        f'global(workDirectory="{work}")\n'
        'main_queue(queue.workerThreads="1")\n'  # (several would reorder messages)
        'module(load="imtcp")\nmodule(load="omprog")\n'
        f'input(type="imtcp" port="{port}" address="127.0.0.1" ruleset="r")\n'
        'template(name="message" type="string" string="%msg:2:$%\\n")\n'
        f'ruleset(name="r") {{ {action} }}\n'
    )
    pid_file = work / "pid"
    pid_file.unlink(missing_ok=True)
    rsyslogd = shutil.which("rsyslogd", path=f"{os.environ['PATH']}:/usr/sbin")
    daemon = subprocess.Popen([str(rsyslogd), "-n", "-f", str(config), "-i", str(pid_file)])
    while not pid_file.exists():
        time.sleep(0.05)
    time.sleep(0.5)
    pid = int(pid_file.read_text().split()[0])
    with socket.create_connection(("127.0.0.1", port)) as sender:
        half = len(lines) // 2
        for part in (lines[:half], lines[half:]):
            sender.sendall(
                b"".join(b"<13>Nov 26 10:00:00 host app: " + line + b"\n" for line in part)
            )
            if part is lines[:half] or len(part) == half:
                time.sleep(1)
                os.kill(pid, signal.SIGHUP)  # a reload, midway
    settled, size = time.monotonic(), -1
    while time.monotonic() - settled < 3:  # until the output stops growing
        now = out.stat().st_size if out.exists() else 0
        if now != size:
            size, settled = now, time.monotonic()
        time.sleep(0.2)
    cpu = cpu_of_tree(pid)
    os.kill(pid, signal.SIGTERM)
    daemon.wait(timeout=60)
    return cpu, out.read_bytes().splitlines()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        log = work / "messages.log"
        generate(log, args.lines)
        lines = log.read_bytes().splitlines()
        plain = work / "omfile.log"
        folded = work / "seqdedup.log"
        seqdedup = Path(sys.executable).parent / "seqdedup"
        file_cpu, written = run_daemon(
            work, lines, f'action(type="omfile" file="{plain}" template="message")', plain
        )
        prog_cpu, kept = run_daemon(
            work,
            lines,
            f'action(type="omprog" binary="{seqdedup} -w 10 -q --fold --fold-idle 1 '
            f'--output {folded}" template="message" signalOnClose="on" '
            'closeTimeout="10000" hup.signal="HUP" forceSingleInstance="on")',
            folded,
        )
        offline = subprocess.run(
            [str(seqdedup), "-w", "10", "-q", "-m", "100000", str(plain)],
            capture_output=True,
            check=True,
        ).stdout.splitlines()
        records = [line for line in kept if not line.startswith(b"[FOLDED")]
        print(f"{len(lines):,} messages; omfile wrote {len(written):,} lines")
        print(f"rsyslog + omfile:          {file_cpu:.2f} s CPU")
        print(f"rsyslog + omprog seqdedup: {prog_cpu:.2f} s CPU ({prog_cpu / file_cpu:.2f}x)")
        print(
            f"seqdedup kept {len(records):,} records ({len(kept) - len(records):,} fold lines); "
            f"the same messages offline: {len(offline):,}; the same records: {records == offline}"
        )


if __name__ == "__main__":
    main()
