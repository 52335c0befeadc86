"""The text of a fold line (``--fold``, and ``--stream-by``'s folds): the default
sentence, the user's template, JSON and OpenTelemetry records, from a line's fields."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from seqdedup.base.message import message_of
from seqdedup.config.normalize import timestamp_seconds
from seqdedup.run.markers import LINE_COLOR, painted, span

if TYPE_CHECKING:
    from seqdedup.run.markers import Fields

SHORT_ID = 12  # hex digits of a sequence's id (JSON's "digest" has all 32)
TEXT_WIDTH = 26  # characters of the first folded record a line quotes


def folded_text(record: bytes, first_time: str) -> str:
    """What a fold line quotes of the first record it folds: its message
    (:func:`seqdedup.base.message.message_of`), at most TEXT_WIDTH characters."""
    return message_of(record, first_time, TEXT_WIDTH)


def line_text(template: str | None, fields: Fields, named: bool, color: bool) -> bytes:
    """A summary line: the default text, the user's template, or JSON (in colour)."""
    if template == "json":
        text = json_line(fields).encode("utf-8")
    elif template == "otel":
        text = otel_line(fields, named).encode("utf-8")
    elif template is not None:
        text = template.format_map(fields).encode("utf-8", "surrogateescape")
    else:
        text = default_text(fields, named).encode("utf-8", "surrogateescape")
    return painted(text, LINE_COLOR if color else None)


def plain_text(
    start: int,
    removed: int,
    shape: tuple[int, int, int],
    digest: bytes,
    source: int,
    times: tuple[str, str],
    text: str,
) -> bytes:
    """:func:`default_text` of a whole run of one input (one part, which does not go
    on): records ``start`` .. (numbers), ``shape``: its copies of its sequence, the
    sequence's length and its copies' texts; the sequence first seen at record
    ``source``; its first record quoted as ``text``."""
    copies, length, variants = shape
    extra = removed - copies * length
    seen = span(source, source + length - 1)
    line = (
        f'[FOLDED: {_where(start, start + removed - 1, removed)} like "{text}" '
        f"({_of(seen, copies, extra, variants)}){_times(*times)}, "
        f"id {digest.hex()[:SHORT_ID]}]"
    )
    return line.encode("utf-8", "surrogateescape")


def _where(start: int, end: int, removed: int) -> str:
    """The lines folded: ``lines 40-75``, or ``30 lines in 40-75`` where others lie
    between them (other streams', records a filter let through)."""
    if end - start + 1 == removed:
        return span(start, end)
    return f"{_lines(removed)} in {start}-{end}"


def _of(source: str, copies: int, extra: int, variants: int = 1) -> str:
    """Where the folded lines were first seen, how many copies of them where more than
    one, and how many texts where they differ: ``line 4``, ``lines 4-15, 3 copies``,
    ``line 1, 6 copies, 3 texts`` (the lines past the whole copies, ``extra``, are
    counted in JSON; here they add ``and more``)."""
    said = source
    if copies > 1:
        said += f", {_copies(copies)}{' and more' if extra else ''}"
    if variants > 1:  # (copies of one sequence by their keys, not by their text)
        said += f", {variants} texts"
    return said


def _copies(copies: int) -> str:
    return f"{copies} {'copy' if copies == 1 else 'copies'}"


def _times(first_time: str, last_time: str) -> str:
    if first_time and first_time == last_time:
        return f", {first_time}"
    if first_time and last_time:
        return f", {first_time}..{_after(first_time, last_time)}"
    if first_time or last_time:  # only one of the two records holds a time
        return f", from {first_time}" if first_time else f", until {last_time}"
    return ""


def _after(first: str, last: str) -> str:
    """``last`` without the date it shares with ``first`` (what they share up to the
    last space or 'T' after at least 5 characters: ``2026-11-22T09:00:01Z..09:00:08Z``,
    ``081109 204015..204525``)."""
    for at in range(min(len(first), len(last)) - 1, 4, -1):
        if first[at] in " T" and first[: at + 1] == last[: at + 1]:
            return last[at + 1 :]
    return last


def _lines(count: int) -> str:
    return f"{count} line" if count == 1 else f"{count} lines"


