"""--follow: a real file written, rotated and truncated while the installed command
follows it (without PYTHONUNBUFFERED: what a user's terminal or pipe sees)."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from conftest import (
    HANG_GUARD,
    at_its_end,
    between_looks,
    library_command,
    seqdedup_command,
    user_env,
    wait_until,
)


class Following:
    """A `seqdedup --follow` process, and what it has written so far."""

    started: ClassVar[list[subprocess.Popen[bytes]]] = []  # (killed after each test)

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [*seqdedup_command(), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=user_env(),
        )
        Following.started.append(self.proc)
        self.out = b""
        self.err = b""

    def lines(self, count: int, within: float = HANG_GUARD) -> list[bytes]:
        """Wait until the output holds ``count`` lines (the time limit only guards
        against a hang)."""
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
        """Wait until the follower has ``path`` open at its end (an event, not a guess at
        a time): what is appended from then on is what it reads."""
        wait_until(lambda: at_its_end(self.proc.pid, path), f"the follow of {path} to start")

    def note(self, text: str, within: float = 30.0) -> None:
        """Wait until standard error holds ``text`` (kept for stop())."""
        deadline = time.monotonic() + within
        fd = self.proc.stderr.fileno()  # type: ignore[union-attr]
        while text not in self.err.decode(errors="replace"):
            assert time.monotonic() < deadline, f"no note {text!r}: {self.err!r}"
            if select.select([fd], [], [], 0.05)[0]:
                self.err += os.read(fd, 65536)

    def stop(self) -> tuple[int, bytes, str]:
        """Ctrl-C: the exit status, the rest of the output and standard error."""
        self.proc.send_signal(signal.SIGINT)
        rest, err = self.proc.communicate(timeout=30)
        return self.proc.returncode, self.out + rest, (self.err + err).decode()


@pytest.fixture(autouse=True)
def _no_follower_left() -> Iterator[None]:
    """A test that fails before it stops its follower leaves no process following."""
    yield
    while Following.started:
        proc = Following.started.pop()
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


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


@pytest.mark.slow
def test_rotation_truncation_and_a_file_that_comes_later(tmp_path):
    log = tmp_path / "later.log"
    run = Following("--follow", "-w", "1", "-q", str(log))
    # (the file must come after the first look: were it there before, the run would
    # start at its end)
    wait_until(lambda: between_looks(run.proc.pid), "the follower's first look")
    log.write_bytes(b"first\n")  # it appears: read from its start
    assert run.lines(1) == [b"first"]
    append(log, b"second\n")
    log.rename(tmp_path / "later.log.1")  # rotated: the old file's last lines, then the new
    append(tmp_path / "later.log.1", b"third\n")
    log.write_bytes(b"fourth\nfirst\n")
    assert run.lines(4) == [b"first", b"second", b"third", b"fourth"]  # (first: a repeat)
    with open(log, "wb"):  # truncated
        pass
    run.note("file truncated")  # (seen before the next line is written)
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
    lines = run.lines(3)
    assert lines[:2] == [b"a", b"b"]
    # (the run so far: its last record waits for the window after it, as on any pipe)
    assert lines[2].startswith(b"[FOLDED: ") and lines[2].endswith(b"; the run goes on]")
    status, _, _ = run.stop()
    assert status == 130


# -- rotation ---------------------------------------------------------------------------
def _records(count: int, tag: str) -> bytes:
    return b"".join(f"{tag} record {i}\n".encode() for i in range(count))


def test_copytruncate_that_regrows_at_once_loses_nothing_and_cuts_nothing(tmp_path):
    """copytruncate, and the file written past the old offset again before the next
    look: the rewrite is told by the bytes before the offset, the new file is read from
    its start, and the record that was incomplete at the truncation is dropped, never
    joined to new bytes."""
    log = tmp_path / "app.log"
    log.write_bytes(b"before the follow\n")  # (not read: a follow starts at the end)
    run = Following("--follow", "-w", "1", "-q", str(log))
    run.opened(log)
    append(log, _records(200, "old") + b"half a rec")  # (one write: read together)
    assert len(run.lines(200)) == 200
    with open(log, "r+b") as f:  # truncated and rewritten, longer, within microseconds
        f.truncate(0)
        f.write(_records(400, "new"))
    assert len(run.lines(600)) == 600
    status, out, err = run.stop()
    assert status == 130
    assert out == _records(200, "old") + _records(400, "new")
    assert f"{log}: file truncated; following it from its start" in err
    assert "the incomplete record before it, 10 bytes, is dropped" in err


def test_a_file_rewritten_between_the_look_and_the_read_is_read_from_its_start(
    tmp_path, monkeypatch
):
    """copytruncate and a rewrite past the old offset exactly between the follower's
    look (the file as it was) and its read: the read finds new bytes at the old offset;
    they are not taken as the file grown (a fresh clone's CI run lost the new file's
    first 201 of 400 records so): the new file is read from its start."""
    from seqdedup.run import follow

    path = tmp_path / "app.log"
    old = _records(200, "old") + b"half a rec"
    path.write_bytes(old)
    notes: list[str] = []
    follower = follow.Follower(str(path), from_start=True, on_note=notes.append)
    assert follower._read() == _records(200, "old")
    real = follow._Open.rewritten
    acted: list[bool] = []

    def rewritten(self):
        found = real(self)  # (the look: the file as it was)
        if not acted:  # (then, before the read: truncated and written again, longer)
            acted.append(True)
            with open(path, "r+b") as f:
                f.truncate(0)
                f.write(_records(400, "new"))
        return found

    monkeypatch.setattr(follow._Open, "rewritten", rewritten)
    got = follower._read()
    follower.close()
    assert acted and got == _records(400, "new")
    assert notes == [
        f"{path}: file truncated; following it from its start (the incomplete record "
        "before it, 10 bytes, is dropped)"
    ]


def test_data_read_before_a_rewrite_is_kept_and_the_rewrite_seen_next(tmp_path, monkeypatch):
    """The other order: the read takes the old file's new lines, then the file is
    truncated and written again before the check that follows the read: the lines read
    are the old file's and are kept; the next look sees the rewrite."""
    from seqdedup.run import follow

    path = tmp_path / "app.log"
    path.write_bytes(_records(10, "old"))
    follower = follow.Follower(str(path), from_start=True)
    assert follower._read() == _records(10, "old")
    follow_up = _records(5, "late")
    with open(path, "ab") as f:
        f.write(follow_up)
    real = follow._Open.rewritten_before
    acted: list[bool] = []

    def rewritten_before(self, offset, data):
        if not acted:  # (after the read, before its check: the rewrite)
            acted.append(True)
            with open(path, "r+b") as f:
                f.truncate(0)
                f.write(_records(40, "new"))
        return real(self, offset, data)

    monkeypatch.setattr(follow._Open, "rewritten_before", rewritten_before)
    assert follower._read() == follow_up
    assert follower._read() == _records(40, "new")
    follower.close()


