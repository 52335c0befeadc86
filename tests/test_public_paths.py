"""Every import path the documentation names works: the package face's names, the
public modules' ``__all__``, and each dotted ``seqdedup.…`` path or ``from seqdedup…
import …`` line of docs/python-api.md and docs/logging.md (paths that moved among the
packages included)."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = [DOCS / "python-api.md", DOCS / "logging.md", DOCS / "diff.md", DOCS / "llm-context.md"]


FILES = (".sqlite", ".db", ".log", ".json", ".html", ".toml", ".txt")  # (names of files)


def documented_paths() -> list[str]:
    """``module:name`` for each ``from M import a, b`` line and each backticked
    ``seqdedup.x.Y`` (the longest importable prefix is the module)."""
    found: set[str] = set()
    for page in PAGES:
        text = page.read_text()
        for module, names in re.findall(r"^from (seqdedup[\w.]*) import ([\w, ]+)$", text, re.M):
            found |= {f"{module}:{name.strip()}" for name in names.split(",")}
        dotted = re.findall(r"`(seqdedup(?:\.\w+)+)", text)
        found |= {f"dotted:{path}" for path in dotted if not path.endswith(FILES)}
    return sorted(found)


def resolve(path: str) -> object:
    module, _, name = path.partition(":")
    if module != "dotted":
        return getattr(importlib.import_module(module), name)
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):  # the longest prefix that is a module
        try:
            value: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            value = getattr(value, attribute)
        return value
    raise ModuleNotFoundError(name)


def test_the_pages_name_paths_at_all():
    paths = documented_paths()
    assert "seqdedup.api:process_stream" in paths
    assert "dotted:seqdedup.ledger.RunObserver" in paths


@pytest.mark.parametrize("path", documented_paths())
def test_each_documented_path_imports(path):
    assert resolve(path) is not None


@pytest.mark.parametrize(
    "module", ["seqdedup", "seqdedup.api", "seqdedup.logging", "seqdedup.diff"]
)
def test_each_public_modules_all_resolves(module):
    loaded = importlib.import_module(module)
    assert loaded.__all__
    for name in loaded.__all__:  # (a package's: its submodules, as `import *` loads them)
        value = getattr(loaded, name, None) or importlib.import_module(f"{module}.{name}")
        assert value is not None, (module, name)


def test_moved_paths_are_the_modules_themselves_in_a_fresh_process():
    """``seqdedup.errors`` and ``seqdedup.ledger`` are the moved modules (one object, so
    ``except seqdedup.errors.SeqdedupError`` catches what the run raises), loaded only
    when asked for."""
    program = (
        "import sys, seqdedup\n"
        "assert 'seqdedup.run.ledger' not in sys.modules\n"
        "import seqdedup.errors, seqdedup.base.errors, seqdedup.ledger, seqdedup.run.ledger\n"
        "assert seqdedup.errors is seqdedup.base.errors\n"
        "assert seqdedup.ledger is seqdedup.run.ledger\n"
        "from seqdedup.config import Config, FilterRule\n"
        "assert Config is seqdedup.Config\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr
