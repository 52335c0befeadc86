"""benchmarks/yardstick.c, the minimal C program bench_yardstick.py measures the engine
against: built here (under AddressSanitizer and UBSan where the compiler has them), it
writes exactly what `seqdedup -q -w W FILE` writes, or its figures would mean nothing."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import needs, run_in_process

ROOT = Path(__file__).resolve().parent.parent
COMPILER = shutil.which("cc") or shutil.which("gcc")


@pytest.fixture(scope="module")
def yardstick(tmp_path_factory: pytest.TempPathFactory) -> Path:
    program = tmp_path_factory.mktemp("yardstick") / "yardstick"
    source = str(ROOT / "benchmarks" / "yardstick.c")
    base = [str(COMPILER), "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-o", str(program), source]
    checked = subprocess.run([*base, "-fsanitize=address,undefined"], capture_output=True)
    if checked.returncode != 0:  # (a compiler without the sanitizers)
        subprocess.run(base, check=True)
    return program


def inputs(tmp_path: Path) -> list[Path]:
    rng = random.Random(7)
    made = []
    for k, ending in enumerate((b"\n", b"")):
        lines = [rng.choice([b"a", b"b", b"c", b"", b"longer line " * 4]) for _ in range(3000)]
        path = tmp_path / f"random{k}.txt"
        path.write_bytes(b"\n".join(lines) + ending)
        made.append(path)
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    return [*made, empty, *sorted((ROOT / "examples").glob("*.log"))]


@needs(COMPILER is not None, "a C compiler")
@pytest.mark.parametrize("width", [1, 2, 3, 10])
def test_the_yardstick_writes_what_seqdedup_writes(yardstick, tmp_path, width):
    for path in inputs(tmp_path):
        theirs = subprocess.run([str(yardstick), str(width), str(path)], capture_output=True)
        assert theirs.returncode == 0 and theirs.stderr == b"", theirs.stderr.decode()
        ours = run_in_process(["-q", "-w", str(width), str(path)])  # (the command's main)
        assert ours.returncode == 0, ours.stderr
        assert theirs.stdout == ours.stdout, path.name
