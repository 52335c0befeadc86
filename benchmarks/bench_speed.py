"""The speed table in one run: each option's CPU beside the plain run on the man pages,
Debian's changelogs and the generated log, the fixed costs, and the plain run beside
the C yardstick, each with its target, on this machine and its load now.

Each ratio is the CPU (user + system of the child) of whole commands, interleaved,
median of K pairs, in this one run (a ratio is what compares across machines and
loads; an absolute time is not):

- an option: `seqdedup -q -w 10 OPTION FILE` against `seqdedup -q -w 10 FILE`
  (`--stream-by '^\\S+'`, a stream per first word, on the changelogs only);
- statistics shown: the CPU per record of `seqdedup -w 10` against `-q` (between N and
  4N lines of the generated log: the fixed part apart);
- 1,000,000 records each in its own stream against the same records in 4;
- ``-w auto`` (a minimum size) against ``-w 2``, both ``-q``;
- start-up: one line through `seqdedup -q` against `python -c pass`, in a fresh venv;
- the plain run (`-w 1` and `-w 10`) against benchmarks/yardstick.c (equal output);
- `--budget 8k` against `--fold` (`-w 10`).

    python benchmarks/bench_speed.py [--lines N] [--runs K]
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_options import ratio  # type: ignore[import-not-found]  # noqa: E402
from bench_targets import start_up, statistics_shown, streams  # type: ignore[import-not-found]  # noqa: E402
from bench_yardstick import compiled  # type: ignore[import-not-found]  # noqa: E402
from corpora import arguments, build, child_cpu  # type: ignore[import-not-found]  # noqa: E402

SEQDEDUP = str(Path(sys.executable).parent / "seqdedup")
CORPORA = ("man pages", "changelogs", "generated log")
STREAM = ["--stream-by", r"^\S+"]
# (row, the run's own arguments, the option's, its target, the corpora it runs on)
OPTIONS: list[tuple[str, list[str], list[str], float, tuple[str, ...]]] = [
    ("`--fold`", [], ["--fold"], 1.3, CORPORA),
    ("`-l DIR` (save a library, fresh)", [], ["-l", "{fresh}"], 1.5, CORPORA),
    ("`--annotate`", [], ["--annotate"], 1.2, CORPORA),
    ("`--top 20`", [], ["--top", "20"], 1.2, CORPORA),
    ("`--normalize all`", [], ["--normalize", "all"], 1.5, CORPORA),
    ("`--stream-by '^\\S+'`", [], STREAM, 1.3, ("changelogs",)),
    (
        "`--stream-by` with `--annotate` (against `--stream-by`)",
        STREAM,
        ["--annotate"],
        1.5,
        ("changelogs",),
    ),
    (
        "`--stream-by` with `--fold` (against `--stream-by`)",
        STREAM,
        ["--fold"],
        1.5,
        ("changelogs",),
    ),
]


def machine() -> str:
    """The processor, cores, Python and load, for the table's heading."""
    model = platform.processor() or platform.machine()
    with open("/proc/cpuinfo", encoding="utf-8") as info:
        for line in info:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    return (
        f"{time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores of {model}, "
        f"Python {platform.python_version()}, load average {load}"
    )


def pairs(command: Callable[[list[str]], list[str]], extra: list[str], runs: int) -> float:
    """The median CPU ratio of the command with ``extra`` over the command without."""
    return float(ratio(lambda: command([]), lambda: command(extra), runs))


def cell(value: float | None, target: float) -> str:
    return "" if value is None else f"{value:.2f}x" + ("" if value <= target else " ✗")


def option_rows(folder: Path, paths: dict[str, Path], runs: int) -> list[str]:
    rows = []
    fresh = folder / "fresh-library"
    for title, base, extra, target, where in OPTIONS:
        values: list[float | None] = []
        for corpus in CORPORA:
            if corpus not in where:
                values.append(None)
                continue

            def command(more: list[str], corpus: str = corpus, base: list[str] = base) -> list[str]:
                subprocess.run(["rm", "-rf", str(fresh)], check=True)
                filled = [str(fresh) if a == "{fresh}" else a for a in more]
                return [SEQDEDUP, "-q", "-w", "10", *base, *filled, str(paths[corpus])]

            values.append(pairs(command, extra, runs))
        cells = " | ".join(cell(v, target) for v in values)
        rows.append(f"| {title} | {cells} | {target}x |")
    return rows


