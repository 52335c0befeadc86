"""Two builds of seqdedup side by side: the CPU of `seqdedup -q -w W FILE > OUT` under
each, interleaved (A B A B ...), medians of K, on the benchmark corpora; the outputs
must be equal. For a change to the engine: install the earlier build in a venv of its
own and name both commands.

    python benchmarks/bench_builds.py OLD_SEQDEDUP NEW_SEQDEDUP [--lines N] [--runs K]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpora import build, child_cpu  # type: ignore[import-not-found]  # noqa: E402

WIDTHS = (1, 10)


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        print(f"{'corpus':16} {'W':>3} {'old s':>7} {'new s':>7} {'new/old':>8}")
        for title, path in build(folder, args.lines, debian=True):
            for width in WIDTHS:
                plain = ["-q", "-w", str(width), str(path)]
                commands = [[args.old, *plain], [args.new, *plain]]
                outs = [folder / "old.out", folder / "new.out"]
                for command, out in zip(commands, outs, strict=True):
                    child_cpu(command, out)  # (warm the page cache)
                if outs[0].read_bytes() != outs[1].read_bytes():
                    raise SystemExit(f"{title}, W={width}: the outputs differ")
                times: tuple[list[float], list[float]] = ([], [])
                for _ in range(args.runs):
                    for command, out, got in zip(commands, outs, times, strict=True):
                        got.append(child_cpu(command, out))
                old, new = statistics.median(times[0]), statistics.median(times[1])
                print(f"{title:16} {width:3} {old:7.3f} {new:7.3f} {new / old:7.2f}x")


if __name__ == "__main__":
    main()
