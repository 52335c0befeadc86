"""--output FILE: the records appended to a file; SIGHUP reopens it (logrotate moves the
file away, then signals) and the run goes on with its history; SIGTERM still ends the
run as the end of input would. Through the installed command, in real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import signal_taken, user_env, wait_until

BIN = Path(sys.executable).parent


def wait_for(path: Path, content: bytes) -> bytes:
    """``path``'s bytes once they are ``content`` (an event)."""
    wait_until(lambda: path.exists() and path.read_bytes() == content, f"{content!r} in {path}")
    return path.read_bytes()


def start(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [str(BIN / "seqdedup"), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=user_env(),
    )


def test_sighup_reopens_the_output_and_keeps_the_history(tmp_path):
    out = tmp_path / "app.dedup.log"
    proc = start("-w", "2", "-q", "--output", str(out))
    assert proc.stdin is not None
    proc.stdin.write(b"a\nb\n")
    proc.stdin.flush()
    assert wait_for(out, b"a\nb\n") == b"a\nb\n"
    out.rename(tmp_path / "app.dedup.log.1")  # what logrotate does, then it signals
    proc.send_signal(signal.SIGHUP)
    signal_taken(proc.pid, signal.SIGHUP)
    assert proc.poll() is None  # (the run goes on)
    proc.stdin.write(b"a\nb\nc\n")
    proc.stdin.flush()
    assert wait_for(out, b"c\n") == b"c\n"  # a b: repeats, the history was kept
    stdout, stderr = proc.communicate(timeout=20)
    assert proc.returncode == 0 and stdout == b"" and stderr == b""
    assert (tmp_path / "app.dedup.log.1").read_bytes() == b"a\nb\n"


def test_sigterm_ends_the_run_as_its_end_would_with_the_fold_line_written(tmp_path):
    out = tmp_path / "out.log"
    out.write_bytes(b"earlier\n")  # (appended to, never truncated)
    proc = start("-w", "1", "-q", "--fold", "--output", str(out))
    assert proc.stdin is not None
    proc.stdin.write(b"x\n" * 5)
    proc.stdin.flush()
    # (the five records came in one write, read as one chunk: once the first is
    # written, all five were read)
    assert wait_for(out, b"earlier\nx\n") == b"earlier\nx\n"
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=20)
    assert proc.returncode == 128 + signal.SIGTERM
    lines = out.read_bytes().splitlines()
    assert lines[:2] == [b"earlier", b"x"] and lines[2].startswith(b"[FOLDED: lines 2-5 ")


def test_without_output_sighup_still_ends_the_run(tmp_path):
    proc = start("-w", "1", "-q")
    assert proc.stdin is not None
    proc.stdin.write(b"y\n")
    proc.stdin.flush()
    assert proc.stdout is not None and proc.stdout.readline() == b"y\n"  # (it was read)
    proc.send_signal(signal.SIGHUP)
    stdout, _ = proc.communicate(timeout=20)
    assert proc.returncode == 128 + signal.SIGHUP and stdout == b""


def test_an_output_that_cannot_be_written_is_one_line_before_any_input(run_cli, tmp_path):
    done = run_cli(["-q", "--output", str(tmp_path / "no" / "such" / "dir.log")], b"a\n")
    assert done.returncode == 1 and done.stdout == b""
    assert done.stderr.decode().count("\n") == 1 and "cannot write" in done.stderr.decode()
    assert not os.path.exists(tmp_path / "no")


def plant(folder: Path, mode: int, owner: int) -> tuple[Path, Path]:
    """A shared folder holding a symbolic link ``out.log`` (made by ``owner``) to a
    file of root's outside it."""
    folder.mkdir()
    folder.chmod(mode)
    victim = folder.parent / "victim"
    victim.write_bytes(b"root's own\n")
    link = folder / "out.log"
    link.symlink_to(victim)
    os.lchown(link, owner, owner)
    return link, victim


@pytest.mark.skipif(os.getuid() != 0, reason="a link of another user needs root")
@pytest.mark.parametrize(
    ("mode", "owner", "refused"),
    [
        (0o1777, 65534, b"symbolic link made by another user (uid 65534) in a shared folder"),
        (0o777, 0, b"symbolic link in a folder anyone may change"),
        (0o1777, 0, None),  # your own link in a sticky folder: followed
        (0o755, 65534, None),  # a folder only its owner may change: as usual
    ],
)
def test_output_never_follows_a_link_planted_in_a_shared_folder(
    run_cli, tmp_path, mode, owner, refused
):
    link, victim = plant(tmp_path / "shared", mode, owner)
    done = run_cli(["-q", "--output", str(link)], b"a\n")
    if refused is None:
        assert done.returncode == 0 and victim.read_bytes() == b"root's own\na\n"
        return
    assert done.returncode == 1 and done.stdout == b""
    assert done.stderr.decode().count("\n") == 1 and refused in done.stderr
    assert victim.read_bytes() == b"root's own\n"


@pytest.mark.skipif(os.getuid() != 0, reason="a link of another user needs root")
def test_a_reopen_after_sighup_follows_the_same_rule(tmp_path):
    """logrotate moved the file away; someone plants a link where it was: the reopen
    refuses it and the run ends with one line instead of writing into the target."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    out = shared / "out.log"
    proc = start("-w", "1", "-q", "--output", str(out))
    assert proc.stdin is not None
    proc.stdin.write(b"a\n")
    proc.stdin.flush()
    assert wait_for(out, b"a\n") == b"a\n"
    out.rename(shared / "out.log.1")
    victim = tmp_path / "victim"
    victim.write_bytes(b"root's own\n")
    out.symlink_to(victim)
    os.lchown(out, 65534, 65534)
    proc.send_signal(signal.SIGHUP)
    signal_taken(proc.pid, signal.SIGHUP)
    proc.stdin.write(b"b\n")
    proc.stdin.close()
    proc.wait(timeout=20)
    stderr = proc.stderr.read() if proc.stderr else b""
    assert proc.returncode == 1 and b"refusing to write" in stderr
    assert victim.read_bytes() == b"root's own\n"
