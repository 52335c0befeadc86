"""The text of a fold line (``--fold``, and ``--stream-by``'s folds): the default
sentence, the user's template, JSON and OpenTelemetry records, from a line's fields."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from seqdedup.config.normalize import timestamp_seconds
from seqdedup.run.markers import LINE_COLOR, painted, span

if TYPE_CHECKING:
    from seqdedup.run.markers import Fields

SHORT_ID = 12  # hex digits of a sequence's id (JSON's "digest" has all 32)


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
    copies: int,
    length: int,
    digest: bytes,
    source: int,
    first_time: str,
    last_time: str,
) -> bytes:
    """:func:`default_text` of a whole run of one input (one part, which does not go
    on): records ``start`` .. (numbers), its sequence first seen at record ``source``."""
    lines = span(start, start + removed - 1)
    extra = removed - copies * length
    text = (
        f"[FOLDED: {_records(removed)} at {lines}: {copies} "
        f"{'copy' if copies == 1 else 'copies'} of sequence {digest.hex()[:SHORT_ID]} "
        f"({_records(length)}, first seen at {span(source, source + length - 1)})"
        f"{_extra(extra)}{_times(first_time, last_time)}]"
    )
    return text.encode("utf-8", "surrogateescape")


def _extra(extra: int) -> str:
    return f" and {extra} more record{'s' if extra > 1 else ''}" if extra else ""


def _times(first_time: str, last_time: str) -> str:
    if first_time and first_time == last_time:
        return f", at {first_time}"
    if first_time and last_time:
        return f", {first_time} .. {last_time}"
    if first_time or last_time:  # only one of the two records holds a time
        return f", from {first_time}" if first_time else f", until {last_time}"
    return ""


def _records(count: int) -> str:
    return f"{count} record" if count == 1 else f"{count} records"


def default_text(fields: Fields, named: bool) -> str:
    """``[FOLDED: 36 records at lines 40-75: 3 copies of sequence 3fa9c1d2e4b7 (12
    records, first seen at lines 4-15), 09:00:03 .. 09:14:55]`` and its variants."""
    where = f" of {fields['file']}" if named else ""
    source_where = f" of {fields['match_file']}" if named and not fields["sequence"] else ""
    if "stream" in fields:  # --stream-by
        # (line numbers are the input's, every stream's records counted: the stream
        # stands beside them, not as "lines of the stream")
        where += f" (stream {fields['stream']})"
        if not fields["sequence"]:
            source_where += f" (stream {fields['match_stream']})"
    head = "[FOLDED (continued)" if fields["part"] > 1 else "[FOLDED"
    removed, length = fields["removed"], fields["length"]
    lines = span(fields["start"], fields["end"])
    text = f"{head}: {_records(removed)} at {lines}{where}: "
    first, last = fields["match_start"], fields["match_end"]
    if fields["sequence"]:
        seen = f"first seen in {fields['match_file']} records {first}-{last}"
    else:
        seen = f"first seen at {span(first, last)}"
    copies = fields["copies"]
    text += (
        f"{copies} {'copy' if copies == 1 else 'copies'} of sequence "
        f"{fields['id']} ({_records(length)}, {seen}{source_where})"
    )
    text += _extra(fields["extra"]) + _times(fields["first_time"], fields["last_time"])
    variants = fields.get("variants", 1)
    if variants > 1:  # (the copies are the same sequence by their keys, not their text)
        text += f" ({variants} variants of the text)"
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