def test_a_rotated_files_late_lines_are_read_while_it_is_held(tmp_path):
    """Renamed, and a new file at the path: lines written late to the old file (a
    writer that has not reopened yet) still come, in arrival order, while the old file
    is held; its last line without a newline is a record of its own at the end."""
    log = tmp_path / "app.log"
    log.write_bytes(b"before the follow\n")  # (not read: a follow starts at the end)
    run = Following("--follow", "-w", "1", "-q", "--rotate-wait", "86400", str(log))
    run.opened(log)
    append(log, b"before\n")
    assert run.lines(1) == [b"before"]
    log.rename(tmp_path / "app.log.1")
    log.write_bytes(b"new 1\n")
    assert run.lines(2) == [b"before", b"new 1"]  # (the new file is followed now)
    append(tmp_path / "app.log.1", b"late 1\nlate half")
    assert run.lines(3)[-1] == b"late 1"
    append(log, b"new 2\n")
    assert run.lines(4) == [b"before", b"new 1", b"late 1", b"new 2"]
    status, out, _ = run.stop()
    assert status == 130 and out.endswith(b"new 2\nlate half\n")


def test_a_rotated_files_last_record_comes_when_its_wait_is_over(tmp_path):
    """With --rotate-wait 0 the old file is read to its end at the look that finds the
    switch and closed: its incomplete last record is a record of its own then, before
    the new file's first records (the old file's last lines come first: they were
    written first)."""
    log = tmp_path / "app.log"
    log.write_bytes(b"before the follow\n")
    run = Following("--follow", "-w", "1", "-q", "--rotate-wait", "0", str(log))
    run.opened(log)
    append(log, b"before\nhalf")
    assert run.lines(1) == [b"before"]
    log.rename(tmp_path / "app.log.1")
    log.write_bytes(b"new 1\n")
    assert run.lines(3) == [b"before", b"half", b"new 1"]
    status, out, _ = run.stop()
    assert status == 130 and out == b"before\nhalf\nnew 1\n"


