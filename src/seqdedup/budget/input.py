"""--budget's input: read whole (in memory, or mapped from a temporary file), its records
by their bounds, and the lines kept verbatim (errors, warnings, tracebacks, --keep)."""

from __future__ import annotations

import mmap
import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import IO, TypeVar

from seqdedup.base.errors import SeqdedupError
from seqdedup.base.records import record_bounds
from seqdedup.config.budgetfields import VERBATIM_LEVELS
from seqdedup.config.normalize import first_timestamp
from seqdedup.config.timelimit import PatternTimeout, each_within

# The verbatim levels (--verbatim): errors (level words, exception names, tracebacks,
# test failures), warnings, and error words on a line without a level word
LEVELS = {
    "error": (
        r"\b(?:ERROR|Error|error|ERR|FATAL|Fatal|fatal|CRITICAL|Critical|CRIT|ALERT|EMERG"
        r"|PANIC|panic)\b"
        r"|Traceback \(most recent call last\)|\w(?:Exception|Error)\b"
        r"|panic:|\bFAIL(?:ED|URE)?\b|\b[Ff]ail(?:ed|ure)\b|\bAssertion"
        r"|(?<=[0-9] )[EF](?= \S[^:]*: )|^[EF]/\S"
    ),
    # (Apache's [warn], logfmt's level=warn and JSON's "level":"warn" spelled short)
    "warning": (r"\b(?:WARN|WARNING|Warn|Warning|warn|warning)\b|(?<=[0-9] )W(?= \S[^:]*: )|^W/\S"),
    # a line with no level word at all that holds an error word
    "words": (
        r"^(?!.*(?:\b(?:INFO|Info|info|DEBUG|Debug|debug|TRACE|NOTICE|Notice)\b"
        r"|(?<=[0-9] )[VDI](?= \S[^:]*: )|^[VDI]/\S))"
        r".*\b(?i:denied|invalid|refused|timed out|timeout)\b"
    ),
}
VERBATIM = "|".join(LEVELS.values())

# Every match of a level's pattern holds one of its literals: they are found first
# (memchr speed), the pattern tried only on the records that hold one
LITERALS = {
    "error": (
        b"ERR",
        b"Err",
        b"err",
        b"FATAL",
        b"Fatal",
        b"fatal",
        b"CRIT",
        b"Crit",
        b"ALERT",
        b"EMERG",
        b"PANIC",
        b"panic",
        b"Traceback",
        b"Exception",
        b"FAIL",
        b"Fail",
        b"fail",
        b"Assertion",
        b" E ",
        b" F ",
        b"E/",
        b"F/",
    ),
    "warning": (b"WARN", b"Warn", b"warn", b" W ", b"W/"),
    "words": (
        b"denied",
        b"Denied",
        b"invalid",
        b"Invalid",
        b"refused",
        b"Refused",
        b"timed out",
        b"Timed out",
        b"timeout",
        b"Timeout",
    ),
}


Result = TypeVar("Result")
SPILL = 256 << 20  # input bytes held in memory; past it, in a temporary file (mapped)
MAX_WHOLE = 1 << 30  # --max-input's default: the most an input read whole may hold


Buffer = bytes | mmap.mmap


def read_whole(chunks: Iterable[bytes], limit: int = MAX_WHOLE) -> Buffer:
    """The whole input: in memory up to SPILL bytes, else in a temporary file mapped
    into memory (the system pages it in and out); a SeqdedupError once it passes
    ``limit`` bytes (``--max-input``: an endless input, or a record that never ends,
    stops there) or the temporary folder cannot take it (full, or a file size limit).
    Chunks are joined once (a spool in memory would copy each byte twice)."""
    import tempfile

    held: list[bytes] = []
    size = 0
    spool: IO[bytes] | None = None
    try:
        for chunk in chunks:
            if size + len(chunk) > limit:
                raise larger_than(limit, "read whole")
            if spool is None and size + len(chunk) > SPILL:
                made: IO[bytes] = spooled(tempfile.TemporaryFile, "w+b")
                for part in held:
                    spooled(made.write, part)
                spool = made
                held = []
            if spool is None:
                held.append(bytes(chunk))
            else:
                spooled(spool.write, chunk)
            size += len(chunk)
        if spool is None:
            return b"".join(held)
        spooled(spool.flush)  # (the map outlives the file: it holds its own descriptor)
        return mmap.mmap(spool.fileno(), 0, access=mmap.ACCESS_READ)
    finally:
        if spool is not None:
            spool.close()


def larger_than(limit: int, held: str) -> SeqdedupError:
    """The error of an input past ``--max-input``; ``held``: what is done with it."""
    import tempfile

    return SeqdedupError(
        f"the input is larger than --max-input ({limit:,} bytes), the most {held} (in "
        f"memory, then in the temporary folder '{tempfile.gettempdir()}')"
    )


