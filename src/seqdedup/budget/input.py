"""--budget's input: read whole (in memory, or mapped from a temporary file), its records
by their bounds, and the lines kept verbatim (errors, warnings, tracebacks, --keep)."""

from __future__ import annotations

import contextlib
import mmap
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import IO, Literal, TypeVar, overload

from seqdedup.base.engine import Engine
from seqdedup.base.errors import SeqdedupError
from seqdedup.config.budgetfields import VERBATIM_LEVELS
from seqdedup.config.timelimit import PatternTimeout, each_within
from seqdedup.engine.pyengine import PYTHON

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

# Every match of a level's pattern holds one of its literals (in any case: letters are
# folded) or, for a logcat level at the start of a line (``E/Tag``), starts with one: the
# records that hold one are found first, in one pass, and the pattern is tried on them
LITERALS = {
    "error": (
        b"err",
        b"fatal",
        b"crit",
        b"alert",
        b"emerg",
        b"panic",
        b"traceback",
        b"exception",
        b"fail",
        b"assertion",
        b" e ",
        b" f ",
    ),
    "warning": (b"warn", b" w "),
    "words": (b"denied", b"invalid", b"refused", b"timed out", b"timeout"),
}
ANCHORED = {"error": (b"e/", b"f/"), "warning": (b"w/",), "words": ()}


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
            # Bytes a failed write left in the spool's buffer fail again at close; the
            # error already on its way says why (a spool flushed closes without error).
            with contextlib.suppress(OSError):
                spool.close()


def read_inputs_whole(
    names: Sequence[str], stdin: IO[bytes] | None, decompress: bool, limit: int = MAX_WHOLE
) -> Buffer:
    """The inputs read whole (see :func:`read_whole`); one named file that is regular,
    plain and within the limits in one read into one buffer (chunks joined would touch
    every byte twice more)."""
    from seqdedup.base.inputs import decoded_inputs

    if len(names) == 1 and names[0] != "-":
        data = _plain_file(names[0], decompress, min(limit, SPILL))
        if data is not None:
            return data
    return read_whole(decoded_inputs(names, stdin, decompress), limit)


def _plain_file(name: str, decompress: bool, most: int) -> bytes | None:
    """A regular file's bytes where it holds at most ``most`` and is not compressed
    (``decompress``) and did not change size while read; None otherwise (it is read as
    chunks, which say why where it cannot be read)."""
    import os

    from seqdedup.base.inputs import open_plain

    file = open_plain(name, decompress, most)
    if file is None:
        return None
    try:
        with file:
            size = os.fstat(file.fileno()).st_size
            data = file.read(size)
            if data is None or len(data) != size or file.read(1):
                return None  # (it grew or shrank while read)
    except OSError:
        return None
    return data


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


class WholeInput:
    """The whole input, its records by their bounds (``data[bounds[2k]:bounds[2k+1]]``)."""

    def __init__(self, data: Buffer, delimiter: bytes, engine: Engine = PYTHON) -> None:
        self.data = data
        self.delimiter = delimiter
        size, width = len(data), len(delimiter)
        self.ends_delimited = size == 0 or data[size - width :] == delimiter
        # (bounds, not a list of every record: that would hold the input twice)
        self.bounds = bounds = engine.record_bounds(data, delimiter)
        self.count = len(bounds) // 2
        self.engine = engine
        self.stamp = engine.first_timestamp  # (the kernel's scan where it runs)

    def record(self, index: int) -> bytes:
        return self.data[self.bounds[2 * index] : self.bounds[2 * index + 1]]

    def records(self, start: int, stop: int | None) -> list[bytes]:
        return self.picked(range(start, self.count if stop is None else stop))

    def picked(self, indices: Iterable[int]) -> list[bytes]:
        bounds, data = self.bounds, self.data
        return [data[bounds[2 * k] : bounds[2 * k + 1]] for k in indices]

    @overload
    def span(self, first: int, last: int, view: Literal[False] = False) -> bytes: ...
    @overload
    def span(self, first: int, last: int, view: Literal[True]) -> memoryview: ...
    def span(self, first: int, last: int, view: bool = False) -> bytes | memoryview:
        """The exact bytes of records ``first`` .. ``last``, each with its delimiter
        (the input's last record without one where it had none); ``view``: as a view
        of the input, not a copy (to be read at once, as a digest reads it)."""
        end = self.bounds[2 * last + 1]
        if last + 1 < self.count or self.ends_delimited:
            end += len(self.delimiter)
        data = memoryview(self.data) if view else self.data
        return data[self.bounds[2 * first] : end]