def test_a_rotated_in_path_that_cannot_be_read_yet_is_tried_again(tmp_path):
    """The path is briefly a directory after a rotation (or unreadable): one note, the
    old file kept meanwhile, and the new file followed once it is there."""
    log = tmp_path / "app.log"
    log.write_bytes(b"before the follow\n")  # (not read: a follow starts at the end)
    run = Following("--follow", "-w", "1", "-q", "--rotate-wait", "0", str(log))
    run.opened(log)
    log.rename(tmp_path / "app.log.1")
    log.mkdir()
    run.note(f"cannot read {log} (Is a directory); trying again")
    log.rmdir()
    log.write_bytes(b"fresh\n")
    assert run.lines(1) == [b"fresh"]
    status, _, err = run.stop()
    assert status == 130
    assert err.count("trying again") == 1


def test_rotate_wait_is_checked_and_needs_follow(run_cli, tmp_path):
    log = tmp_path / "app.log"
    log.write_bytes(b"a\n")
    for args, message in (
        (["--rotate-wait", "5"], "--rotate-wait requires --follow"),
        (["-F", "--rotate-wait", "-1"], "--rotate-wait must be a number of seconds above 0"),
    ):
        p = run_cli([*args, str(log)])
        assert (p.returncode, p.stdout) == (1, b"")
        assert p.stderr.decode().startswith(f"seqdedup: {message}")


def test_a_followed_file_gets_its_report_page_when_the_run_ends(log, tmp_path):
    pytest.importorskip("vl_convert")
    import json
    import re

    page = tmp_path / "live.html"
    run = Following("--follow", "-w", "2", "-q", "--report", str(page), str(log))
    run.opened(log)
    append(log, b"a\nb\na\nb\nc\n")
    assert run.lines(3) == [b"a", b"b", b"c"]
    status, _, err = run.stop()
    assert status == 130, err
    found = re.search(r'id="seqdedup-data">(.*?)</script>', page.read_text(), re.DOTALL)
    assert found is not None
    data = json.loads(found.group(1))
    assert data["headline"]["records_read"] == 5 and data["headline"]["records_removed"] == 2
    assert data["top"][0]["sample"] == "a" and "stopped" in data["subtitle"]


def test_a_file_replaced_between_a_read_and_the_look_at_its_path_gives_its_lines_first(
    tmp_path, monkeypatch
):
    """A writer appends, rotates and starts the new file after the follower's read found
    the old file's end but before it looked at the path: the old file's last lines
    came after the new file's (a fresh clone's CI run caught it: first, fourth,
    second, third). The writer acts here exactly between the two (at the look)."""
    from seqdedup.run import follow

    path = tmp_path / "app.log"
    path.write_bytes(b"first\n")
    follower = follow.Follower(str(path), from_start=True, rotate_wait=60)
    assert follower._read() == b"first\n"
    real_stat = os.stat
    acted: list[bool] = []

    def stat(name, *args, **kwargs):
        if name == str(path) and not acted:  # (the follower looks at the path)
            acted.append(True)
            append(path, b"second\n")
            path.rename(tmp_path / "app.log.1")
            append(tmp_path / "app.log.1", b"third\n")
            path.write_bytes(b"fourth\n")
        return real_stat(name, *args, **kwargs)

    monkeypatch.setattr(follow.os, "stat", stat)
    got = b"".join(follower._read() for _ in range(3))
    follower.close()
    assert acted and got == b"second\nthird\nfourth\n"
