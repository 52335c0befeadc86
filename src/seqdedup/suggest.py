"""``--suggest-window``: what each window size would remove from an input, and which one
to use.

The input's records (its first ``sample`` of them) are keyed and hashed once, as a run
would key them; the rule then runs on those hashes for each W of :data:`WIDTHS` (with
an unlimited history, as on a named file). For each W: the records it would remove and
the runs they form. The lengths of the repeated blocks are those runs at W=2 (every
repeat of two or more records), as a histogram. The recommendation is the largest
W >= 2 that still removes at least :data:`KEEP` of what W=2 removes: blocks shorter
than that are rare, and a larger W leaves short coincidences (a blank line and a
closing brace) alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TextIO

from seqdedup.config import Config

WIDTHS = (1, 2, 3, 5, 10, 20, 50)
BUCKETS = ((2, 4), (5, 9), (10, 19), (20, 49), (50, 99), (100, None))
KEEP = 0.8  # of what W=2 removes, the recommended W still removes
DEFAULT_SAMPLE = 1_000_000


def sample_records(chunks: Iterable[bytes], delimiter: bytes, limit: int | None) -> list[bytes]:
    """The first ``limit`` records of the chunks (all of them without a limit)."""
    from seqdedup.records import RecordSplitter

    splitter = RecordSplitter(delimiter)
    records: list[bytes] = []
    for chunk in chunks:
        records += splitter.split(chunk)
        if limit is not None and len(records) >= limit:
            return records[:limit]
    final = splitter.finish()
    if final is not None:
        records.append(final)
    return records if limit is None else records[:limit]


def suggest(records: list[bytes], config: Config) -> dict[str, Any]:
    """Per W, the records removed and the runs; the histogram of repeated blocks; the
    recommended W and why."""
    from seqdedup.engine import SEED
    from seqdedup.engine import load as load_kernel
    from seqdedup.keys import key_maker
    from seqdedup.matcher import make_matcher
    from seqdedup.runs import runs_of

    kernel = load_kernel()
    hashes = key_maker(config, kernel, SEED).hashes(records)
    rows, blocks = [], []
    if kernel is not None:  # every width in one pass each, in C
        from array import array

        for width, (removed, count, lengths) in zip(
            WIDTHS, kernel.window_tally(bytes(hashes), WIDTHS), strict=True
        ):
            rows.append({"window_size": width, "removed": removed, "runs": count})
            if width == 2:
                blocks = list(array("q", lengths))
    for width in WIDTHS if kernel is None else ():  # the matcher, once per width
        matcher = make_matcher(width, None, kernel, seed=SEED)
        keep = list(matcher.push(hashes)) + list(matcher.finish())
        runs = runs_of(keep, False)
        removed = sum(stop - start for start, stop in runs)
        rows.append({"window_size": width, "removed": removed, "runs": len(runs)})
        if width == 2:
            blocks = [stop - start for start, stop in runs]
    histogram = [
        {
            "lengths": f"{low}-{high}" if high is not None else f"{low}+",
            "blocks": sum(1 for n in blocks if low <= n and (high is None or n <= high)),
            "records": sum(n for n in blocks if low <= n and (high is None or n <= high)),
        }
        for low, high in BUCKETS
    ]
    window, reason = recommend(rows)
    return {
        "records": len(records),
        "windows": rows,
        "repeated_blocks": histogram,
        "recommended": window,
        "reason": reason,
    }


def recommend(rows: list[dict[str, int]]) -> tuple[int, str]:
    """The largest W >= 2 that removes at least KEEP of what W=2 removes."""
    removed = {row["window_size"]: row["removed"] for row in rows}
    base = removed[2]
    if base == 0:
        return 10, "no block of two or more records repeats here: the default, 10, is as good"
    best = max(w for w in WIDTHS if w >= 2 and removed[w] >= KEEP * base)
    share = 100.0 * removed[best] / base
    return best, (
        f"-w {best} removes {removed[best]:,} records, {share:.0f}% of what -w 2 removes, "
        f"and leaves repeats shorter than {best} records alone"
    )


def write_suggestion(result: dict[str, Any], stream: TextIO, fmt: str) -> None:
    """The suggestion as tables and a line (or one JSON document with ``json``)."""
    if fmt == "json":
        import json

        stream.write(json.dumps({"suggest_window": result}, indent=2) + "\n")
        return
    total = result["records"]
    lines = [f"{total:,} records read"]
    lines.append(f"{'window':>8}  {'removed':>12}  {'share':>6}  {'runs':>10}")
    for row in result["windows"]:
        share = 100.0 * row["removed"] / total if total else 0.0
        lines.append(
            f"{'-w ' + str(row['window_size']):>8}  {row['removed']:>12,}  {share:>5.1f}%  "
            f"{row['runs']:>10,}"
        )
    lines.append("repeated blocks (runs of 2+ records removed at -w 2), by length:")
    for bucket in result["repeated_blocks"]:
        lines.append(
            f"{bucket['lengths']:>8}  {bucket['blocks']:>12,} blocks  "
            f"{bucket['records']:>12,} records"
        )
    lines.append(f"suggested: -w {result['recommended']} ({result['reason']})")
    stream.write("\n".join(lines) + "\n")