def default_text(fields: Fields, named: bool) -> str:
    """``[FOLDED: lines 40-75 like "GET /health 200" (lines 4-15, 3 copies), 09:00:03 ..
    09:14:55, id 3fa9c1d2e4b7]`` and its variants: the lines folded, what they were in
    the reader's words (the first one's text, the earlier lines they repeat and how many
    copies), when, and which sequence last."""
    where = f" of {fields['file']}" if named else ""
    source_where = f" of {fields['match_file']}" if named and not fields["sequence"] else ""
    if "stream" in fields:  # --stream-by
        # (line numbers are the input's, every stream's records counted: the stream
        # stands beside them, not as "lines of the stream")
        where += f" in stream {fields['stream']}"
        if not fields["sequence"]:
            source_where += f" in stream {fields['match_stream']}"
    head = "[FOLDED (continued)" if fields["part"] > 1 else "[FOLDED"
    first, last = fields["match_start"], fields["match_end"]
    if fields["sequence"]:
        seen = f"{fields['match_file']} records {first}-{last}"
    else:
        seen = span(first, last) + source_where
    text = (
        f"{head}: {_where(fields['start'], fields['end'], fields['removed'])}{where} "
        f'like "{fields["text"]}" '
        f"({_of(seen, fields['copies'], fields['extra'], fields.get('variants', 1))})"
        f"{_times(fields['first_time'], fields['last_time'])}, id {fields['id']}"
    )
    return text + ("; the run goes on]" if fields["continues"] else "]")


JSON_FIELDS = (
    "file",
    "start",
    "end",
    "removed",
    "copies",
    "extra",
    "length",
    "id",
    "digest",
    "count",
    "match_file",
    "match_start",
    "match_end",
    "sequence",
    "first_time",
    "last_time",
    "part",
    "continues",
    "window_size",
    "variants",
    "text",
)


STREAM_FIELDS = ("stream", "match_stream")  # with --stream-by


def otel_line(fields: Fields, named: bool) -> str:
    """One OTLP/JSON log record (docs/ci-logs.md: Fold records for OpenTelemetry): the
    attributes OpenTelemetry's logdedupprocessor writes (``log_count``,
    ``first_observed_timestamp``, ``last_observed_timestamp``) beside seqdedup's own.
    Times are the records' own where the ``timestamp`` class finds them, else the time
    the line is written."""

    now = time.time()
    first, last = (_epoch(fields.get(name, ""), now) for name in ("first_time", "last_time"))
    by_name: Mapping[str, object] = fields
    attributes = [
        _otel_attribute("log_count", fields["removed"]),
        _otel_attribute("first_observed_timestamp", _rfc3339(first)),
        _otel_attribute("last_observed_timestamp", _rfc3339(last)),
    ]
    for name in JSON_FIELDS + (STREAM_FIELDS if "stream" in fields else ()):
        value = by_name[name]
        if value is not None and value != "":
            value = bool(value) if name == "continues" else value
            attributes.append(_otel_attribute(f"seqdedup.{name}", value))
    record = {
        # (microseconds, exact in a float for this century's seconds, then nanoseconds)
        "timeUnixNano": str(round(first * 1e6) * 1000),
        "observedTimeUnixNano": str(round(now * 1e6) * 1000),
        "body": {"stringValue": default_text(fields, named)},
        "attributes": attributes,
    }
    return json.dumps(record, ensure_ascii=False)


def _epoch(stamp: object, now: float) -> float:
    """A record's timestamp as seconds since the epoch; ``now`` where there is none or
    it has no date (a syslog or time-of-day stamp reads as the year 1900)."""
    seconds = timestamp_seconds(stamp) if isinstance(stamp, str) else None
    return now if seconds is None or seconds < 0 else seconds


def _otel_attribute(key: str, value: object) -> dict[str, object]:
    """An OTLP/JSON KeyValue (64-bit integers as strings, as the mapping wants)."""
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": str(value)}}


def _rfc3339(seconds: float) -> str:
    from datetime import UTC, datetime

    return (
        datetime.fromtimestamp(seconds, UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def json_line(fields: Fields) -> str:
    """One JSON object (docs/ci-logs.md: Folding repeats, the schema)."""
    document: dict[str, object] = {"seqdedup": "fold"}
    by_name: Mapping[str, object] = fields  # (the names are JSON_FIELDS'; a TypedDict)
    for name in JSON_FIELDS + (STREAM_FIELDS if "stream" in fields else ()):
        value = by_name[name]
        if name in ("sequence", "first_time", "last_time"):
            value = value or None
        elif name == "continues":
            value = bool(value)
        document[name] = value
    return json.dumps(document, ensure_ascii=False)
