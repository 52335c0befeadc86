"""The README's recipes on real logs (tests/data/loghub): what each removes or finds.
Run by tests/test_recipes.py against the figures docs/quickstart.md shows, and by hand
(``python tests/recipes.py``) to print them."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

LOGHUB = Path(__file__).resolve().parent / "data" / "loghub"
LOGS = ["Hadoop", "Linux"]  # a job's log (as a CI job's) and a system's syslog


def seqdedup(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    command = [sys.executable, "-m", "seqdedup", *args]
    return subprocess.run(command, input=stdin, capture_output=True, timeout=120)


def lines_of(name: str) -> list[bytes]:
    return (LOGHUB / f"{name}_2k.log").read_bytes().splitlines(keepends=True)


def halves(name: str, first: Path, second: Path) -> tuple[Path, Path]:
    """The log's first 1,000 lines written to ``first``, the rest to ``second``."""
    lines = lines_of(name)
    first.write_bytes(b"".join(lines[:1000]))
    second.write_bytes(b"".join(lines[1000:]))
    return first, second


def records_out(output: bytes) -> int:
    """Records written (fold lines aside)."""
    return sum(1 for line in output.splitlines() if not line.startswith(b"[FOLDED"))


def ci_log(name: str, work: Path) -> float:
    """`seqdedup --profile logs ci-job.log`: the share of the lines removed."""
    done = seqdedup("-q", "--profile", "logs", str(LOGHUB / f"{name}_2k.log"))
    return 1 - records_out(done.stdout) / len(lines_of(name))


def pods(name: str, work: Path) -> float:
    """`kubectl logs --prefix | seqdedup --profile logs --stream-by k8s`: two pods
    interleaved (runs of 7 and 5 lines), each the log's halves; the share removed."""
    lines = lines_of(name)
    first = [b"[pod/api-1/api] " + line for line in lines[:1000]]
    second = [b"[pod/api-2/api] " + line for line in lines[1000:]]
    mixed = b"".join(b"".join([*first[k : k + 7], *second[k : k + 5]]) for k in range(0, 1000, 7))
    done = seqdedup("-q", "--profile", "logs", "--stream-by", "k8s", stdin=mixed)
    return 1 - records_out(done.stdout) / mixed.count(b"\n")


def only_new(name: str, work: Path) -> float:
    """`seqdedup --profile logs -q --read-sequences yesterday/ today.log`, yesterday the
    log's first half: the share of today's lines removed as known."""
    (work / "yesterday").mkdir(exist_ok=True)
    _, today = halves(name, work / "yesterday" / "app.log", work / "today.log")
    done = seqdedup(
        "-q",
        "--profile",
        "logs",
        "--read-sequences",
        str(work / "yesterday"),
        str(today),
    )
    return 1 - records_out(done.stdout) / 1000


def what_changed(name: str, work: Path) -> float:
    """`seqdedup diff --normalize all last-green.log failed.log`, the log's halves: the
    share of the second half called new although the first half has its kind of line
    (loghub's template: nothing was planted, and those lines are not new). A record's
    class depends on its own key and kind only, so those lines are diffed alone."""
    good, _ = halves(name, work / "good.log", work / "bad.log")
    rows = (LOGHUB / "templates" / f"{name}_2k.log_structured.csv").read_text(encoding="utf-8")
    events = [row["EventId"] for row in csv.DictReader(rows.splitlines())]
    known = set(events[:1000])
    pairs = zip(lines_of(name)[1000:], events[1000:], strict=True)
    named = [line for line, e in pairs if e in known]
    (work / "named.log").write_bytes(b"".join(named))
    done = seqdedup(
        "diff", "--format", "json", "--normalize", "all", str(good), str(work / "named.log")
    )
    changes = [c for c in json.loads(done.stdout)["changes"] if c["kind"] == "new"]
    return sum(c["length"] + c["again_length"] for c in changes) / (len(events) - 1000)


RECIPES = {
    "a CI log": ci_log,
    "pods, interleaved": pods,
    "only what is new": only_new,
    "what changed (nothing planted)": what_changed,
}


def figures(work: Path) -> dict[tuple[str, str], float]:
    found = {}
    for recipe, measure in RECIPES.items():
        for name in LOGS:
            folder = work / f"{recipe.split()[0]}-{name}"
            folder.mkdir(parents=True, exist_ok=True)
            found[(recipe, name)] = measure(name, folder)
    return found


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as work:
        for (recipe, name), share in figures(Path(work)).items():
            print(f"{recipe:32} {name:8} {share * 100:5.1f}%")
