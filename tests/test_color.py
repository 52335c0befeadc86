"""Colour on a terminal only (--color, NO_COLOR, FORCE_COLOR), through the installed
command on a real pseudo-terminal and on pipes."""

from __future__ import annotations

import os
import pty
import subprocess
from pathlib import Path

import pytest

from conftest import seqdedup_command, user_env

ESC = b"\x1b["


def on_terminal(args: list[str], env_extra: dict[str, str] | None = None) -> bytes:
    """What the command writes to a pseudo-terminal (stdout and stderr both)."""
    env = {**user_env(), "TERM": "xterm", **(env_extra or {})}
    env.pop("NO_COLOR", None) if "NO_COLOR" not in (env_extra or {}) else None
    env.pop("FORCE_COLOR", None) if "FORCE_COLOR" not in (env_extra or {}) else None
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [*seqdedup_command(), *args], stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=env
    )
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the terminal closed
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert proc.wait(timeout=60) == 0
    return out


def on_pipes(args: list[str], env_extra: dict[str, str] | None = None):
    env = {**user_env(), "TERM": "xterm", **(env_extra or {})}
    for name in ("NO_COLOR", "FORCE_COLOR"):
        if name not in (env_extra or {}):
            env.pop(name, None)
    return subprocess.run([*seqdedup_command(), *args], capture_output=True, env=env, timeout=60)


@pytest.fixture
def log(tmp_path: Path) -> str:
    path = tmp_path / "c.log"
    path.write_bytes(b"a\nb\na\nb\nc\n")
    return str(path)


def test_a_terminal_gets_colour(log):
    out = on_terminal(["-w", "2", "-a", "-e", log])
    assert b"\x1b[33m[DUPLICATE: Lines 3-4" in out  # the marker
    assert b"\x1b[2mEXPLAIN: Lines 3-4" in out  # the explanation
    assert ESC + b"1m" in out and b"Metric" in out  # the table, bold headers
    folded = on_terminal(["-q", "-w", "2", "--fold", log])
    assert b"\x1b[36m[FOLDED: lines 3-4 " in folded


def test_pipes_get_none_by_default(log):
    for args in (["-w", "2", "-a", "-e", log], ["-w", "2", "--fold", "--top", "3", log]):
        done = on_pipes(args)
        assert done.returncode == 0 and ESC not in done.stdout and ESC not in done.stderr
        assert b"[" in done.stdout  # (the markers and lines are there, plain)


def test_no_color_and_force_color(log):
    assert ESC not in on_terminal(["-w", "2", "-a", "-e", log], {"NO_COLOR": "1"})
    forced = on_pipes(["-w", "2", "-a", "-e", log], {"FORCE_COLOR": "1"})
    assert b"\x1b[33m[DUPLICATE" in forced.stdout and b"\x1b[2mEXPLAIN" in forced.stderr


def test_the_option_wins_over_the_environment(log):
    always = on_pipes(["--color", "always", "-w", "2", "-a", log], {"NO_COLOR": "1"})
    assert b"\x1b[33m[DUPLICATE" in always.stdout and ESC in always.stderr
    never = on_terminal(["--color", "never", "-w", "2", "-a", "-e", log], {"FORCE_COLOR": "1"})
    assert ESC not in never
    json_stats = on_terminal(["--stats-format", "json", "-w", "2", log])
    assert ESC not in json_stats  # JSON is for programs: never coloured
    bad = on_pipes(["--color", "sometimes", log])
    assert bad.returncode == 1 and bad.stdout == b"" and bad.stderr.count(b"\n") == 1
