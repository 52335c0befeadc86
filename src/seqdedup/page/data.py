"""The report page's data (``--report``): a run's :class:`~seqdedup.page.picture.RunPicture`,
its statistics and its ``--top`` ranking turned into one JSON-ready document, which
``page.html`` draws. Every figure is the run's own except the block lengths, which come
from a sample of the input's first records, as ``--suggest-window --sample`` does (the
page says so), and the times of the timeline, read from one record's timestamp every
``stride`` bytes (the page says how many).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal

from seqdedup.base.errors import visible
from seqdedup.config.settings import Config
from seqdedup.page.axis import Axis, spread
from seqdedup.page.picture import RunPicture, sequence_key
from seqdedup.page.types import (
    Band,
    Blocks,
    Bucket,
    Figure,
    Heat,
    HeatCell,
    LengthCount,
    LibraryShare,
    Page,
    SequenceRow,
    Timeline,
)
from seqdedup.run.markers import span
from seqdedup.run.stats import Stats, stats_document
from seqdedup.run.top import TopRow

if TYPE_CHECKING:
    from seqdedup.run.top import FirstSeen

    pass

BUCKETS = 96  # columns of the timeline
HEAT_COLUMNS = 48  # columns of the heat map
HEAT_ROWS = 20  # streams or inputs shown (the rest as one row)
INPUTS_NAMED = 20  # inputs the page names (the rest counted)
NAME_CHARS = 80  # characters of a name shown (an input's, a stream's)
BANDS = 120  # folded stretches drawn on the timeline (the largest)
TOP = 20  # sequences listed
TEXT_RECORDS = 200  # records of a sequence's text shown (the rest counted)
TEXT_BYTES = 16384  # bytes of a sequence's text shown
SAMPLE_SHOWN = 200  # characters of a sequence's sample line
SUGGEST_SAMPLE = 100_000  # records the block lengths are measured on


def shown(record: bytes, limit: int | None = None) -> str:
    """A record as the page shows it: text, never markup or a terminal command
    (invalid UTF-8 as ``\\xNN``, control characters as visible escapes)."""
    text = visible(record.decode("utf-8", "backslashreplace"))
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def shown_name(name: str) -> str:
    """A name (an input's, a stream's) as the page shows it: bytes that are not UTF-8
    (a name decoded with surrogateescape) as ``\\xNN``, control characters as visible
    escapes, at most NAME_CHARS characters."""
    text = visible(name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"))
    return text if len(text) <= NAME_CHARS else text[: NAME_CHARS - 1] + "\u2026"


def short_names(names: Sequence[str]) -> list[str]:
    """Inputs as a chart labels them: their file names, where those tell them apart."""
    import os

    bases = [os.path.basename(name) or name for name in names]
    return [shown_name(name) for name in (bases if len(set(bases)) == len(bases) else names)]


def named_inputs(names: Sequence[str]) -> list[str]:
    """The inputs the page names: at most INPUTS_NAMED, then how many more."""
    shown = [shown_name(n) if n != "-" else "standard input" for n in names[:INPUTS_NAMED]]
    if len(names) > INPUTS_NAMED:
        shown.append(f"and {len(names) - INPUTS_NAMED:,} more inputs")
    return shown or ["standard input"]


def removed_per_bucket(picture: RunPicture, axis: Axis) -> list[int]:
    """Records removed per bucket, each where it lies (see :func:`spread`)."""
    removed = [0] * axis.buckets
    spans = picture.spans
    for start, length in zip(picture.starts, picture.lengths, strict=True):
        for bucket, count in spread(axis, start, length, spans.get(start, length - 1) + 1):
            removed[bucket] += count
    return removed


def timeline(picture: RunPicture, axis: Axis) -> Timeline:
    """Per bucket: records read, removed and written, and the share removed; and the
    folded stretches as bands."""
    read = axis.read_per_bucket()
    removed = removed_per_bucket(picture, axis)
    carried = 0  # (sampled times: a bucket's removed records may exceed what it read)
    rows: list[Bucket] = []
    for b in range(axis.buckets):
        here = removed[b] + carried
        taken = min(here, read[b])
        carried = here - taken
        rows.append(
            {
                "from": axis.edge(b),
                "to": axis.edge(b + 1),
                "read": read[b],
                "written": read[b] - taken,
                "removed": taken,
                "share": round(100.0 * taken / read[b], 1) if read[b] else 0.0,
            }
        )
    bands, dropped = folded_bands(picture, axis)
    return {
        "axis": axis.kind,
        "buckets": rows,
        "bands": bands,
        "bands_left_out": dropped,
    }


def folded_bands(picture: RunPicture, axis: Axis) -> tuple[list[Band], int]:
    """The folded stretches (pieces less than 1/300 of the input apart joined), the
    largest :data:`BANDS` of them: where, how many records, their main sequence; and
    how many smaller ones were left out."""
    starts, lengths = picture.starts, picture.lengths
    gap = max(1, axis.total // 300)
    groups: list[list[int]] = []
    end = 0
    for i in sorted(range(len(starts)), key=starts.__getitem__):
        stop = starts[i] + lengths[i] - 1
        if not groups or starts[i] > end + gap:
            groups.append([])
            end = stop
        end = max(end, stop)
        groups[-1].append(i)
    groups.sort(key=lambda group: -sum(lengths[i] for i in group))
    bands = [_band(picture, axis, group) for group in groups[:BANDS]]
    bands.sort(key=lambda band: band["from"])
    return bands, max(0, len(groups) - BANDS)


def _band(picture: RunPicture, axis: Axis, group: list[int]) -> Band:
    starts, lengths, sequences = picture.starts, picture.lengths, picture.sequences
    weight: Counter[int] = Counter()
    for i in group:
        weight[sequences[i]] += lengths[i]
    main = weight.most_common(1)[0][0]
    of_main = [i for i in group if sequences[i] == main]
    first = starts[group[0]]
    last = max(starts[i] + lengths[i] - 1 for i in group)
    text = picture.text_of(starts[of_main[0]], 1)
    return {  # (drawn over the buckets it touches, so that a short one shows)
        "from": axis.edge(axis.bucket(first)),
        "to": axis.edge(axis.bucket(last) + 1),
        "first": axis.label(first),
        "last": axis.label(last),
        "removed": sum(lengths[i] for i in group),
        "copies": len(of_main),
        "sequence": shown(text[0], 80) if text else "(text not kept)",
    }


def heat(picture: RunPicture, stats: Stats, names: Sequence[str], total: int) -> Heat | None:
    """Records removed per stream (``--stream-by``) or per input (several) and bucket."""
    kind: Literal["stream", "input"]
    if picture.lane_names:
        kind = "stream"
        labels = {lane: shown_name(name) for name, lane in picture.lane_names.items()}
        row_of: Callable[[int], int] = picture.lanes.__getitem__
    elif len(picture.input_ends) > 1:
        kind = "input"
        labels = dict(enumerate(short_names(names)))
        ends = picture.input_ends
        row_of = lambda i: min(bisect_right(ends, picture.starts[i]), len(ends) - 1)  # noqa: E731
    else:
        return None
    axis = Axis(picture, total, HEAT_COLUMNS)
    per_row: dict[int, list[int]] = {}
    spans = picture.spans
    for i, (start, length) in enumerate(zip(picture.starts, picture.lengths, strict=True)):
        row = per_row.setdefault(row_of(i), [0] * axis.buckets)
        for bucket, count in spread(axis, start, length, spans.get(start, length - 1) + 1):
            row[bucket] += count
    ranked = sorted(per_row.items(), key=lambda item: -sum(item[1]))
    shown_rows = [(labels.get(row, str(row)), cells) for row, cells in ranked[:HEAT_ROWS]]
    if len(ranked) > HEAT_ROWS:
        other = [sum(cells[b] for _, cells in ranked[HEAT_ROWS:]) for b in range(axis.buckets)]
        shown_rows.append((f"(other {kind}s: {len(ranked) - HEAT_ROWS})", other))
    cells: list[HeatCell] = [
        {"row": label, "from": axis.edge(b), "to": axis.edge(b + 1), "removed": value}
        for label, row in shown_rows
        for b, value in enumerate(row)
    ]
    return {
        "kind": kind,
        "axis": axis.kind,
        "rows": [r for r, _ in shown_rows],
        "cells": cells,
    }


def blocks(picture: RunPicture, config: Config) -> Blocks | None:
    """What each W removes and the lengths of the repeated blocks, on the input's
    first :data:`SUGGEST_SAMPLE` records (``--suggest-window``'s figures)."""
    from seqdedup.run.suggest import width_rows

    count = min(SUGGEST_SAMPLE, picture.records)
    sample = picture.text_of(0, count) if count else None
    if not sample:
        return None
    rows, lengths = width_rows(sample, config)
    histogram = length_histogram(lengths)
    return {
        "sample": len(sample),
        "window_size": config.window_size,
        "widths": [
            {
                "window_size": row["window_size"],
                "removed": row["removed"],
                "runs": row["runs"],
                "share": round(100.0 * row["removed"] / len(sample), 1),
                "used": row["window_size"] == config.window_size,
            }
            for row in rows
        ],
        "histogram": histogram,
    }


def length_histogram(lengths: Sequence[int]) -> list[LengthCount]:
    """How many blocks have a length in each of ``--suggest-window``'s ranges."""
    from seqdedup.run.suggest import BUCKETS

    return [
        {
            "lengths": f"{low}-{high}" if high is not None else f"{low}+",
            "blocks": sum(1 for n in lengths if low <= n and (high is None or n <= high)),
        }
        for low, high in BUCKETS
    ]


def top_sequences(
    picture: RunPicture, ranked: list[tuple[int, TopRow]], axis: Axis, names: Sequence[str]
) -> list[SequenceRow]:
    """The sequences that removed the most records: counts, first place, time bounds,
    a sample line, the text of the first occurrence and its reference (``sd:`` and the
    first 8 hex digits of the BLAKE2b-128 of its exact bytes, as ``--budget`` names
    what it removed), and the kind of line of its first record (the sample)."""
    from seqdedup.budget.removed import PREFIX, SHORT, digest_of
    from seqdedup.keys.kind import kind_of

    last_piece = {sequence: i for i, sequence in enumerate(picture.sequences)}
    delimiter = picture.delimiter
    rows: list[SequenceRow] = []
    for identity, row in ranked:
        first_seen, length = row["first_seen"], row["length"]
        first = _first_index(picture, first_seen, names)
        whole = None  # (a stream's occurrence is interleaved with other streams')
        if first is not None and "stream" not in first_seen:
            whole = picture.text_of(first, length)
        data = b"".join(record + delimiter for record in whole) if whole else b""
        sample = (
            whole[0] if whole else (row["first_record"] or "").encode("utf-8", "surrogateescape")
        )
        last = last_piece.get(sequence_key(identity))
        rows.append(
            {
                "removed": row["removed"],
                "seen": row["seen"],
                "length": length,
                "first_place": _place(first_seen),
                "first": axis.label(first) if first is not None else None,
                "last": axis.label(picture.starts[last]) if last is not None else None,
                "first_shown": when(axis, first),
                "last_shown": when(axis, picture.starts[last]) if last is not None else "",
                "sample": shown(sample, SAMPLE_SHOWN),
                "kind": shown(kind_of(sample), SAMPLE_SHOWN),
                "text": sequence_text(whole) if whole else None,
                "text_missing": _missing(first_seen, first, whole),
                "more_records": max(0, length - TEXT_RECORDS) if whole else 0,
                "reference": PREFIX + digest_of(data)[:SHORT] if whole else None,
            }
        )
    return rows


def sequence_text(records: list[bytes]) -> str:
    """A sequence's text as shown: one line per record (each escaped as a record is),
    its first TEXT_RECORDS records, at most about TEXT_BYTES characters."""
    lines, size = [], 0
    for record in records[:TEXT_RECORDS]:
        line = shown(record)
        size += len(line) + 1
        if size > TEXT_BYTES:
            lines.append("…")
            break
        lines.append(line)
    return "\n".join(lines)


def _missing(first_seen: FirstSeen, first: int | None, whole: list[bytes] | None) -> str:
    if whole is not None:
        return ""
    if first is None:
        return "Its text lies in the library (seqdedup-library show gives it)."
    if "stream" in first_seen:
        return "Its records lie among other streams' records: the first one is shown above."
    return "Its text lies past what the page keeps of the input: the first record is shown above."


def when(axis: Axis, index: int | None) -> str:
    """Where a record lies, as the page says it: its time, or its number."""
    if index is None:
        return ""
    if not axis.timed:
        return f"record {index + 1:,}"
    from datetime import UTC, datetime

    moment = datetime.fromtimestamp(axis.position(index), UTC)
    return moment.strftime("%H:%M:%S" if moment.year == 1900 else "%Y-%m-%d %H:%M:%S")


def _first_index(picture: RunPicture, first_seen: FirstSeen, names: Sequence[str]) -> int | None:
    """The 0-based input index of a sequence's first occurrence (None: a library's)."""
    lines = first_seen.get("lines")
    if lines is None:
        return None
    offset = 0
    if "file" in first_seen and first_seen["file"] in names:
        which = list(names).index(first_seen["file"])
        offset = picture.input_ends[which - 1] if which > 0 else 0
    return offset + int(lines[0]) - 1


def _place(first_seen: FirstSeen) -> str:
    if "sequence" in first_seen:
        start, end = first_seen["records"]
        return f"library sequence {first_seen['sequence']}, records {start}-{end}"
    start, end = first_seen["lines"]
    where = span(start, end)
    if "file" in first_seen:
        where = f"{shown_name(first_seen['file'])}, {where}"
    if "stream" in first_seen:
        where += f" (stream {shown_name(first_seen['stream'])})"
    return where


def against_library(
    picture: RunPicture, stats: Stats, top: list[SequenceRow], ranked: list[tuple[int, TopRow]]
) -> LibraryShare:
    """What this run saw that its libraries did not."""
    by_library = sum(
        length for length, held in zip(picture.lengths, picture.from_library, strict=True) if held
    )
    own = {s for s, held in zip(picture.sequences, picture.from_library, strict=True) if not held}
    held = {s for s, h in zip(picture.sequences, picture.from_library, strict=True) if h}
    new = [
        row
        for row, (_, raw) in zip(top, ranked, strict=True)
        if "sequence" not in raw["first_seen"]
    ]
    return {
        "kept": stats.emitted,
        "removed_by_library": by_library,
        "removed_by_run": stats.skipped - by_library,
        "sequences_new": len(own - held),
        "sequences_known": len(held),
        "top_new": new[:10],
    }


def page_data(
    picture: RunPicture,
    stats: Stats,
    config: Config,
    ranked: list[tuple[int, TopRow]],
    names: Sequence[str],
    bytes_written: int,
    seconds: float,
    tokens: tuple[int, int] | None = None,
) -> Page:
    """Everything the page shows of one run (see the module docstring)."""
    import json

    from seqdedup.base.version import __version__

    document = stats_document(stats, config)
    axis = Axis(picture, stats.total, BUCKETS)
    top = top_sequences(picture, ranked, axis, names)
    libraries = bool(config.read_sequences) or bool(stats.library_loaded)
    inputs = named_inputs(names)
    headline: dict[str, float] = {
        "records_read": stats.total,
        "records_written": stats.emitted,
        "records_removed": stats.skipped,
        "removed_pct": round(stats.redundancy_pct, 1),
        "bytes_read": picture.bytes_read,
        "bytes_written": bytes_written,
        "sequences": stats.unique_sequences,
        "seconds": round(seconds, 3),
    }
    if tokens is not None:
        headline["tokens_in"], headline["tokens_out"] = tokens
    line = timeline(picture, axis)
    configuration = document["configuration"]
    assert isinstance(configuration, dict)
    return {
        "kind": "run",
        "version": __version__,
        "title": "seqdedup report: " + ", ".join(inputs),
        "heading": f"{stats.redundancy_pct:.1f}% of the records removed",
        "subtitle": _subtitle(inputs, stats, seconds),
        "headline": headline,
        "figures": figures(headline),
        "inputs": inputs,
        "configuration": configuration,
        "configuration_text": json.dumps(configuration, indent=2),
        "timeline": line,
        "timeline_how": _timeline_how(picture, line, axis.apart),
        "runs": None,  # (a library's page)
        "top": top,
        "top_how": (
            f"Of the {stats.unique_sequences:,} repeated sequences, the {len(top)} that "
            "removed the most records; open one for its text, as first seen."
        ),
        "heat": heat(picture, stats, names, stats.total),
        "blocks": blocks(picture, config),
        "library": against_library(picture, stats, top, ranked) if libraries else None,
        "notes": _notes(picture, len(names)),
    }


LABELS = {
    "sequences_repeat": "repeated sequences",
    "sequences_new": "first-seen stretches",
    "records": "records held",
    "runs": "runs",
    "bytes_on_disk": "bytes on disk",
    "records_read": "records read",
    "records_written": "records written",
    "records_removed": "records removed",
    "removed_pct": "share removed",
    "bytes_read": "bytes read",
    "bytes_written": "bytes written",
    "sequences": "repeated sequences",
    "tokens_in": "tokens in",
    "tokens_out": "tokens out",
    "seconds": "time taken",
}


def figures(headline: dict[str, float]) -> list[Figure]:
    """The headline's figures as the page shows them (the value exact, for a reader
    that checks it; the shown form rounded)."""
    rows: list[Figure] = []
    for field, value in headline.items():
        if field in ("removed_pct",):
            text = f"{value:.1f}%"
        elif field.startswith("bytes"):
            text = _size(int(value))
        elif field == "seconds":
            text = f"{value:.2f} s"
        else:
            text = f"{value:,}"
        rows.append(
            {"field": field, "label": LABELS.get(field, field), "value": value, "shown": text}
        )
    return rows


def _size(count: int) -> str:
    for unit, size in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count:,} B"


