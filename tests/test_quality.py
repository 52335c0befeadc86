"""The code stays ruff-clean and strictly typed: checked as part of the suite."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _tool(name: str) -> str:
    local = Path(sys.executable).parent / name
    found = str(local) if local.exists() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[dev]'")
    return found


def test_ruff_clean():
    p = subprocess.run(
        [_tool("ruff"), "check", "src", "tests", "benchmarks", "tools"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stdout + p.stderr


def test_mypy_strict():
    p = subprocess.run([_tool("mypy")], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr


def test_no_hypothesis_example_is_judged_by_its_duration():
    """Every run draws the same examples and none fails for taking long: the loaded
    profile has no deadline and is derandomised, and no test sets a deadline of its own
    (a busy host would otherwise decide the verdict)."""
    import ast

    from hypothesis import settings

    from conftest import EXPLORE

    assert settings.default.deadline is None
    assert settings.default.derandomize or EXPLORE
    timed = [
        f"{path.name}:{node.lineno}"
        for path in sorted((ROOT / "tests").glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.keyword)
        and node.arg == "deadline"
        and ast.unparse(node.value) != "None"
    ]
    assert not timed, timed
