"""The plain run beside a minimal C program of the same rule (benchmarks/yardstick.c:
the same 128-bit key hashes and rolling fingerprints modulo 2^61 - 1, one table, one
pass, one write), compiled here with the system's compiler. For each corpus and W, the
two outputs must be equal; then the CPU of `seqdedup -q -w W FILE > OUT` and of
`yardstick W FILE > OUT`, interleaved, medians of K (children's user + system time).

    python benchmarks/bench_yardstick.py [--lines N] [--runs K]
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpora import arguments, build, child_cpu  # type: ignore[import-not-found]  # noqa: E402

WIDTHS = (1, 3, 10)


def compiled(folder: Path) -> Path:
    """yardstick.c built with the system's compiler ($CC, else cc), -O2."""
    compiler = os.environ.get("CC") or shutil.which("cc") or "gcc"
    program = folder / "yardstick"
    subprocess.run([compiler, "-O2", "-o", str(program), str(HERE / "yardstick.c")], check=True)
    return program


def main() -> None:
    args = arguments(__doc__)
    seqdedup = str(Path(sys.executable).parent / "seqdedup")
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        yardstick = compiled(folder)
        empty = folder / "empty.txt"
        empty.write_bytes(b"")
        # seqdedup's start-up (the interpreter, its imports): its CPU on an empty file
        start = statistics.median(
            child_cpu([seqdedup, "-q", str(empty)]) for _ in range(max(args.runs, 11))
        )
        print(f"seqdedup's start-up: {start:.3f} s (the last column leaves it out)")
        head = f"{'corpus':28} {'W':>3} {'seqdedup':>9} {'yardstick':>10} {'ratio':>7}"
        print(f"{head} {'without start-up':>17}")
        for title, path in build(folder, args.lines, debian=True):
            for width in WIDTHS:
                ours = [seqdedup, "-q", "-w", str(width), str(path)]
                theirs = [str(yardstick), str(width), str(path)]
                a, b = folder / "a.out", folder / "b.out"
                child_cpu(ours, a)
                child_cpu(theirs, b)
                if a.read_bytes() != b.read_bytes():
                    raise SystemExit(f"{title}, W={width}: the outputs differ")
                times: tuple[list[float], list[float]] = ([], [])
                for _ in range(args.runs):
                    times[0].append(child_cpu(ours, a))
                    times[1].append(child_cpu(theirs, b))
                ours_s, theirs_s = statistics.median(times[0]), statistics.median(times[1])
                print(
                    f"{title:28} {width:3} {ours_s:9.3f} {theirs_s:10.3f} "
                    f"{ours_s / theirs_s:6.2f}x {(ours_s - start) / theirs_s:16.2f}x"
                )


if __name__ == "__main__":
    main()
