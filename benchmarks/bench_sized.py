"""The rule with a minimum size (`-w auto`, `--min-bytes B`) against fixed window sizes,
in one run:

- bytes removed, as a share of the input, by `-w W` (W = 2, 3, 5, 10) and by
  `--min-bytes B` at W = 1 (B = 64 .. 320), on every corpus raw and with
  `--normalize all`: the generated log, man pages, the standard library, and the real
  logs of ``--logs DIR`` (one file per system, e.g. loghub's samples); the "auto - best W"
  column is what the default B removes beyond the best fixed W >= 2 (points of input);
- planted blocks: a log of distinct ~100-byte records with blocks of 2 to 200 such
  records planted twice, far apart; how many planted copies `-w auto` removes whole and
  how many distinct records it removes (should be: all, and none);
- CPU of `--min-bytes 160 -w 1` against `-w 2` (median of K interleaved pairs), and the
  peak memory of both on the generated log (per record, over a one-line run's).

    python benchmarks/bench_sized.py [--lines N] [--runs K] [--logs DIR]
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpora import build, child_cpu  # type: ignore[import-not-found]  # noqa: E402

SEQDEDUP = str(Path(sys.executable).parent / "seqdedup")
WIDTHS = (2, 3, 5, 10)
SIZES = (32, 48, 64, 96, 128, 160, 240)
AUTO = 64


def removed_share(path: Path, options: list[str]) -> float:
    """Percent of the input's bytes that `seqdedup -q OPTIONS FILE` removes."""
    out = subprocess.run(
        [SEQDEDUP, "-q", *options, str(path)], capture_output=True, check=True
    ).stdout
    size = path.stat().st_size
    return 100.0 * (size - len(out)) / size if size else 0.0


def share_rows(corpora: list[tuple[str, Path]]) -> list[str]:
    header = " | ".join(
        ["corpus", "keys", *(f"-w {w}" for w in WIDTHS), *(f"B={b}" for b in SIZES)]
    )
    rows = [f"| {header} | auto - best W |", "|" + "---|" * (3 + len(WIDTHS) + len(SIZES))]
    for name, path in corpora:
        for keys in ([], ["--normalize", "all"]):
            fixed = [removed_share(path, ["-w", str(w), *keys]) for w in WIDTHS]
            sized = [removed_share(path, ["-w", "1", "--min-bytes", str(b), *keys]) for b in SIZES]
            auto = sized[SIZES.index(AUTO)]
            cells = [name, "normalize all" if keys else "raw"]
            cells += [f"{v:.1f}" for v in fixed + sized]
            rows.append(f"| {' | '.join(cells)} | {auto - max(fixed):+.1f} |")
    return rows


def planted(folder: Path, rng: random.Random) -> list[str]:
    """Blocks of 2 to 200 distinct ~100-byte records, each planted twice far apart."""

    def record(tag: str) -> str:
        return f"{tag} " + "".join(rng.choice("abcdefghij ") for _ in range(95))

    blocks = [[record(f"block{b}-{k}") for k in range(n)] for b, n in enumerate(range(2, 201, 6))]
    lines: list[str] = []
    for copy in range(2):
        for b, block in enumerate(blocks):
            lines += [record(f"noise{copy}-{b}-{k}") for k in range(50)]
            lines += block
    path = folder / "planted.log"
    path.write_text("".join(line + "\n" for line in lines))
    kept = subprocess.run(
        [SEQDEDUP, "-q", "-w", "auto", str(path)], capture_output=True, check=True, text=True
    ).stdout.splitlines()
    kept_set = set(kept)
    whole = sum(
        1
        for block in blocks
        if kept.count(block[0]) == 1 and all(line in kept_set for line in block)
    )
    noise_lost = sum(1 for line in lines if line.startswith("noise") and line not in kept_set)
    copies_removed = len(lines) - len(kept)
    return [
        f"planted: {len(blocks)} blocks of 2-200 records, each twice; {whole} shown once whole, "
        f"{copies_removed:,} records removed (the planted copies hold "
        f"{sum(map(len, blocks)):,}), {noise_lost} distinct records removed"
    ]


def peak_kib(command: list[str]) -> int:
    """The peak resident memory of one run (KiB), run in a child of its own."""
    code = (
        "import resource, subprocess, sys; subprocess.run(sys.argv[1:], "
        "stdout=subprocess.DEVNULL, check=True); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    out = subprocess.run([sys.executable, "-c", code, *command], capture_output=True, text=True)
    return int(out.stdout.strip())


def speed_rows(path: Path, runs: int) -> list[str]:
    base, sized = (
        [SEQDEDUP, "-q", "-w", "2", str(path)],
        [SEQDEDUP, "-q", "-w", "1", "--min-bytes", str(AUTO), str(path)],
    )
    child_cpu(base)
    ratios, times = [], []
    for _ in range(runs):
        b, s = child_cpu(base), child_cpu(sized)
        ratios.append(s / b)
        times.append((b, s))
    records = sum(1 for _ in path.open("rb"))
    one = path.parent / "one.log"
    one.write_text("x\n")
    rows = [
        f"CPU --min-bytes {AUTO} -w 1 / -w 2: {statistics.median(ratios):.2f} (median of {runs}; "
        f"-w 2 {statistics.median(t[0] for t in times):.2f} s, sized "
        f"{statistics.median(t[1] for t in times):.2f} s, {records:,} records)"
    ]
    for name, command in (("-w 2", base), (f"--min-bytes {AUTO}", sized)):
        command_one = [*command[:-1], str(one)]
        grown = peak_kib(command) - peak_kib(command_one)
        rows.append(f"memory {name}: {1024 * grown / records:.0f} bytes per record")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--logs", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        corpora = build(folder, args.lines)
        if args.logs is not None:
            corpora += [(p.stem, p) for p in sorted(args.logs.glob("*.log"))]
        lines = share_rows(corpora)
        lines += planted(folder, random.Random(1))
        lines += speed_rows(corpora[0][1], args.runs)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
