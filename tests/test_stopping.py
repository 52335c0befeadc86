"""The signal table (stopping): the installed command stopped by SIGTERM, SIGINT or
SIGHUP as a supervisor or a terminal stops it, in an environment without
PYTHONUNBUFFERED."""

from __future__ import annotations

import contextlib
import json
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from conftest import arrived, children, holds_open, live, seqdedup_command, user_env

SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"]
BLOCK = b"".join(b"step %d of the retry\n" % i for i in range(5))


def runs_in(library) -> int:
    path = library / "seqdedup.sqlite"
    if not path.exists():
        return 0
    with contextlib.closing(sqlite3.connect(path)) as connection:
        return connection.execute("SELECT COUNT(*) FROM runs").fetchone()[0]


def wait_until(condition, timeout=60.0):
    """Poll ``condition`` (an event the test waits on, not a guess at a duration)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the event did not come"
        time.sleep(0.02)


@pytest.mark.parametrize("signame", SIGNALS)
def test_live_input_ends_as_its_end_would(tmp_path, signame):
    """Standard input from a pipe: the open run's fold line and the library are not
    lost to the signal; the statistics come; exit 128 + N with one line."""
    library = tmp_path / "L"
    proc = live("-w", "3", "--fold", "-l", str(library), "--stats-format", "json")
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"start\n" + BLOCK * 4)  # one write (< PIPE_BUF): read at once
    proc.stdin.flush()
    first = arrived(proc.stdout.fileno(), 30)
    assert first == b"start\n" + BLOCK  # the copies are skipped: their run is still open
    proc.send_signal(getattr(signal, signame))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + getattr(signal, signame)
    assert out.startswith(b"[FOLDED: 15 records at lines 7-21: 3 copies of sequence ")
    stats, line = _stats_and_line(err)
    assert stats["lines"] == {"total": 21, "emitted": 6, "skipped": 15}
    assert line == f"seqdedup: stopped by {signame}: what was read is decided and written; " + (
        "the library is saved"
    )
    assert runs_in(library) == 1


def _stats_and_line(err: bytes) -> tuple[dict, str]:
    """The JSON statistics and the one line after them."""
    text = err.decode()
    body, line = text.rstrip("\n").rsplit("\n", 1)
    return json.loads(body)["statistics"], line


@pytest.mark.slow
def test_a_named_file_stops_at_once_its_output_whole_and_the_library_unchanged(tmp_path):
    """A file cut short: what was read is decided as at its end, fold lines included,
    written in whole records, and the library stays as it was (a later run reads it)."""
    source = tmp_path / "big.log"
    lines = [b"new %d\n" % i if i % 3 else BLOCK for i in range(2_000_000)]
    source.write_bytes(b"".join(lines))
    library = tmp_path / "L"
    out_path = tmp_path / "out"
    args = ["-w", "3", "--fold", "--stats-format", "json", "--bypass", "^never"]
    with out_path.open("wb") as out:
        proc = subprocess.Popen(
            [*seqdedup_command(), *args, "-l", str(library), str(source)],
            stdout=out,
            stderr=subprocess.PIPE,
            env=user_env(),
        )
        wait_until(lambda: out_path.stat().st_size > 0 or proc.poll() is not None)
        assert proc.poll() is None, "the run ended before the signal"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    stats, line = _stats_and_line(err)
    assert line == (
        "seqdedup: stopped by SIGTERM: what was read is decided and written; "
        "the library is unchanged"
    )
    assert runs_in(library) == 0
    read = stats["lines"]["total"]
    assert 0 < read < sum(line.count(b"\n") for line in lines)  # stopped part-way
    prefix = tmp_path / "prefix.log"  # (a file: the history of a file, not of a pipe)
    prefix.write_bytes(b"".join(b"".join(lines).splitlines(keepends=True)[:read]))
    whole = subprocess.run(
        [*seqdedup_command(), *args, "-q", str(prefix)], capture_output=True, check=True
    )
    assert out_path.read_bytes() == whole.stdout  # as if the file had ended there


def test_a_second_signal_ends_the_run_at_once(tmp_path):
    """The first signal asks; a run that cannot finish (a hash transform that hangs)
    is ended by the second at once, the library unchanged, no traceback."""
    library = tmp_path / "L"
    command = "sleep 300; cat"
    proc = live("-w", "2", "-l", str(library), "--hash-transform", command,
                "--transform-timeout", "600")  # fmt: skip
    assert proc.stdin is not None
    proc.stdin.write(b"a\nb\n")
    proc.stdin.flush()
    wait_until(lambda: bool(children(proc.pid)))  # the transform runs
    proc.send_signal(signal.SIGTERM)
    proc.send_signal(signal.SIGINT)
    started = time.monotonic()
    _, err = proc.communicate(timeout=60)
    assert time.monotonic() - started < 30  # (the transform would take 300 s)
    assert proc.returncode in (130, 143)  # (whichever the system delivered second)
    assert b"Traceback" not in err
    assert runs_in(library) == 0


def test_a_signal_the_parent_ignores_stays_ignored(tmp_path):
    """As under nohup: SIGTERM ignored by whoever started the command has no effect;
    the run ends at the end of its input, exit 0."""
    proc = subprocess.Popen(
        [*seqdedup_command(), "-q", "-w", "2"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=user_env(),
        preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_IGN),
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"a\nb\n")
    proc.stdin.flush()
    assert arrived(proc.stdout.fileno(), 30) == b"a\nb\n"
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(b"a\nb\nc\n", timeout=60)
    assert (proc.returncode, out, err) == (0, b"c\n", b"")


@pytest.mark.parametrize("signame", SIGNALS)
def test_a_followed_file_ends_as_its_end_would(tmp_path, signame):
    """--follow, stopped by a service manager's SIGTERM (or Ctrl-C, SIGHUP): the open
    fold line is written, the library saved, exit 128 + N."""
    library = tmp_path / "L"
    command = [*seqdedup_command(), "-F", "-q", "-w", "3", "--fold", "-l", str(library)]
    proc = _following(command, tmp_path, copies=3)
    proc.send_signal(getattr(signal, signame))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + getattr(signal, signame)
    assert out.startswith(b"[FOLDED: 10 records at lines 7-16: 2 copies of sequence ")
    assert err.decode() == (
        f"seqdedup: stopped by {signame}: what was read is decided and written; "
        "the library is saved\n"
    )
    assert runs_in(library) == 1


def _following(command: list[str], tmp_path, copies: int) -> subprocess.Popen[bytes]:
    """A follower of tmp_path/app.log (``command``, the file's name added when it is
    seqdedup's), once it holds the file open: "start" and ``copies`` copies of BLOCK
    written, the first copy read back (the others are an open run)."""
    log = tmp_path / "app.log"
    log.write_bytes(b"")
    if command[0] != sys.executable:
        command = [*command, str(log)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=user_env())
    assert proc.stdout is not None
    wait_until(lambda: holds_open(proc.pid, log))  # (a follow starts at the file's end)
    with log.open("ab") as writer:
        writer.write(b"start\n" + BLOCK * copies)
    assert arrived(proc.stdout.fileno(), 30) == b"start\n" + BLOCK
    return proc


def test_the_library_api_follow_ends_on_ctrl_c_with_the_rest_written(tmp_path):
    """A program using follow_file in its main thread: Ctrl-C ends the follow as the
    end of input would (stats.interrupted is the signal), and the handler it had is
    back afterwards."""
    log = tmp_path / "app.log"
    program = (
        "import signal, sys\n"
        "from seqdedup import Config\n"
        "from seqdedup.api import follow_file\n"
        "out = sys.stdout.buffer\n"
        f"stats = follow_file({str(log)!r}, out, Config(window_size=3, fold=True))\n"
        "out.flush()\n"
        "print(stats.interrupted, signal.getsignal(signal.SIGINT) is "
        "signal.default_int_handler, file=sys.stderr)\n"
    )
    proc = _following([sys.executable, "-c", program], tmp_path, copies=2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.startswith(b"[FOLDED: 5 records at lines 7-11: 1 copy of sequence ")
    assert err == b"2 True\n"
