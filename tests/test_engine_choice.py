"""One engine object chosen once (``seqdedup.engine.choice``): the Python engine never
loads compiled code, and both engines expose the same names."""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from seqdedup.base.engine import Engine
from seqdedup.engine.choice import chosen_engine
from seqdedup.engine.pyengine import PYTHON, PythonEngine

from conftest import every_engine, kernel_built

ROOT = Path(__file__).resolve().parent.parent

# Every feature that asks the engine for something, on the command line: filters (whole
# batches scanned with numpy where it is there), normalisation, streams, fold, a library
# saved and read, the budget, diff and its budget, --suggest-window.
RUNS = [
    ["--track", "ERROR|error", "--bypass", "^INFO", "-w", "2", "{log}"],
    ["--normalize", "all", "-w", "2", "--annotate", "{log}"],
    ["--stream-by", r"^\S+ \S+ (\S+)", "-w", "2", "--fold", "{log}"],
    ["--stream-by", r"^\S+ \S+ (\S+)", "-w", "2", "--annotate", "{log}"],
    ["--fold", "-w", "1", "--top", "5", "{log}"],
    ["-w", "auto", "{log}"],
    ["-w", "2", "-q", "-l", "{lib}", "{log}"],
    ["-w", "2", "-r", "{lib}", "{log}"],
    ["--budget", "1k", "{log}"],
    ["--suggest-window", "{log}"],
    ["diff", "--normalize", "all", "{good}", "{log}"],
    ["diff", "--budget", "1k", "--stream-by", r"^\S+ \S+ (\S+)", "{good}", "{log}"],
]

SCRIPT = """
import json, sys
sys.modules["seqdedup._kernel"] = None  # (any import of the kernel fails from here on)
from seqdedup.cli.seqdedup import main
import seqdedup.engine.choice as choice
assert choice.chosen_engine().name == "python"
for argv in json.loads(sys.argv[1]):
    status = main(argv, stdout=open("/dev/null", "wb"))
    print("status", status, argv[0], file=sys.stderr)
assert sys.modules["seqdedup._kernel"] is None
"""


def test_a_run_on_the_python_engine_never_imports_the_kernel(tmp_path):
    """Under SEQDEDUP_ENGINE=python, with the kernel made unimportable in the process,
    every feature runs to its normal end (0, or 1 where diff finds changes): nothing on
    that engine's path reaches for compiled code (``main``'s status printed last: the
    process did not stop on an import error first)."""
    pytest.importorskip("numpy")  # (the filters' whole-batch scan: numpy's path)
    logs = sorted((ROOT / "tests" / "data" / "loghub").glob("*_2k.log"))
    log = tmp_path / "two.log"  # (4,000 lines: a filters' batch scanned whole)
    log.write_bytes(logs[4].read_bytes() + logs[5].read_bytes())  # Linux, OpenSSH
    runs = [[a.format(log=log, lib=tmp_path / "lib", good=logs[4]) for a in argv] for argv in RUNS]
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(runs)],
        env={**os.environ, "SEQDEDUP_ENGINE": "python"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    statuses = re.findall(r"^status (\d+) (\S+)$", done.stderr, flags=re.MULTILINE)
    # (each run to its end: 0, or 1 where diff finds changes)
    assert statuses == [("1" if a[0] == "diff" else "0", a[0]) for a in runs], done.stderr


def _names(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")}


def test_both_engines_have_every_name_of_the_protocol():
    """The Engine protocol's names are each engine's (mypy checks their types; this, that
    an engine made at run time has them all)."""
    wanted = {
        name
        for name, member in inspect.getmembers(Engine)
        if not name.startswith("_") and (callable(member) or isinstance(member, property))
    }
    assert {"record_bounds", "gather", "literal_hits", "chains", "kernel"} <= wanted
    for engine in every_engine():
        missing = [name for name in wanted if not hasattr(engine, name)]
        assert not missing, (engine.name, missing)
    assert PYTHON.kernel is None and PYTHON.literal_mask is None
    assert isinstance(PYTHON, PythonEngine)


@pytest.mark.skipif(not kernel_built(), reason="the compiled kernel is not installed")
def test_the_engine_is_the_one_the_environment_names(monkeypatch):
    monkeypatch.setenv("SEQDEDUP_ENGINE", "python")
    assert chosen_engine() is PYTHON
    monkeypatch.setenv("SEQDEDUP_ENGINE", "c")
    compiled_engine = chosen_engine()
    assert compiled_engine.name == "c" and compiled_engine.kernel is compiled_engine
    monkeypatch.delenv("SEQDEDUP_ENGINE")
    assert chosen_engine() is compiled_engine  # (made once)


def test_the_timestamp_bit_is_the_normalising_classes_one():
    from seqdedup.config.normalize import TIMESTAMP
    from seqdedup.engine import choice

    assert choice.TIMESTAMP == TIMESTAMP
