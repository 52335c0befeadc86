"""Input shapes that were quadratic, measured as they grow, in one run: a log of a few
distinct lines in random order (N lines, each one of 5 values), at N = 10,000 to
320,000, doubling:

- `seqdedup -q -w 1 -l L FILE` (a library saved afresh): each repeated piece of a run
  used to be found by walking the run from its first record;
- `Decisions(window=1, pieces=True)` fed the same keys (the Python face of
  `--annotate`'s pieces): every earlier occurrence of a key used to be a candidate.

CPU seconds per row (the command's as a child process; the call's in this process),
the median of K runs, and the ratio to the row above (2 is linear, 4 quadratic).

    python benchmarks/bench_shapes.py [--runs K] [--largest N]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpora import child_cpu  # type: ignore[import-not-found]  # noqa: E402

SEQDEDUP = str(Path(sys.executable).parent / "seqdedup")
VALUES = 5


def lines(count: int) -> list[bytes]:
    rng = random.Random(1)
    return [b"value %d" % rng.randrange(VALUES) for _ in range(count)]


def save_cpu(path: Path, folder: Path, runs: int) -> float:
    """`seqdedup -q -w 1 -l L` on ``path``, each run into a new library."""
    times = []
    for run in range(runs):
        library = folder / f"L{path.stem}-{run}"
        times.append(child_cpu([SEQDEDUP, "-q", "-w", "1", "-l", str(library), str(path)]))
    return statistics.median(times)


def pieces_cpu(keys: list[bytes], runs: int) -> float:
    from seqdedup import Decisions

    times = []
    for _ in range(runs):
        start = time.process_time()
        rule = Decisions(1, pieces=True)
        for at in range(0, len(keys), 4096):
            rule.feed(keys[at : at + 4096])
        rule.finish()
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--largest", type=int, default=320_000)
    args = parser.parse_args()
    sizes = [10_000]
    while sizes[-1] * 2 <= args.largest:
        sizes.append(sizes[-1] * 2)
    print(f"{VALUES} distinct lines in random order; CPU s, median of {args.runs}\n")
    print("| lines | `-q -w 1 -l L` | x | `Decisions(1, pieces=True)` | x |")
    print("|---|---|---|---|---|")
    before: tuple[float, float] | None = None
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        for size in sizes:
            keys = lines(size)
            path = folder / f"{size}.log"
            path.write_bytes(b"\n".join(keys) + b"\n")
            now = (save_cpu(path, folder, args.runs), pieces_cpu(keys, args.runs))
            ratios = [
                f"{a / b:.2f}" if before and b else ""
                for a, b in zip(now, before or now, strict=True)
            ]
            print(f"| {size:,} | {now[0]:.2f} | {ratios[0]} | {now[1]:.2f} | {ratios[1]} |")
            before = now


if __name__ == "__main__":
    main()
