"""Benchmark: records/second and peak memory of seqdedup, beside awk '!seen[$0]++'.

Generates (once, cached) a realistic 1,000,000-line log and the same log as JSON lines
(see genlog.py), then runs the installed ``seqdedup`` command file -> file for W=1, 10
and 100, with options (key options on both logs, the log cut into four files), with the
pure-Python engine (SEQDEDUP_ENGINE=python), and awk and ``LC_ALL=C sort -u`` on the
same file, each as its own process: the median time of --repeat runs, and the largest
peak memory (maximum RSS, from wait4). Start-up is the median of 10 one-line runs.

    python benchmarks/bench.py                 # the table in the README
    python benchmarks/bench.py --stream 5000000  # also: stdin, default history, 5M records

Also prints the memory per distinct window: peak RSS on N all-distinct lines minus the
peak on 1,000 lines, divided by N; and, on real text built at run time from the
machine's own files (the section-1 man pages, the standard library's sources; nothing
committed), seqdedup beside awk and ``LC_ALL=C sort -u``, with a check that ``-w 1``
writes what awk writes.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GENLOG = Path(__file__).with_name("genlog.py")


def generate(
    path: Path, lines: int, seed: int = 1, trace_share: float = 0.30, json: bool = False
) -> None:
    """Write the log in a child process: ru_maxrss of every later child would include
    this process's own high-water mark (it survives fork and exec), so it stays small."""
    subprocess.run(
        [sys.executable, str(GENLOG), str(path), str(lines), str(seed), str(trace_share)]
        + (["json"] if json else []),
        check=True,
    )


def library_figures(workdir: Path, lines: int, out: Path) -> None:
    """Save and load times of a library holding ``lines`` new records."""
    import sqlite3
    from contextlib import closing

    log = workdir / f"seqdedup-bench-new-{lines}.log"
    if not log.exists():
        generate(log, lines, seed=3, trace_share=0.0)  # every line new
    library = workdir / "seqdedup-bench-library"
    plain, _ = measure([*seqdedup(), "-q", "-w", "10", str(log)], None, out)
    saves = []
    for _ in range(REPEAT):  # each save into a new library
        shutil.rmtree(library, ignore_errors=True)
        saves.append(
            measure_once(
                [*seqdedup(), "-q", "-w", "10", "-l", str(library), str(log)], None, out, None
            )
        )
    saving, save_peak = statistics.median(t for t, _ in saves), max(p for _, p in saves)
    with closing(sqlite3.connect(library / "seqdedup.sqlite")) as db:
        records, stored = db.execute(
            "SELECT SUM(length), SUM(LENGTH(records)) FROM sequences"
        ).fetchone()
    disk = sum(f.stat().st_size for f in library.iterdir())
    # The same log again: the library must not grow with what it already holds.
    again, _ = measure_once(
        [*seqdedup(), "-q", "-w", "10", "-l", str(library), str(log)], None, out, None
    )
    grown = sum(f.stat().st_size for f in library.iterdir()) - disk
    tiny = workdir / "seqdedup-bench-tiny.log"
    tiny.write_text("one\ntwo\n")
    base, _ = measure([*seqdedup(), "-q", "-w", "10", str(tiny)], None, out)
    loading, load_peak = measure(
        [*seqdedup(), "-q", "-w", "10", "-r", str(library), str(tiny)], None, out
    )
    print(
        f"library: a run over {lines:,} new lines takes {plain:.2f} s, "
        f"{saving:.2f} s with --library-dir (+{saving - plain:.2f} s, peak {save_peak:.0f} MB)"
    )
    print(
        f"library: holds {records:,} records; {disk / 1e6:.1f} MB on disk for "
        f"{log.stat().st_size / 1e6:.1f} MB of input ({stored / 1e6:.1f} MB of records)"
    )
    print(
        f"library: loading it takes {loading - base:.2f} s on top of a {base:.2f} s run "
        f"(peak {load_peak:.0f} MB)"
    )
    print(
        f"library: the same log again with --library-dir takes {again:.2f} s and adds "
        f"{grown / 1e6:.1f} MB"
    )


