"""Real logs of eight systems (``tests/data/loghub``, with loghub's notice): the rule
exact against the oracle on each engine, and a reduction to a budget restored byte for
byte, on lines nobody here wrote (CRLF line ends, a CR inside a line, long lines)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from seqdedup.cli import expand as expand_cli

from conftest import ENGINES
from oracle import skipped_flags

LOGHUB = Path(__file__).parent / "data" / "loghub"
LOGS = sorted(LOGHUB.glob("*_2k.log"))
NAMES = [log.name.split("_")[0] for log in LOGS]


def test_every_log_is_here_with_its_templates_and_notice():
    assert len(LOGS) == 8
    for log in LOGS:
        templates = LOGHUB / "templates" / f"{log.name}_structured.csv"
        rows = templates.read_text(encoding="utf-8").splitlines()
        assert rows[0] == "LineId,EventId,EventTemplate" and len(rows) == 2001
        assert len(_records(log)[0]) == 2000
    assert "The above license notice shall be included" in (LOGHUB / "README.md").read_text()


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("log", LOGS, ids=NAMES)
@pytest.mark.parametrize("window", [1, 3])
def test_the_rule_is_the_oracles_on_a_real_log(log, window, engine, run_cli, monkeypatch):
    monkeypatch.setenv("SEQDEDUP_ENGINE", engine)
    done = run_cli(["-q", "-w", str(window), str(log)])
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout == _kept(log, window)


def _records(log: Path) -> tuple[list[bytes], bool]:
    """The log's records, and whether its last one ends with a line feed."""
    records = log.read_bytes().split(b"\n")
    if records[-1] == b"":
        return records[:-1], True
    return records, False


@cache
def _kept(log: Path, window: int) -> bytes:
    """What the oracle keeps of ``log`` (once per log and window: it is O(n^2 W)), each
    record with its line feed (the last one's only where the log has it)."""
    records, ended = _records(log)
    flags = skipped_flags(records, window)
    out = b"".join(r + b"\n" for r, skipped in zip(records, flags, strict=True) if not skipped)
    return out if ended or flags[-1] else out[:-1]


@pytest.mark.parametrize("log", LOGS, ids=NAMES)
def test_a_budget_on_a_real_log_restores_byte_for_byte(log, tmp_path, run_cli):
    store = tmp_path / "removed.db"
    done = run_cli(["-q", "--budget", "2000", "--keep-removed", str(store), str(log)])
    assert done.returncode == 0, done.stderr
    assert len(done.stdout) < log.stat().st_size // 4 and b"[sd:" in done.stdout
    reduced = tmp_path / "reduced.txt"
    reduced.write_bytes(done.stdout)
    out, err = _expand(str(reduced), "--from", str(store))
    assert (out, err) == (log.read_bytes(), "")


def _expand(*args: str) -> tuple[bytes, str]:
    import io

    out, err = io.BytesIO(), io.StringIO()
    status = expand_cli.main(list(args), io.BytesIO(), out, err)
    assert status == 0, err.getvalue()
    return out.getvalue(), err.getvalue()
