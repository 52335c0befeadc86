"""The performance targets that are not one option beside the plain run, each as CPU
(user + system of the child) in one run of this script, interleaved, medians of K:

- statistics shown: the marginal CPU per record of `seqdedup -w 10 FILE` against
  `seqdedup -q -w 10 FILE` (between N and 4N lines of the generated log, so that the
  fixed part is apart), and the fixed part;
- start-up: `seqdedup -q` on one line against `python -c pass`, in a fresh venv made
  here (the project installed into it without its dependencies: a one-line `-q` run
  imports none of them);
- standard input from a pipe against the same named file (`-q -w 10 -M`; the writer is
  this script, so its CPU is apart);
- 1,000,000 records each in its own stream against the same records in 4 streams;
- loading a library of 10,000,000 windows (`-r DIR` on an empty input, against the
  same run without `-r`).

    python benchmarks/bench_targets.py [--lines N] [--runs K]
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from corpora import arguments, child_cpu  # type: ignore[import-not-found]  # noqa: E402

from genlog import log_lines  # type: ignore[import-not-found]  # noqa: E402

SEQDEDUP = [str(Path(sys.executable).parent / "seqdedup")]  # (the console script)
LIBRARY_LINES = 10_000_000  # records (and about as many windows) in the library


def medians(commands: list[list[str]], runs: int) -> list[float]:
    """Each command's median CPU, the commands run in turn ``runs`` times."""
    times: list[list[float]] = [[] for _ in commands]
    for _ in range(runs):
        for k, command in enumerate(commands):
            times[k].append(child_cpu(command))
    return [statistics.median(t) for t in times]


def piped_cpu(command: list[str], path: Path) -> float:
    """The child's CPU reading ``path`` from a pipe this process writes."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL) as child:
        assert child.stdin is not None
        with path.open("rb") as source:
            while block := source.read(1 << 20):
                child.stdin.write(block)
        child.stdin.close()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def statistics_shown(folder: Path, lines: int, runs: int) -> tuple[float, float, float]:
    """CPU per record with the statistics shown and with -q, and the fixed part."""
    small, large = folder / "small.log", folder / "large.log"
    small.write_text("".join(line + "\n" for line in log_lines(lines)))
    large.write_text("".join(line + "\n" for line in log_lines(4 * lines)))
    commands = [
        [*SEQDEDUP, *quiet, "-w", "10", str(path)]
        for path in (small, large)
        for quiet in ([], ["-q"])
    ]
    shown_small, quiet_small, shown_large, quiet_large = medians(commands, runs)
    per_shown = (shown_large - shown_small) / (3 * lines)
    per_quiet = (quiet_large - quiet_small) / (3 * lines)
    fixed = (shown_small - per_shown * lines) - (quiet_small - per_quiet * lines)
    return per_shown, per_quiet, fixed


def start_up(folder: Path, runs: int) -> tuple[float, float]:
    """One line through ``seqdedup -q`` and ``python -c pass``, a fresh venv's."""
    fresh = folder / "venv"
    venv.create(fresh, with_pip=True)
    python = fresh / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", str(ROOT)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    line = folder / "one.log"
    line.write_text("a\n")
    script = str(fresh / "bin" / "seqdedup")
    # (the one line from a pipe: sh's and printf's CPU in both commands)
    pipe = f"printf 'a\\n' | {script} -q"
    bare = f"printf 'a\\n' | {python} -c pass"
    run, base = medians([["sh", "-c", pipe], ["sh", "-c", bare]], runs)
    return run, base


def pipe_or_file(folder: Path, lines: int, runs: int) -> None:
    path = folder / "piped.log"
    path.write_text("".join(line + "\n" for line in log_lines(lines)))
    command = [*SEQDEDUP, "-q", "-w", "10", "-M"]
    piped, named = [], []
    for _ in range(runs):
        piped.append(piped_cpu(command, path))
        named.append(child_cpu([*command, str(path)]))
    ratio = statistics.median(piped) / statistics.median(named)
    print(
        f"pipe: {statistics.median(piped):.3f} s against {statistics.median(named):.3f} s "
        f"for the named file ({ratio:.2f}x)"
    )


def streams(folder: Path, runs: int) -> tuple[float, float]:
    """1,000,000 records each in its own stream, and in 4."""
    own, four = folder / "own.log", folder / "four.log"
    values = [(k * 7919) % 51 for k in range(1_000_000)]
    own.write_text("".join(f"s{k} value {v}\n" for k, v in enumerate(values)))
    four.write_text("".join(f"s{k % 4} value {v}\n" for k, v in enumerate(values)))
    by = ["--stream-by", r"^\S+"]
    commands = [[*SEQDEDUP, "-q", "-w", "3", *by, str(path)] for path in (own, four)]
    each, shared = medians(commands, runs)
    return each, shared


def library_load(folder: Path, runs: int) -> None:
    source, empty, library = folder / "distinct.log", folder / "empty.log", folder / "lib"
    with source.open("w") as out:
        for k in range(LIBRARY_LINES):
            out.write(f"2026-11-26 request {k} served in {k % 997} ms\n")
    empty.write_text("")
    subprocess.run(
        [*SEQDEDUP, "-q", "-w", "10", "-l", str(library), str(source)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    source.unlink()
    base = [*SEQDEDUP, "-q", "-w", "10", str(empty)]
    loaded, plain = medians([[*base[:-1], "-r", str(library), str(empty)], base], runs)
    print(
        f"library of {LIBRARY_LINES - 9:,} windows: {loaded - plain:.2f} s of CPU to load "
        f"({loaded:.2f} s against {plain:.2f} s)"
    )


def main() -> None:
    options = arguments(__doc__ or "")
    folder = Path(tempfile.mkdtemp(prefix="seqdedup-targets-"))
    try:
        print(f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; medians of {options.runs}")
        shown, quiet, fixed = statistics_shown(folder, options.lines, options.runs)
        print(
            f"statistics shown: {shown * 1e9:.0f} ns a record against {quiet * 1e9:.0f} "
            f"ns with -q ({shown / quiet:.2f}x); fixed part {fixed * 1000:.0f} ms"
        )
        run, base = start_up(folder, max(options.runs, 11))
        print(f"start-up: {run * 1000:.0f} ms against {base * 1000:.0f} ms ({run / base:.2f}x)")
        pipe_or_file(folder, options.lines, options.runs)
        each, shared = streams(folder, max(3, options.runs // 2))
        print(
            f"1,000,000 streams: {each:.2f} s against {shared:.2f} s in 4 streams "
            f"({each / shared:.2f}x)"
        )
        library_load(folder, 3)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
