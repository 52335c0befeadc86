"""Every option's CPU beside the plain run, on every corpus: `seqdedup -q -w 10 FILE`
(the plain run) and the same with one option more, as whole commands, interleaved
(plain, option, plain, option, ...), the ratio of each pair's CPU (user + system of the
child), median of K pairs. The corpora: the generated 1,000,000-line log and real text
built from what the machine has (man pages, the Python standard library, Debian's
changelogs and copyright files, up to 1,000,000 lines each).

    python benchmarks/bench_options.py [--lines N] [--runs K]

A row whose option does not apply to a corpus is left empty (`--stream-by '^\\S+'`,
a stream per first word, is measured on the changelogs, against `--stream-by -q`).
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpora import arguments, build, child_cpu  # type: ignore[import-not-found]  # noqa: E402

STREAM = ["--stream-by", r"^\S+"]
# (row, the option's arguments, the corpora it runs on: None for all)
ROWS: list[tuple[str, list[str], set[str] | None]] = [
    ("--fold", ["--fold"], None),
    ("-l DIR (saved, fresh)", ["-l", "{fresh}"], None),
    ("-r DIR (the same file loaded)", ["-r", "{saved}"], None),
    ("--bypass twice", ["--bypass", "^DEBUG", "--bypass", "healthz"], None),
    ("--normalize all", ["--normalize", "all"], None),
    ("--annotate", ["--annotate"], None),
    ("--top 20", ["--top", "20"], None),
    ("statistics shown (no -q)", ["{shown}"], None),
    ("--stream-by, -q (vs the plain run)", STREAM, {"changelogs"}),
]
STREAM_ROWS: list[tuple[str, list[str]]] = [  # (against --stream-by -q)
    ("--stream-by --annotate", [*STREAM, "--annotate"]),
    ("--stream-by --fold", [*STREAM, "--fold"]),
    ("--stream-by --top 20", [*STREAM, "--top", "20"]),
]


def ratio(base: Callable[[], list[str]], option: Callable[[], list[str]], runs: int) -> float:
    """Median of the pairs' CPU ratios (option / base), interleaved."""
    child_cpu(base())
    child_cpu(option())
    return statistics.median(child_cpu(option()) / child_cpu(base()) for _ in range(runs))


def main() -> None:
    args = arguments(__doc__)
    seqdedup = str(Path(sys.executable).parent / "seqdedup")
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        texts = build(folder, args.lines, debian=True)
        table: dict[str, dict[str, float]] = {}
        fresh = folder / "fresh"  # (a library saved anew by each run of its row)
        for corpus, path in texts:
            saved = folder / f"{corpus}-library"
            save = [seqdedup, "-q", "-w", "10", "-l", str(saved), str(path)]
            subprocess.run(save, stdout=subprocess.DEVNULL, check=True)

            def command(extra: list[str], path: Path = path, saved: Path = saved) -> list[str]:
                shutil.rmtree(fresh, ignore_errors=True)
                filled = [
                    str(fresh) if a == "{fresh}" else str(saved) if a == "{saved}" else a
                    for a in extra
                ]
                quiet = [] if "{shown}" in filled else ["-q"]
                filled = [a for a in filled if a != "{shown}"]
                return [seqdedup, *quiet, "-w", "10", *filled, str(path)]

            for row, extra, only in ROWS:
                if only is None or corpus in only:
                    value = ratio(lambda: command([]), lambda e=extra: command(e), args.runs)
                    table.setdefault(row, {})[corpus] = value
            if corpus == "changelogs":
                for row, extra in STREAM_ROWS:
                    value = ratio(lambda: command(STREAM), lambda e=extra: command(e), args.runs)
                    table.setdefault(row, {})[corpus] = value
        names = [corpus for corpus, _ in texts]
        print("| option (CPU ratio) | " + " | ".join(names) + " |")
        print("|---|" + "---|" * len(names))
        for row, values in table.items():
            cells = [f"{values[n]:.2f}x" if n in values else "" for n in names]
            print(f"| `{row}` | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