def auto_row(paths: dict[str, Path], runs: int) -> str:
    """``-w auto`` (the rule with a minimum size) against ``-w 2``."""
    cells = []
    for corpus in CORPORA:

        def command(more: list[str], corpus: str = corpus) -> list[str]:
            width = more or ["-w", "2"]
            return [SEQDEDUP, "-q", *width, str(paths[corpus])]

        cells.append(cell(pairs(command, ["-w", "auto"], runs), 1.3))
    return f"| `-w auto` against `-w 2` | {' | '.join(cells)} | 1.3x |"


def yardstick_row(folder: Path, paths: dict[str, Path], runs: int) -> str:
    """The plain run against the C yardstick at W 1 / 10 (their outputs compared)."""
    program = compiled(folder)
    cells = []
    for corpus in CORPORA:
        found = []
        for width in (1, 10):
            ours = [SEQDEDUP, "-q", "-w", str(width), str(paths[corpus])]
            theirs = [str(program), str(width), str(paths[corpus])]
            a, b = folder / "a.out", folder / "b.out"
            child_cpu(ours, a)
            child_cpu(theirs, b)
            if a.read_bytes() != b.read_bytes():
                raise SystemExit(f"{corpus}, W={width}: the yardstick's output differs")
            found.append(
                statistics.median(child_cpu(ours, a) / child_cpu(theirs, b) for _ in range(runs))
            )
        cells.append(" / ".join(cell(value, 1.5) for value in found))
    return f"| the plain run against the C yardstick (W 1 / 10) | {' | '.join(cells)} | 1.5x |"


def budget_row(paths: dict[str, Path], runs: int) -> str:
    cells = []
    for corpus in CORPORA:
        budget = [SEQDEDUP, "-q", "--budget", "8k", str(paths[corpus])]
        fold = [SEQDEDUP, "-q", "-w", "10", "--fold", str(paths[corpus])]
        found = statistics.median(child_cpu(budget) / child_cpu(fold) for _ in range(runs))
        cells.append(cell(found, 3.0))
    return f"| `--budget 8k` against `--fold` | {' | '.join(cells)} | 3x |"


def main() -> None:
    args = arguments(__doc__ or "")
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        paths = dict(build(folder, args.lines, debian=True))
        missing = [corpus for corpus in CORPORA if corpus not in paths]
        if missing:
            raise SystemExit(f"this machine has no {', '.join(missing)}")
        print(machine())
        print(f"CPU ratios, medians of {args.runs} interleaved pairs, up to {args.lines:,} lines")
        print()
        print(f"| | {' | '.join(CORPORA)} | target |")
        print("|---|---|---|---|---|")
        for row in option_rows(folder, paths, args.runs):
            print(row, flush=True)
        print(auto_row(paths, args.runs), flush=True)
        shown, quiet, fixed = statistics_shown(folder, args.lines, args.runs)
        per = shown / quiet
        print(f"| statistics shown, per record against `-q` | | | {cell(per, 1.1)} | 1.1x |")
        each, four = streams(folder, max(3, args.runs // 2))
        print(f"| 1,000,000 streams against 4 | | | {cell(each / four, 2.0)} | 2x |")
        run, bare = start_up(folder, max(args.runs, 11))
        print(
            f"| start-up against `python -c pass` ({run * 1000:.0f} / {bare * 1000:.0f} ms) "
            f"| | | {cell(run / bare, 2.0)} | 2x |"
        )
        print(yardstick_row(folder, paths, args.runs), flush=True)
        print(budget_row(paths, args.runs))
        print()
        print(f"statistics' fixed part {fixed * 1000:.0f} ms; ✗: the target is missed")


if __name__ == "__main__":
    main()