def _subtitle(inputs: list[str], stats: Stats, seconds: float) -> str:
    text = f"{', '.join(inputs)}: {stats.total:,} records read, {stats.emitted:,} written"
    if stats.interrupted is not None:
        text += " (the run was stopped before its input ended)"
    return text


def _timeline_how(picture: RunPicture, line: Timeline, apart: str = "") -> str:
    if line["axis"] == "time":
        how = (
            "The share of the records removed over time, the times read from the timestamps of "
            f"{len(picture.sample_at):,} records (one every {picture.stride:,} bytes or so)."
        )
    elif apart:
        how = (
            f"The share of the records removed by record number, in input order: {apart}, "
            "so one time axis would put them on no common clock."
        )
    else:
        how = "The share of the records removed by record number (no timestamps found)."
    how += (
        " Folded stretches are the light orange bands: hover one for its sequence and"
        " copies, a bar for the records read, removed and written."
    )
    if line["bands_left_out"]:
        how += f" The {line['bands_left_out']:,} smallest stretches are not drawn."
    return how


def _notes(picture: RunPicture, inputs: int = 0) -> list[str]:
    notes = []
    if inputs > INPUTS_NAMED:
        notes.append(
            f"{inputs:,} inputs: the page names the first {INPUTS_NAMED} and draws the "
            f"{HEAT_ROWS} that lost the most records (the others as one row)."
        )
    if picture.coarsened:
        notes.append(
            "More pieces than the page keeps: neighbouring pieces were merged, so a "
            "band's bounds are known to within its pieces."
        )
    if picture.spooled < picture.bytes_read:
        notes.append(
            f"Only the first {picture.spooled:,} bytes of input were kept for the texts: "
            "sequences first seen later show their first record only."
        )
    return notes