# Real text nobody here wrote, built at run time from what the machine has (nothing of
# it is committed): many short repeats, unlike the generated log.
CORPUS_CODE = """
import gzip, sys, sysconfig
from pathlib import Path
kind, target, limit = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
if kind == "man":
    files = sorted(Path("/usr/share/man/man1").glob("*.gz"))
    read = lambda f: gzip.open(f).read()
else:
    files = sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py"))
    read = lambda f: f.read_bytes()
written = 0
with target.open("wb") as out:
    for f in files:
        try:
            lines = read(f).splitlines(keepends=True)
        except OSError:
            continue
        lines = lines[: limit - written]
        out.write(b"".join(lines))
        written += len(lines)
        if written >= limit:
            break
"""
CORPORA = (
    ("man", "section-1 man pages (roff, decompressed)", 1_000_000),
    ("stdlib", "the Python standard library's .py files", 1_000_000),
)


def real_text_figures(workdir: Path, out: Path) -> None:
    """seqdedup beside mawk and sort -u on real corpora, with the same output as awk."""
    awk, sort = shutil.which("awk"), shutil.which("sort")
    for kind, title, limit in CORPORA:
        corpus = workdir / f"seqdedup-bench-real-{kind}-{limit}.txt"
        if not corpus.exists():
            subprocess.run(
                [sys.executable, "-c", CORPUS_CODE, kind, str(corpus), str(limit)], check=True
            )
        lines = count_lines(corpus)
        if lines < 100_000:
            print(f"real text: {title}: only {lines:,} lines on this machine, skipped")
            continue
        print(f"real text: {title}, {lines:,} lines")
        commands: list[tuple[str, list[str], dict[str, str] | None]] = [
            ("seqdedup -q -w 1", [*seqdedup(), "-q", "-w", "1", str(corpus)], None),
            ("seqdedup -q -w 10", [*seqdedup(), "-q", "-w", "10", str(corpus)], None),
            ("seqdedup -w 1, statistics shown", [*seqdedup(), "-w", "1", str(corpus)], None),
            (
                "seqdedup -q -w 10 --fold",
                [*seqdedup(), "-q", "-w", "10", "--fold", str(corpus)],
                None,
            ),
        ]
        if awk:
            commands.append(("awk '!seen[$0]++'", [awk, "!seen[$0]++", str(corpus)], None))
        if sort:
            commands.append(("LC_ALL=C sort -u", [sort, "-u", str(corpus)], {"LC_ALL": "C"}))
        # The outputs compared are kept as files and compared by filecmp: read into this
        # process they would raise its peak memory, which every later child inherits.
        kept = workdir / f"seqdedup-bench-real-{kind}.seqdedup.out"
        same = None
        for name, cmd, env in commands:
            seconds, peak = measure(cmd, None, out, env)
            if name == "seqdedup -q -w 1":
                shutil.copyfile(out, kept)
            elif name == "awk '!seen[$0]++'":
                same = filecmp.cmp(kept, out, shallow=False)
            print(f"  {name:36} {seconds:8.2f} s {lines / seconds:12,.0f} records/s {peak:6.0f} MB")
        if same is not None:
            print(f"  seqdedup -w 1 output equals awk's: {same}")


def seqdedup() -> list[str]:
    script = Path(sys.executable).parent / "seqdedup"
    return [str(script)] if script.exists() else [sys.executable, "-m", "seqdedup"]


REPEAT = 5


def measure(
    cmd: list[str], stdin_path: Path | None, out_path: Path, env_extra: dict[str, str] | None = None
) -> tuple[float, float]:
    """Run ``cmd`` REPEAT times; return (median seconds, largest peak RSS in MB)."""
    runs = [measure_once(cmd, stdin_path, out_path, env_extra) for _ in range(REPEAT)]
    return statistics.median(r[0] for r in runs), max(r[1] for r in runs)


