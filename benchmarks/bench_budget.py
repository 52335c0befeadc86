"""Benchmark of --budget: per corpus and budget, tokens in and out, whether the budget is
met, the verbatim lines kept (all of them, checked), the round trip through
seqdedup-expand (sha256 of what it writes against the input's), and the CPU time beside
a plain --fold run of the same input in the same run (medians, interleaved).

    python benchmarks/bench_budget.py                  # man pages, stdlib, generated log
    python benchmarks/bench_budget.py --bpe tokenizer.json  # also the estimate's error

The corpora are the ones bench.py builds (the first --lines lines of the machine's man
pages and of the standard library, and a generated log). ``--bpe``: a tokenizer.json of
a real byte-pair vocabulary, read with the ``tokenizers`` package (no download), e.g.
the one inside the ``anthropic`` 0.38.0 wheel (``pip download --no-deps
anthropic==0.38.0`` and unzip ``anthropic/tokenizer.json``): the estimate's error on
each corpus, line by line.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench import CORPUS_CODE, generate

BUDGETS = ((2_000, ()), (8_000, ()), (32_000, ()), (8_000, ("--normalize", "all")))


def command(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def cpu_of(cmd: list[str], out: Path) -> float:
    """User + system CPU seconds of one run of ``cmd`` (its output to ``out``)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED",)}
    with out.open("wb") as sink:
        proc = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{cmd} failed")
    return usage.ru_utime + usage.ru_stime


def verbatim_kept(corpus: Path, reduced: Path, store: Path) -> tuple[int, int]:
    """How many verbatim lines' first occurrences the input has, and how many of them
    the reduced text holds as they are (walked with the store's markers)."""
    from seqdedup.budgetinput import Source, verbatim_flags
    from seqdedup.removed import RemovedStore

    source = Source(corpus.read_bytes(), b"\n")
    flags = verbatim_flags(source, ())
    firsts: dict[bytes, int] = {}
    for index in (k for k, flag in enumerate(flags) if flag):
        firsts.setdefault(source.record(index), index)
    text = reduced.read_bytes()
    opened = RemovedStore(store, create=False)
    known = opened.reduction(text)
    assert known is not None
    markers = known[1]
    kept: set[int] = set()
    at = 0
    for position, line in enumerate(text.split(b"\n")[:-1]):
        if position in markers:
            digest = markers[position]
            if digest is not None:
                at += Source(opened.data(digest), b"\n").count
        else:
            if line == source.record(at):
                kept.add(at)
            at += 1
    opened.close()
    wanted = set(firsts.values())
    return len(wanted), len(wanted & kept)


def budget_rows(name: str, corpus: Path, work: Path, repeat: int) -> None:
    digest = hashlib.sha256(corpus.read_bytes()).hexdigest()
    out = work / "out.txt"
    for budget, keys in BUDGETS:
        store = work / f"removed-{name}-{budget}-{len(keys)}.db"
        store.unlink(missing_ok=True)
        reduced = work / f"reduced-{name}-{budget}-{len(keys)}.txt"
        run = [command("seqdedup"), "--budget", str(budget), "-w", "10", *keys, "--keep-removed"]
        cpu_budget, cpu_fold = [], []
        for _ in range(repeat):  # interleaved: the machine's load falls on both alike
            cpu_budget.append(cpu_of([*run, str(store), str(corpus)], reduced))
            cpu_fold.append(
                cpu_of([command("seqdedup"), "-q", "-w", "10", "--fold", str(corpus)], out)
            )
        stats = subprocess.run(
            [*run, str(store), str(corpus)], capture_output=True, check=True
        ).stderr.decode()
        tokens = re.search(r"([\d,]+) tokens in, ([\d,]+) out, (NOT )?within", stats)
        assert tokens is not None, stats
        back = subprocess.run(
            [command("seqdedup-expand"), str(reduced), "--from", str(store)],
            capture_output=True,
            check=True,
        ).stdout
        exact = hashlib.sha256(back).hexdigest() == digest
        wanted, kept = verbatim_kept(corpus, reduced, store)
        ratio = statistics.median(cpu_budget) / statistics.median(cpu_fold)
        print(
            f"| {name} | {budget:,} {' '.join(keys)} | {tokens.group(1)} | {tokens.group(2)} | "
            f"{'no' if tokens.group(3) else 'yes'} | {kept:,} of {wanted:,} | "
            f"{'exact' if exact else 'DIFFERS'} | {statistics.median(cpu_budget):.2f} s | "
            f"{statistics.median(cpu_fold):.2f} s | {ratio:.1f}x |"
        )


def bpe_error(name: str, corpus: Path, tokenizer_file: Path) -> None:
    """The estimate against a real BPE vocabulary: each line, plus one for its break."""
    from tokenizers import Tokenizer

    from seqdedup.tokens import estimate_tokens

    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    lines = corpus.read_bytes()[:400_000].split(b"\n")
    real = sum(len(tokenizer.encode(line.decode("utf-8", "replace")).ids) + 1 for line in lines)
    estimate = sum(estimate_tokens(line) + 1 for line in lines)
    print(f"| {name} | {real:,} | {estimate:,} | {(estimate - real) / real:+.1%} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000, help="lines of each corpus")
    parser.add_argument("--repeat", type=int, default=3, help="runs per row (median)")
    parser.add_argument("--bpe", type=Path, default=None, metavar="TOKENIZER_JSON")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()))
    args = parser.parse_args()
    work = args.workdir
    corpora = []
    for kind in ("man", "stdlib"):
        path = work / f"seqdedup-bench-budget-{kind}-{args.lines}.txt"
        if not path.exists():
            subprocess.run(
                [sys.executable, "-c", CORPUS_CODE, kind, str(path), str(args.lines)], check=True
            )
        corpora.append((kind, path))
    log = work / f"seqdedup-bench-budget-log-{args.lines}.log"
    if not log.exists():
        generate(log, args.lines)
    corpora.append(("generated log", log))
    print(f"--budget at -w 10, {args.lines:,} lines per corpus, medians of {args.repeat}")
    print(
        "| corpus | budget | tokens in | tokens out | met | verbatim lines kept | round trip "
        "| --budget CPU | --fold CPU | ratio |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, path in corpora:
        budget_rows(name, path, work, args.repeat)
    if args.bpe is not None:
        print("| corpus (first 400 kB) | BPE tokens | estimate | error |")
        print("|---|---|---|---|")
        for name, path in corpora:
            bpe_error(name, path, args.bpe)


if __name__ == "__main__":
    main()