KEEP_BATCH = 1 << 16  # records a --keep pattern is matched on under one timer


def _keep_matches(log: WholeInput, pattern: str, flags: bytearray) -> None:
    """Flag the records ``pattern`` finds something in (searched record by record, each
    under the time limit of every user pattern: a pattern that backtracks without end
    on one record ends the run with one line naming it and the line)."""
    compiled = re.compile(pattern.encode("utf-8", "surrogateescape"))
    label = f"--keep {pattern!r}"
    for start in range(0, log.count, KEEP_BATCH):
        records = log.records(start, min(start + KEEP_BATCH, log.count))
        try:
            found = each_within(compiled.search, records, label)
        except PatternTimeout as slow:
            raise slow.at(f"line {start + slow.index + 1}") from None
        for k, hit in enumerate(found):
            if hit is not None:
                flags[start + k] = 1


def verbatim_flags(
    log: WholeInput,
    patterns: Sequence[str],
    levels: Sequence[str] = VERBATIM_LEVELS,
) -> bytearray:
    """Which records must stay verbatim (see :func:`verbatim_units`)."""
    return verbatim_units(log, patterns, levels)[0]


def verbatim_units(
    log: WholeInput,
    patterns: Sequence[str],
    levels: Sequence[str] = VERBATIM_LEVELS,
) -> tuple[bytearray, bytearray]:
    """Which records must stay verbatim: those a level's pattern or one of
    ``patterns`` matches (the heads), and the lines of their tracebacks (the indented
    lines after one; after ``Traceback`` also the line that ends it); and which of
    them are heads."""
    data, engine = log.data, log.engine
    floating = tuple(literal for level in levels for literal in LITERALS[level])
    anchored = tuple(literal for level in levels for literal in ANCHORED[level])
    candidates = engine.literal_hits(data, log.bounds, floating, anchored)
    flags = bytearray(log.count)
    if levels:
        found, worded = _level_test(levels, log.delimiter)
        bounds = log.bounds
        for record in engine.flag_positions(candidates):
            start, end = bounds[2 * record], bounds[2 * record + 1]
            if found(data, start, end) is not None or worded(data[start:end]):
                flags[record] = 1
    for pattern in patterns:
        _keep_matches(log, pattern, flags)
    # (the records that start with a space or a tab: a traceback's lines)
    indented = engine.literal_hits(data, log.bounds, (), (b" ", b"\t"))
    heads = engine.spread_tracebacks(data, log.bounds, flags, indented)
    return flags, bytearray(heads)


Found = Callable[[Buffer, int, int], "re.Match[bytes] | None"]


def _level_test(levels: Sequence[str], delimiter: bytes) -> tuple[Found, Callable[[bytes], bool]]:
    """Whether the record ``data[start:end]`` (records end at ``delimiter``) holds a
    match of one of the ``levels``' patterns: a match of all but the error words' as
    ``found(data, start, end)`` finds it, or the error words' (a line with no level
    word) as ``worded(record)`` finds it (never where not asked for). Where records end at a
    line feed a record is searched where it stands (no copy: no record holds a line
    feed, so the patterns, read line by line, see the record alone). The error words'
    pattern reads the whole line twice at its start: it is tried only where the line
    holds one of its words (and, by the caller, no other level's pattern matches)."""
    others = "|".join(LEVELS[level] for level in levels if level != "words").encode()
    found: Found
    if not others:
        found = lambda data, start, end: None  # noqa: E731
    elif delimiter == b"\n":
        found = re.compile(others, re.MULTILINE).search
    else:
        alone = re.compile(others).search
        found = lambda data, start, end: alone(data[start:end])  # noqa: E731
    words = re.compile(LEVELS["words"].encode()).search
    literals = LITERALS["words"]

    def worded(record: bytes) -> bool:
        lower = record.lower()
        return any(word in lower for word in literals) and words(record) is not None

    return found, (worded if "words" in levels else _no_words)


def _no_words(record: bytes) -> bool:
    return False


def ones(flags: bytes | bytearray) -> Iterator[int]:
    """The indices of the set flags, in order."""
    at = flags.find(1)
    while at >= 0:
        yield at
        at = flags.find(1, at + 1)
