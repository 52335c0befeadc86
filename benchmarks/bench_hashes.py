"""The record-hash candidates (benchmarks/hashes.c) on the benchmark corpora: the CPU
nanoseconds each takes per line (the best of K passes over every line), beside the
lines' mean length. docs/engine.md ("Identity") gives the figures and the choice.

    python benchmarks/bench_hashes.py [--lines N] [--runs K]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpora import arguments, build  # type: ignore[import-not-found]  # noqa: E402


def compiled(folder: Path) -> Path:
    """hashes.c built with the system's compiler, -O2 (with PCLMULQDQ where the
    compiler and the CPU have it, for the GF(2^128) candidate)."""
    compiler = os.environ.get("CC") or shutil.which("cc") or "gcc"
    program = folder / "hashes"
    flags = ["-O2"]
    if "pclmulqdq" in Path("/proc/cpuinfo").read_text(errors="replace"):
        flags += ["-mpclmul", "-msse2"]
    subprocess.run([compiler, *flags, "-o", str(program), str(HERE / "hashes.c")], check=True)
    return program


def main() -> None:
    args = arguments(__doc__)
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        program = compiled(folder)
        header = None
        for title, path in build(folder, args.lines, debian=True):
            data = path.read_bytes()
            lines = data.count(b"\n") or 1
            result = subprocess.run(
                [str(program), str(path), str(args.runs)],
                capture_output=True,
                text=True,
                check=True,
            )
            rows = [line.split() for line in result.stdout.splitlines()]
            if header is None:
                header = [row[0] for row in rows]
                print(f"{'corpus':16} {'bytes/line':>10} " + " ".join(f"{n:>9}" for n in header))
            cells = " ".join(f"{float(row[1]):9.1f}" for row in rows)
            print(f"{title:16} {len(data) / lines - 1:10.1f} {cells}")
        print("(CPU ns per line, best of the passes)")


if __name__ == "__main__":
    main()