def measure_once(
    cmd: list[str], stdin_path: Path | None, out_path: Path, env_extra: dict[str, str] | None
) -> tuple[float, float]:
    """Run ``cmd``; return (seconds, peak RSS in MB) of that process alone."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "SEQDEDUP_ENGINE")
    }
    env.update(env_extra or {})
    # Reports on stderr (--top) are not the benchmark's output: shown only on failure.
    with out_path.open("wb") as out, tempfile.TemporaryFile() as errors:
        stdin = stdin_path.open("rb") if stdin_path else subprocess.DEVNULL
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=stdin, stdout=out, stderr=errors, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if stdin_path:
            stdin.close()  # type: ignore[union-attr]
        errors.seek(0)
        message = errors.read().decode(errors="replace")
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} failed with {proc.returncode}: {message}")
    return elapsed, usage.ru_maxrss / 1024


def count_lines(path: Path) -> int:
    with path.open("rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument(
        "--stream",
        type=int,
        default=0,
        metavar="N",
        help="also run N records through stdin with the default history",
    )
    parser.add_argument(
        "--distinct",
        type=int,
        default=2_000_000,
        metavar="N",
        help="lines of all-distinct input for the memory-per-window figure",
    )
    parser.add_argument(
        "--library",
        type=int,
        default=1_000_000,
        metavar="N",
        help="new records saved to and loaded from a library (0: skip)",
    )
    parser.add_argument(
        "--no-real",
        dest="real",
        action="store_false",
        help="skip the real-text corpora (man pages, the standard library's sources)",
    )
    parser.add_argument(
        "--library-only",
        action="store_true",
        help="only the library figures (saving and loading --library N new records)",
    )
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--repeat", type=int, default=5, help="runs per row (median)")
    args = parser.parse_args()
    global REPEAT
    REPEAT = args.repeat

    log = args.workdir / f"seqdedup-bench-{args.lines}.log"
    if not log.exists():
        generate(log, args.lines)
    size_mb = log.stat().st_size / 1e6
    print(f"input: {log} ({args.lines:,} lines, {size_mb:.1f} MB)")
    parts = [str(args.workdir / f"seqdedup-bench-{args.lines}.part{k}.log") for k in range(4)]
    if not all(map(os.path.exists, parts)):  # the log as four files (in a child, as above)
        code = (
            "import sys; lines = open(sys.argv[1], 'rb').readlines(); n = len(lines); "
            "[open(p, 'wb').write(b''.join(lines[k * n // 4 : (k + 1) * n // 4])) "
            "for k, p in enumerate(sys.argv[2:])]"
        )
        subprocess.run([sys.executable, "-c", code, str(log), *parts], check=True)
    out = args.workdir / "seqdedup-bench.out"
    if args.library_only:
        library_figures(args.workdir, args.library, out)
        return
    rows = []
    for window in ("1", "10", "100", "auto"):
        cmd = [*seqdedup(), "-q", "-w", window, str(log)]
        seconds, peak = measure(cmd, None, out)
        rows.append((f"seqdedup -w {window}", seconds, peak, count_lines(out)))
    variants = [
        ("-w 10 --annotate", ["--annotate"]),
        ("-w 10 --top 20", ["--top", "20"]),
        ("-w 10 --fold", ["--fold"]),
        ("-w 10 --bypass x2 (^DEBUG, healthz)", ["--bypass", "^DEBUG", "--bypass", "healthz"]),
        ("-w 10 --skip-chars 24", ["--skip-chars", "24"]),
        ("-w 10 --hash-transform 'cut -c25-'", ["--hash-transform", "cut -c25-"]),
        ("-w 10 --normalize timestamp,uuid,hex", ["--normalize", "timestamp,uuid,hex"]),
        ("-w 10 --normalize all", ["--normalize", "all"]),
        ("-w 10 --mask 'request_id=\\w+'", ["--mask", r"request_id=\w+"]),
    ]
    for name, extra in variants:
        cmd = [*seqdedup(), "-q", "-w", "10", *extra, str(log)]
        seconds, peak = measure(cmd, None, out)
        rows.append((f"seqdedup {name}", seconds, peak, count_lines(out)))
    jsonl = args.workdir / f"seqdedup-bench-json-{args.lines}.log"
    if not jsonl.exists():  # the same log as JSON lines
        generate(jsonl, args.lines, json=True)
    for name, extra in [
        ("-w 10 on the JSON log", []),
        ("-w 10 --json-key msg (JSON log)", ["--json-key", "msg"]),
        (
            "-w 10 --json-ignore ts,request_id,trace_id",
            ["--json-ignore", "ts", "--json-ignore", "request_id", "--json-ignore", "trace_id"],
        ),
    ]:
        seconds, peak = measure([*seqdedup(), "-q", "-w", "10", *extra, str(jsonl)], None, out)
        rows.append((f"seqdedup {name}", seconds, peak, count_lines(out)))
    seconds, peak = measure([*seqdedup(), "-q", "-w", "10", *parts], None, out)
    rows.append(("seqdedup -w 10 on the log as 4 files", seconds, peak, count_lines(out)))
    merged = args.workdir / f"seqdedup-bench-interleaved-{args.lines}.log"
    if not merged.exists():  # four pods' lines, [pod-N] prefixed, in bursts of 1-3
        subprocess.run(
            [sys.executable, str(GENLOG), str(merged), str(args.lines), "1", "0.3", "interleaved"],
            check=True,
        )
    for name, extra in [
        ("-w 10 --mask (interleaved log)", ["--mask", r"^\[pod-\d+\] "]),
        ("-w 10 --stream-by (interleaved log)", ["--stream-by", r"^\[(pod-\d+)\] "]),
    ]:
        seconds, peak = measure([*seqdedup(), "-q", "-w", "10", *extra, str(merged)], None, out)
        rows.append((f"seqdedup {name}", seconds, peak, count_lines(out)))
    packed = args.workdir / f"seqdedup-bench-{args.lines}.log.gz"
    if not packed.exists():  # compressed input, read in-process and through zcat
        with log.open("rb") as plain, packed.open("wb") as target:
            subprocess.run(["gzip", "-1", "-c"], stdin=plain, stdout=target, check=True)
    seconds, peak = measure([*seqdedup(), "-q", "-w", "10", str(packed)], None, out)
    rows.append(("seqdedup -w 10 FILE.gz (gzip -1)", seconds, peak, count_lines(out)))
    pipeline = f"zcat {packed} | {' '.join(seqdedup())} -q -w 10 -M"
    seconds, peak = measure(["bash", "-c", pipeline], None, out)
    rows.append(("zcat FILE.gz | seqdedup -w 10 -M", seconds, peak, count_lines(out)))
    ab = args.workdir / f"seqdedup-bench-ab-{args.lines}.log"
    if not ab.exists():  # short repetitive records: one long run cut into many pieces
        # In a child, like generate(): this process's peak memory would show in every
        # later measurement (ru_maxrss survives fork and exec).
        code = (
            "import random, sys; rng = random.Random(5); n = int(sys.argv[2]); "
            "open(sys.argv[1], 'wb').write(b''.join(rng.choice((b'a\\n', b'b\\n')) "
            "for _ in range(n)))"
        )
        subprocess.run([sys.executable, "-c", code, str(ab), str(args.lines)], check=True)
    seconds, peak = measure([*seqdedup(), "-q", "-w", "12", str(ab)], None, out)
    rows.append((f"-w 12 on {args.lines:,} random a/b lines", seconds, peak, count_lines(out)))
    # With the statistics shown, attribution runs (the sequence count needs it): its
    # worst case, short pieces everywhere, and the log at -w 1.
    seconds, peak = measure([*seqdedup(), "-w", "12", str(ab)], None, out)
    rows.append(("the same, statistics shown (attribution)", seconds, peak, count_lines(out)))
    seconds, peak = measure([*seqdedup(), "-w", "1", str(log)], None, out)
    rows.append(("seqdedup -w 1, statistics shown", seconds, peak, count_lines(out)))
    for window in (1, 10):
        cmd = [*seqdedup(), "-q", "-w", str(window), str(log)]
        seconds, peak = measure(cmd, None, out, {"SEQDEDUP_ENGINE": "python"})
        rows.append((f"seqdedup -w {window}, Python engine", seconds, peak, count_lines(out)))
    awk = shutil.which("awk")
    if awk:
        seconds, peak = measure([awk, "!seen[$0]++", str(log)], None, out)
        rows.append(
            (
                f"awk '!seen[$0]++' ({Path(os.path.realpath(awk)).name})",
                seconds,
                peak,
                count_lines(out),
            )
        )
    sort = shutil.which("sort")
    if sort:
        env_c = {"LC_ALL": "C"}
        seconds, peak = measure([sort, "-u", str(log)], None, out, env_c)
        rows.append(("LC_ALL=C sort -u (unordered)", seconds, peak, count_lines(out)))
    small = args.workdir / "seqdedup-bench-100000.log"
    if not small.exists():
        generate(small, 100_000)
    seconds, peak = measure([*seqdedup(), "-q", "-w", "10", str(small)], None, out)
    print(f"100,000-line file, -w 10, whole process: {seconds:.3f} s (peak {peak:.0f} MB)")
    one = args.workdir / "seqdedup-bench-one.log"
    one.write_bytes(b"a\n")
    starts = sorted(measure_once([*seqdedup(), "-q"], one, out, None)[0] for _ in range(10))
    median_ms = statistics.median(starts) * 1000
    print(f"start-up: printf 'a\\n' | seqdedup -q, median of 10: {median_ms:.0f} ms")
    if args.distinct:
        # Memory per distinct window: N all-different lines against a 1,000-line baseline.
        # The baseline (100,000 lines) already loads numpy and takes the large-batch path.
        peaks = []
        sizes = (100_000, args.distinct)
        for n in sizes:
            unique = args.workdir / f"seqdedup-bench-unique-{n}.log"
            if not unique.exists():
                with unique.open("wb") as f:
                    for start in range(0, n, 100_000):
                        stop = min(n, start + 100_000)
                        f.write(b"".join(b"event %d\n" % i for i in range(start, stop)))
            peaks.append(measure([*seqdedup(), "-q", str(unique)], None, out)[1])
        per_window = (peaks[1] - peaks[0]) * 1024 * 1024 / (sizes[1] - sizes[0])
        print(
            f"memory per distinct window ({args.distinct:,} unique lines, named file): "
            f"{per_window:.0f} bytes (peak {peaks[1]:.0f} MB vs {peaks[0]:.0f} MB)"
        )
    if args.library:
        library_figures(args.workdir, args.library, out)
    if args.real:
        real_text_figures(args.workdir, out)
    if args.stream:
        stream = args.workdir / f"seqdedup-bench-stream-{args.stream}.log"
        if not stream.exists():
            generate(stream, args.stream, seed=2)
        seconds, peak = measure([*seqdedup(), "-q"], stream, out)
        rows.append((f"stdin, {args.stream:,} records, -w 10", seconds, peak, count_lines(out)))
        distinct = args.workdir / f"seqdedup-bench-unique-{args.stream}.log"
        if not distinct.exists():
            with distinct.open("wb") as f:
                for start in range(0, args.stream, 100_000):
                    stop = min(args.stream, start + 100_000)
                    f.write(b"".join(b"event %d\n" % i for i in range(start, stop)))
        seconds, peak = measure([*seqdedup(), "-q"], distinct, out)
        rows.append(
            (f"stdin, {args.stream:,} distinct lines, -w 10", seconds, peak, count_lines(out))
        )
    print(f"{'command':44} {'seconds':>8} {'records/s':>12} {'peak MB':>8} {'kept':>10}")
    for name, seconds, peak, kept in rows:
        n = args.stream if name.startswith("stdin") else args.lines
        print(f"{name:44} {seconds:8.2f} {n / seconds:12,.0f} {peak:8.0f} {kept:10,}")


if __name__ == "__main__":
    main()
