"""--follow: a real file written, rotated and truncated while the installed command
follows it (without PYTHONUNBUFFERED: what a user's terminal or pipe sees)."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import holds_open, library_command, seqdedup_command, user_env


class Following:
    """A `seqdedup --follow` process, and what it has written so far."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [*seqdedup_command(), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=user_env(),
        )
        self.out = b""

    def lines(self, count: int, within: float = 5.0) -> list[bytes]:
        """Wait until the output holds ``count`` lines (or the time is up)."""
        deadline = time.monotonic() + within
        fd = self.proc.stdout.fileno()  # type: ignore[union-attr]
        while self.out.count(b"\n") < count and time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                self.out += chunk
        return self.out.splitlines()

    def opened(self, path: Path) -> None:
        """Wait until the follower has ``path`` open (an event, not a guess at a time)."""
        deadline = time.monotonic() + 60
        while not holds_open(self.proc.pid, path):
            assert time.monotonic() < deadline, f"{path} was never opened"
            time.sleep(0.02)

    def stop(self) -> tuple[int, bytes, str]:
        """Ctrl-C: the exit status, the rest of the output and standard error."""
        self.proc.send_signal(signal.SIGINT)
        rest, err = self.proc.communicate(timeout=30)
        return self.proc.returncode, self.out + rest, err.decode()


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as f:
        f.write(data)


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "app.log"
    path.write_bytes(b"old 1\nold 2\n")
    return path


def test_it_starts_at_the_end_and_writes_each_record_as_it_comes(log):
    run = Following("--follow", "-w", "2", "-q", str(log))
    run.opened(log)  # (it opens the file and goes to its end)
    append(log, b"a\nb\n")
    assert run.lines(2) == [b"a", b"b"]  # the old lines are not written
    append(log, b"a\nb\nc\n")  # a repeat of a b, then something new
    assert run.lines(3) == [b"a", b"b", b"c"]
    status, out, err = run.stop()
    assert status == 130 and out == b"a\nb\nc\n"
    assert err == "seqdedup: stopped by SIGINT: what was read is decided and written\n"


def test_from_start_and_the_statistics_at_ctrl_c(log):
    run = Following("--follow", "--from-start", "-w", "1", str(log))
    assert run.lines(2) == [b"old 1", b"old 2"]
    append(log, b"old 1\nnew\n")
    assert run.lines(3) == [b"old 1", b"old 2", b"new"]
    status, _, err = run.stop()
    assert status == 130
    assert "Total lines processed" in err and "Lines skipped" in err  # the table


def test_rotation_truncation_and_a_file_that_comes_later(tmp_path):
    log = tmp_path / "later.log"
    run = Following("--follow", "-w", "1", "-q", str(log))
    time.sleep(0.3)
    log.write_bytes(b"first\n")  # it appears: read from its start
    assert run.lines(1) == [b"first"]
    append(log, b"second\n")
    log.rename(tmp_path / "later.log.1")  # rotated: the old file's last lines, then the new
    append(tmp_path / "later.log.1", b"third\n")
    log.write_bytes(b"fourth\nfirst\n")
    assert run.lines(4) == [b"first", b"second", b"third", b"fourth"]  # (first: a repeat)
    with open(log, "wb"):  # truncated
        pass
    time.sleep(0.5)
    append(log, b"fifth\n")
    assert run.lines(5)[-1] == b"fifth"
    status, out, err = run.stop()
    assert status == 130 and out.splitlines() == [
        b"first",
        b"second",
        b"third",
        b"fourth",
        b"fifth",
    ]
    assert f"{log} has appeared; following it" in err
    assert f"{log} has been replaced; following the new file" in err
    assert f"{log}: file truncated; following it from its start" in err


def test_ctrl_c_saves_the_library(tmp_path, log):
    library = tmp_path / "lib"
    run = Following("--follow", "-w", "2", "-q", "-l", str(library), str(log))
    run.opened(log)
    append(log, b"x\ny\nz\n")
    assert run.lines(3) == [b"x", b"y", b"z"]
    status, _, err = run.stop()
    assert status == 130
    assert err == (
        "seqdedup: stopped by SIGINT: what was read is decided and written; the library is saved\n"
    )
    again = subprocess.run(
        [*seqdedup_command(), "-q", "-w", "2", "-r", str(library)],
        input=b"x\ny\nw\n",
        capture_output=True,
        env=user_env(),
    )
    assert again.stdout == b"w\n"  # x y: seen by the followed run, saved at Ctrl-C
    info = subprocess.run([*library_command(), "info", str(library)], capture_output=True)
    assert info.returncode == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--follow"], "--follow follows one named file"),
        (["--follow", "a.log", "b.log"], "--follow follows one named file"),
        (["--from-start", "a.log"], "--from-start requires --follow"),
        (["--follow", "--show-keys", "a.log"], "--follow cannot be combined with --show-keys"),
        (["--follow", "/"], "cannot follow '/': Is a directory"),
    ],
)
def test_bad_follow_settings_are_one_line(args, message):
    done = subprocess.run([*seqdedup_command(), *args], capture_output=True, env=user_env())
    assert done.returncode == 1 and done.stdout == b""
    assert done.stderr.decode().count("\n") == 1 and message in done.stderr.decode()


def test_a_pause_writes_the_summary_line_of_the_run_so_far(log):
    """Idle flushes as for live streams: with --fold, a run of repeats that pauses gets
    its line within the idle time, before anything more is written to the file."""
    run = Following("--follow", "-w", "2", "-q", "--fold", "--fold-idle", "0.5", str(log))
    run.opened(log)
    append(log, b"a\nb\na\nb\n")
    lines = run.lines(3, within=5.0)
    assert lines[:2] == [b"a", b"b"]
    # (the run so far: its last record waits for the window after it, as on any pipe)
    assert lines[2].startswith(b"[FOLDED: ") and lines[2].endswith(b"; the run goes on]")
    status, _, _ = run.stop()
    assert status == 130