def spooled(call: Callable[..., Result], *args: bytes | str) -> Result:
    """A call on the spool (made, written to); a full temporary folder, or a file size
    limit (EFBIG under ``ulimit -f``: Python ignores SIGXFSZ), is one line naming it."""
    import tempfile

    try:
        return call(*args)
    except OSError as exc:
        raise SeqdedupError(
            f"the input read whole does not fit in the temporary folder "
            f"'{tempfile.gettempdir()}': {exc.strerror or exc} (TMPDIR chooses another "
            "folder; --max-input caps the input)"
        ) from None


class Source:
    """The whole input, its records by their bounds (``data[bounds[2k]:bounds[2k+1]]``)."""

    def __init__(
        self, data: Buffer, delimiter: bytes, stamp: Callable[[bytes], str] = first_timestamp
    ) -> None:
        self.data = data
        self.delimiter = delimiter
        size, width = len(data), len(delimiter)
        self.ends_delimited = size == 0 or data[size - width :] == delimiter
        # (bounds, not a list of every record: that would hold the input twice)
        self.bounds = bounds = record_bounds(data, delimiter)
        self.count = len(bounds) // 2
        self.stamp = stamp  # (the kernel's scan where it runs)

    def record(self, index: int) -> bytes:
        return self.data[self.bounds[2 * index] : self.bounds[2 * index + 1]]

    def records(self, start: int, stop: int | None) -> list[bytes]:
        bounds, data = self.bounds, self.data
        stop = self.count if stop is None else stop
        return [data[bounds[2 * k] : bounds[2 * k + 1]] for k in range(start, stop)]

    def span(self, first: int, last: int) -> bytes:
        """The exact bytes of records ``first`` .. ``last``, each with its delimiter
        (the input's last record without one where it had none)."""
        end = self.bounds[2 * last + 1]
        if last + 1 < self.count or self.ends_delimited:
            end += len(self.delimiter)
        return self.data[self.bounds[2 * first] : end]


KEEP_BATCH = 1 << 16  # records a --keep pattern is matched on under one timer


def _keep_matches(source: Source, pattern: str, flags: bytearray) -> None:
    """Flag the records ``pattern`` finds something in (searched record by record, each
    under the time limit of every user pattern: a pattern that backtracks without end
    on one record ends the run with one line naming it and the line)."""
    compiled = re.compile(pattern.encode("utf-8", "surrogateescape"))
    label = f"--keep {pattern!r}"
    for start in range(0, source.count, KEEP_BATCH):
        records = source.records(start, min(start + KEEP_BATCH, source.count))
        try:
            found = each_within(compiled.search, records, label)
        except PatternTimeout as slow:
            raise slow.at(f"line {start + slow.index + 1}") from None
        for k, hit in enumerate(found):
            if hit is not None:
                flags[start + k] = 1


def verbatim_flags(
    source: Source, patterns: Sequence[str], levels: Sequence[str] = VERBATIM_LEVELS
) -> bytearray:
    """Which records must stay verbatim (see :func:`verbatim_units`)."""
    return verbatim_units(source, patterns, levels)[0]


def verbatim_units(
    source: Source, patterns: Sequence[str], levels: Sequence[str] = VERBATIM_LEVELS
) -> tuple[bytearray, bytearray]:
    """Which records must stay verbatim: those a level's pattern or one of
    ``patterns`` matches (the heads), and the lines of their tracebacks (the indented
    lines after one; after ``Traceback`` also the line that ends it); and which of
    them are heads."""
    flags = bytearray(source.count)
    starts = source.bounds[0::2]
    data = source.data
    candidates: set[int] = set()
    literals = {literal for level in levels for literal in LITERALS[level]}
    haystack = data
    if isinstance(data, bytes):  # (in memory: one case to look for, half the passes)
        haystack, literals = data.lower(), {literal.lower() for literal in literals}
    for literal in sorted(literals):
        at = haystack.find(literal)
        while at >= 0:
            record = bisect_right(starts, at) - 1
            candidates.add(record)
            at = haystack.find(literal, source.bounds[2 * record + 1])  # (the next record)
    if levels:
        builtin = re.compile("|".join(LEVELS[level] for level in levels).encode())
        for record in candidates:
            if builtin.search(source.record(record)):
                flags[record] = 1
    for pattern in patterns:
        _keep_matches(source, pattern, flags)
    heads = bytearray(flags)
    at = 0
    while at < source.count:
        if not flags[at]:
            at += 1
            continue
        traceback = source.record(at).lstrip().startswith(b"Traceback")
        at += 1
        while at < source.count and data[starts[at] : starts[at] + 1] in (b" ", b"\t"):
            flags[at] = 1
            heads[at] = 0
            at += 1
        if traceback and at < source.count:
            flags[at] = 1  # (the exception's own line)
            heads[at] = 0
            at += 1
    return flags, heads


def ones(flags: bytearray) -> Iterator[int]:
    """The indices of the set flags, in order."""
    at = flags.find(1)
    while at >= 0:
        yield at
        at = flags.find(1, at + 1)
