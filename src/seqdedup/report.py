"""What a run reports: statistics for people (a rich table) and for programs (JSON),
markers and explanations of its pieces, and progress; the text, never the printing of
records.

``rich`` is imported only when a table is printed, so a quiet run starts fast.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable, Sequence
from itertools import compress
from typing import TYPE_CHECKING, TextIO, TypedDict

from seqdedup.errors import visible

if TYPE_CHECKING:
    from types import ModuleType

    from rich.console import Console
    from rich.table import Table

    from seqdedup.attribution import Piece
    from seqdedup.config import Config
    from seqdedup.keys import TextDigest


class Fields(TypedDict, total=False):
    """The placeholders of a marker, an explanation and a fold line (docs/ci-logs.md:
    the annotation and fold formats); each holds the ones that apply to it."""

    start: int  # the run's first and last record numbers, inside their input
    end: int
    file: str
    count: int  # how many times its sequence has been seen
    window_size: int
    match_file: str  # where the run's earliest occurrence lies
    match_start: int
    match_end: int
    sequence: str  # a library sequence's name (the occurrence lies in a library)
    stream: str  # with --stream-by: the run's stream, and its occurrence's
    match_stream: str
    removed: int  # fold lines: records removed, whole copies, records past them
    copies: int
    extra: int
    length: int
    id: str
    digest: str
    first_time: str
    last_time: str
    part: int
    continues: int
    variants: int  # how many different texts the folded copies have (1: all the same)


class FirstSeen(TypedDict, total=False):
    """``--top``: where a sequence was first seen (lines of an input, or records of a
    library sequence)."""

    lines: list[int]
    records: list[int]
    sequence: str
    file: str
    stream: str


class TopRow(TypedDict):
    """One row of ``--top``'s table and its JSON."""

    removed: int
    seen: int
    length: int
    first_seen: FirstSeen
    first_record: str | None


class LineCounts(TypedDict):
    """Records read, written and removed (of one input, or one stream)."""

    total: int
    emitted: int
    skipped: int


class CountsRow(TypedDict):
    """Per input (several files) or per stream (``--stream-by``): its name and counts."""

    name: str
    lines: LineCounts


class _TopEntry(TypedDict):
    length: int
    first_seen: FirstSeen | None  # (None until ranked, where it is read lazily)
    source: tuple[Callable[[Piece], Fields], Piece, bool] | None  # (then: read it so)
    first_record: bytes | None
    order: int


class Stats:
    """Counts of one run. ``total == emitted + skipped`` always.

    A plain slotted class rather than a dataclass: importing dataclasses costs more
    start-up time than a one-line run of the whole tool.
    """

    __slots__ = (
        "emitted",
        "files",
        "interrupted",
        "library_loaded",
        "library_saved",
        "skipped",
        "streams",
        "top_sequences",
        "total",
        "unique_sequences",
    )

    def __init__(
        self,
        total: int = 0,
        emitted: int = 0,
        skipped: int = 0,
        unique_sequences: int = 0,
        library_loaded: int | None = None,  # None: no library in use
        library_saved: int | None = None,
    ) -> None:
        self.total = total
        self.emitted = emitted
        self.skipped = skipped
        self.unique_sequences = unique_sequences
        self.library_loaded = library_loaded
        self.library_saved = library_saved
        self.top_sequences: list[TopRow] | None = None  # with --top
        self.files: list[CountsRow] | None = None  # with several inputs: per input
        self.streams: list[CountsRow] | None = None  # with --stream-by: per stream
        # The signal that asked the run to stop before its input ended (None: it ended).
        self.interrupted: int | None = None

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stats) and self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"Stats({fields})"

    @property
    def redundancy_pct(self) -> float:
        """Share of records skipped, in percent."""
        return 100.0 * self.skipped / self.total if self.total else 0.0


def stats_rows(stats: Stats, config: Config) -> list[tuple[str, str]]:
    """The table rows, in the order the documentation gives."""
    history = "unlimited" if config.max_history is None else f"{config.max_history:,}"
    return (
        [
            ("Total lines processed", f"{stats.total:,}"),
            ("Lines emitted", f"{stats.emitted:,}"),
            ("Lines skipped", f"{stats.skipped:,}"),
            ("Redundancy", f"{stats.redundancy_pct:.1f}%"),
            ("Unique sequences tracked", f"{stats.unique_sequences:,}"),
            ("Window size", f"{config.window_size:,}"),
            ("Max history", history),
        ]
        + ([("Streams", f"{len(stats.streams):,}")] if stats.streams is not None else [])
        + (
            [
                ("Library sequences loaded", f"{stats.library_loaded or 0:,}"),
                ("Library sequences saved", f"{stats.library_saved or 0:,}"),
            ]
            if stats.library_loaded is not None or stats.library_saved is not None
            else []
        )
    )


def stats_document(stats: Stats, config: Config) -> dict[str, object]:
    """The JSON statistics document."""
    from seqdedup.config import key_settings

    return {
        "statistics": {
            "lines": {"total": stats.total, "emitted": stats.emitted, "skipped": stats.skipped},
            "redundancy_pct": round(stats.redundancy_pct, 1),
            "sequences": {"unique_tracked": stats.unique_sequences},
            "library": {"loaded": stats.library_loaded or 0, "saved": stats.library_saved or 0},
            **({"files": stats.files} if stats.files is not None else {}),
            **({"streams": stats.streams} if stats.streams is not None else {}),
        },
        "configuration": {
            "window_size": config.window_size,
            "max_history": "unlimited" if config.max_history is None else config.max_history,
            "max_unique_sequences": (
                "unlimited" if config.max_unique_sequences is None else config.max_unique_sequences
            ),
            "skip_chars": config.skip_chars,
            "skip_fields": config.skip_fields,
            "delimiter": config.delimiter.decode("utf-8", "backslashreplace"),
            "byte_mode": config.byte_mode,
            "keys": key_settings(config),
            **(
                {
                    "streams": {
                        "by": config.stream_by,
                        "by_json": config.stream_by_json,
                        "idle": config.stream_idle,
                        "max": config.max_streams,
                    }
                }
                if config.stream_split
                else {}
            ),
        },
    }


def explain_skipped(
    start: int,
    end: int,
    match_start: int,
    match_end: int,
    count: int,
    file: str = "",
    match_file: str = "",
    named: bool = False,
    **more: object,
) -> str:
    """A piece's explanation; ``named``: say which input it and its source lie in."""
    where = f" of {file}" if named else ""
    lines = f"Line {start}{where}" if start == end else f"Lines {start}-{end}{where}"
    if "sequence" in more:
        return (
            f"EXPLAIN: {lines} skipped (duplicate of library sequence {more['sequence']} "
            f"records {match_start}-{match_end}, seen {count}x)"
        )
    source_where = f" of {match_file}" if named else ""
    source = (
        f"line {match_start}{source_where}"
        if start == end
        else f"lines {match_start}-{match_end}{source_where}"
    )
    return f"EXPLAIN: {lines} skipped (duplicate of {source}, seen {count}x)"


def explain_bypassed(line: str, pattern: str) -> str:
    return f"EXPLAIN: {line} bypassed (matched bypass pattern '{pattern}')"


def explain_unmatched(line: str) -> str:
    return f"EXPLAIN: {line} passed through (no track pattern matched)"


class Inputs:
    """The inputs of a run (files, one after another): their names and the
    run-wide number of each one's first record, to give record numbers per input."""

    def __init__(self, names: Sequence[str]) -> None:
        # A name with a newline would cut a marker in two records: control characters
        # are written as visible escapes.
        self.names = ["(standard input)" if name == "-" else visible(name) for name in names]
        self.named = len(self.names) > 1  # only then do markers and explanations name them
        self.starts = [1]
        self._first = self.name(0)

    def begin(self, first_number: int) -> None:
        """The next stream starts at run-wide record number ``first_number``."""
        self.starts.append(first_number)

    def name(self, index: int) -> str:
        return self.names[index] if index < len(self.names) else f"input {index + 1}"

    def locate(self, number: int) -> tuple[str, int]:
        """The stream a run-wide record number lies in, and the number inside it."""
        if len(self.starts) == 1:  # one stream (so far): the numbers are its own
            return self._first, number
        index = bisect_right(self.starts, number) - 1
        return self.name(index), number - self.starts[index] + 1

    def line(self, number: int) -> str:
        """``Line N`` (with ``of NAME`` when inputs are named) of a run-wide number."""
        name, local = self.locate(number)
        return f"Line {local} of {name}" if self.named else f"Line {local}"


class MarkerTexts:
    """``--annotate`` with key options: a digest of each tracked record's text (its
    timestamps masked), so that a marker says when its run differs in its text from
    the occurrence it names (copies are one sequence by their keys, not their text).
    The digests of a loaded library (``library``) sit at the region's indices."""

    TRIM_SLACK = 1 << 16

    def __init__(self, digest: TextDigest, keep_back: int | None, library: array[int]) -> None:
        self.digest = digest
        self._texts = array("Q")
        self._offset = 0  # tracked index of _texts[0]
        self._keep_back = keep_back  # None: every record stays (as the keys do)
        self.library = library

    def append(self, records: Sequence[bytes]) -> None:
        """The next tracked records, as they are fed."""
        self._texts.extend(self.digest(records))

    def variants(self, start: int, source: int, length: int) -> int:
        """2 when tracked records ``start`` .. and the occurrence from ``source`` (< 0:
        in the library region) differ in their text, else 1."""
        own = self._slice(start, length)
        return 1 if own == self._slice(source, length) else 2

    def _slice(self, start: int, length: int) -> array[int]:
        if start < 0:
            library = self.library
            return library[len(library) + start : len(library) + start + length]
        at = start - self._offset
        assert at >= 0, "a marker's record was trimmed"  # (trim keeps what can be read)
        return self._texts[at : at + length]

    def trim(self, decided: int, open_source: int | None) -> None:
        """With a limited history: drop what no piece can name any more."""
        keep_back = self._keep_back
        if keep_back is None or len(self._texts) <= 2 * keep_back + self.TRIM_SLACK:
            return
        oldest = decided - keep_back
        if open_source is not None:
            oldest = min(oldest, open_source)
        drop = max(0, oldest - self._offset)
        del self._texts[:drop]
        self._offset += drop


def marker_digest(config: Config, kernel: ModuleType | None) -> TextDigest | None:
    """The digest of record texts a run's markers compare, when its records are
    compared by keys and its markers show variants; None otherwise."""
    if not config.marks_variants:
        return None
    from seqdedup.keys import text_digest

    return text_digest(config, kernel)


def marker_texts(
    config: Config, digest: TextDigest | None, library: array[int] | None
) -> MarkerTexts | None:
    """The texts a run's markers compare (:class:`MarkerTexts`), with the digests of
    the loaded ``library``'s records; None where markers compare none."""
    if digest is None:
        return None
    history = config.max_history
    keep_back = None if history is None else history + 2 * config.window_size
    return MarkerTexts(digest, keep_back, library if library is not None else array("Q"))


class PieceReport:
    """Markers (``--annotate``) and explanations (``--explain``) for the pieces
    attribution closes, with the filter decisions of pass-through records."""

    def __init__(
        self,
        config: Config,
        record_number: Callable[[int], int],
        locate: Callable[[int], tuple[str, int]] | None,
        on_explain: Callable[[str], None] | None,
        filter_patterns: Sequence[str],
        texts: MarkerTexts | None = None,
    ) -> None:
        from seqdedup.config import (
            DEFAULT_ANNOTATION,
            DEFAULT_FILES_ANNOTATION,
            DEFAULT_FILES_LIBRARY_ANNOTATION,
            DEFAULT_LIBRARY_ANNOTATION,
        )

        self.config = config
        self._number = record_number  # tracked index -> input record number
        self._locate = locate  # library region index -> (sequence name, offset)
        self.explain = on_explain
        self.marker_color = MARKER_COLOR if config.color else None
        self._patterns = filter_patterns
        self.inputs = Inputs(config.inputs)
        named = self.inputs.named
        self.annotation = (
            config.annotation_format or (DEFAULT_FILES_ANNOTATION if named else DEFAULT_ANNOTATION)
            if config.annotate
            else None
        )
        self._library_annotation = (
            self.annotation
            if config.annotation_format is not None
            else DEFAULT_FILES_LIBRARY_ANNOTATION
            if named
            else DEFAULT_LIBRARY_ANNOTATION
        )
        self.texts = texts
        # One input, no filters, the default text, no text compared: a marker's numbers
        # are its records' own indices plus one (marker() writes it without the fields)
        self._plain_markers = (
            config.annotate
            and config.annotation_format is None
            and not named
            and not config.filters
            and texts is None
        )

    def fields(self, piece: Piece) -> Fields:
        """The placeholders of a piece's marker and explanation (record numbers count
        inside each input)."""
        fields = self.span(piece.start, piece.end)
        fields["count"] = piece.count
        fields["window_size"] = self.config.window_size
        fields.update(self.source_fields(piece.source_start, piece.end - piece.start + 1))
        return fields

    def source_of(self, piece: Piece) -> Fields:
        """Where a piece's source lies (``--top``'s first seen): :meth:`source_fields`."""
        return self.source_fields(piece.source_start, piece.end - piece.start + 1)

    def number(self, tracked: int) -> int:
        """The input record number of a tracked record that attribution holds."""
        return self._number(tracked)

    def span(self, start: int, end: int, number: Callable[[int], int] | None = None) -> Fields:
        """Tracked records ``start`` .. ``end`` as ``start``, ``end`` (record numbers
        inside their input) and ``file``; ``number``: the tracked records' input
        numbers, if not attribution's."""
        number = number or self._number
        first = number(start)
        file, local = self.inputs.locate(first)
        return {"start": local, "end": local + number(end) - first, "file": file}

    def source_fields(self, source: int, length: int) -> Fields:
        """Where ``length`` records from tracked record ``source`` lie: ``match_file``,
        ``match_start``, ``match_end``, and ``sequence`` when they are library material
        (a negative ``source``)."""
        if source < 0:
            assert self._locate is not None
            name, offset = self._locate(source)
            return {
                "sequence": name,
                "match_file": f"library sequence {name}",
                "match_start": offset + 1,
                "match_end": offset + length,
            }
        number = self._number
        first = number(source)
        match_file, match_start = self.inputs.locate(first)
        return {
            "match_file": match_file,
            "match_start": match_start,
            "match_end": match_start + number(source + length - 1) - first,
        }

    def with_markers(
        self,
        out: list[bytes],
        written: list[bool],
        placed: list[tuple[int, bytes]],
        first_number: int,
    ) -> tuple[list[bytes], bool]:
        """Put each marker (``placed``: the tracked record it follows, and its text)
        just before the first record written after that record; return the records and
        markers, and whether a marker ends them."""
        written_at = list(compress(range(len(written)), written))
        merged: list[bytes] = []
        taken = 0
        for end, marker in placed:
            end_position = self._number(end) - first_number  # negative: before this
            index = bisect_right(written_at, end_position)
            merged += out[taken:index]
            taken = max(taken, index)
            merged.append(marker)
        merged += out[taken:]
        return merged, taken == len(out)

    def marker(self, piece: Piece) -> bytes:
        """A piece's ``--annotate`` marker (without a delimiter)."""
        source = piece.source_start
        if self._plain_markers and source >= 0:  # (DEFAULT_ANNOTATION, its fields inline)
            last = source + piece.end - piece.start
            text = (
                f"[DUPLICATE: Lines {piece.start + 1}-{piece.end + 1} matched lines "
                f"{source + 1}-{last + 1} (sequence seen {piece.count} times)]"
            )
            return painted(text.encode(), self.marker_color)
        assert self.annotation is not None
        fields = self.fields(piece)
        template = self._library_annotation if "sequence" in fields else self.annotation
        assert template is not None
        texts, variants = self.texts, 1
        if texts is not None:
            variants = texts.variants(piece.start, piece.source_start, piece.end - piece.start + 1)
        fields["variants"] = variants
        return painted(
            marker_text(template, fields, self.config.annotation_format), self.marker_color
        )

    def explain_all(
        self,
        pieces: list[Piece],
        decisions: list[int] | None,
        first_number: int,
        as_text: Sequence[int] = (),
    ) -> None:
        """Explanations in input order: a piece's stands at its last record. ``as_text``:
        record numbers of records that JSON keys compare as text."""
        from seqdedup.filters import TRACKED, UNMATCHED

        assert self.explain is not None
        named, inputs = self.inputs.named, self.inputs
        # (a record's own line before the piece that ends at it)
        lines = [
            (number, f"EXPLAIN: {inputs.line(number)} compared as text (not a JSON object)")
            for number in as_text
        ]
        for piece in pieces:
            fields = self.fields(piece)
            lines.append((self._number(piece.end), explain_skipped(**fields, named=named)))
        if decisions is not None:
            for offset, decision in enumerate(decisions):
                if decision == TRACKED:
                    continue
                number = first_number + offset
                if decision == UNMATCHED:
                    lines.append((number, explain_unmatched(inputs.line(number))))
                else:
                    line = inputs.line(number)
                    lines.append((number, explain_bypassed(line, self._patterns[decision])))
        lines.sort(key=lambda item: item[0])
        for _, line in lines:
            self.explain(line)


class TopSequences:
    """The repeated sequences that cost the most (``--top``): for each, the records it
    removed (its length times its repeats), how often it was seen, its length, where it
    was first seen and its first record. Kept for the sequences the sequences table
    keeps (least recently seen evicted past ``limit``), so exact when that is unlimited.

    The pieces are counted here (:meth:`observe`, every piece), or by the kernel's
    attribution (``counts``: identity -> pieces, read at the end), which then hands over
    only each sequence's first piece (:meth:`first_seen`): no Python per piece.
    """

    def __init__(
        self,
        limit: int | None,
        counts: Callable[[], dict[int, int]] | None = None,
        lazy_sources: bool = False,
    ) -> None:
        """``lazy_sources``: where a sequence was first seen is read only for the rows
        ranked (right where record numbers stay the tracked records' own: no filters)."""
        from collections import OrderedDict

        self._lazy = lazy_sources
        self._limit = limit
        self._counts = counts
        self.counted_elsewhere = self._counts is not None
        self._repeats: OrderedDict[int, int] = OrderedDict()  # identity -> pieces (here)
        self._entries: dict[int, _TopEntry] = {}  # identity -> its first piece's facts
        self._order = 0  # first observation order, for ties

    def observe(
        self,
        piece: Piece,
        fields_of: Callable[[Piece], Fields],
        first_record: bytes | None,
        named: bool = False,
    ) -> None:
        """Count one piece; a sequence seen for the first time also gets where it was
        first seen (``fields_of(piece)``: its source's marker fields, at least) and its
        first record."""
        repeats, identity = self._repeats, piece.identity
        count = repeats.get(identity)
        if count is None:
            self.first_seen(piece, fields_of, first_record, named)
            repeats[identity] = 1
        else:
            repeats[identity] = count + 1
            repeats.move_to_end(identity)
        if self._limit is not None and len(repeats) > self._limit:
            evicted, _ = repeats.popitem(last=False)
            del self._entries[evicted]

    def first_seen(
        self,
        piece: Piece,
        fields_of: Callable[[Piece], Fields],
        first_record: bytes | None,
        named: bool = False,
    ) -> None:
        """A sequence's first piece (again, after it was evicted): where it was first
        seen and its first record."""
        self._order += 1
        lazy = self._lazy
        self._entries[piece.identity] = {
            "length": piece.end - piece.start + 1,
            "first_seen": None if lazy else first_seen_of(fields_of(piece), named),
            "source": (fields_of, piece, named) if lazy else None,
            "first_record": first_record,
            "order": self._order,
        }
        limit = self._limit
        if self._counts is not None and limit is not None and len(self._entries) > 2 * limit:
            held = self._counts()  # drop what the kernel evicted
            self._entries = {i: e for i, e in self._entries.items() if i in held}

    def top(self, count: int) -> list[TopRow]:
        """The ``count`` costliest, most records removed first, then first seen first."""
        return [row for _, row in self.ranked(count)]

    def ranked(self, count: int) -> list[tuple[int, TopRow]]:
        """:meth:`top`'s rows, each with its sequence's key in the sequences table."""
        repeats = self._counts() if self._counts is not None else self._repeats
        ranked = sorted(
            (
                (identity, entry, repeats[identity])
                for identity, entry in self._entries.items()
                if identity in repeats
            ),
            key=lambda item: (-item[1]["length"] * item[2], item[1]["order"]),
        )
        return [
            (
                identity,
                {
                    "removed": entry["length"] * times,
                    "seen": times + 1,
                    "length": entry["length"],
                    "first_seen": self._first_seen(entry),
                    "first_record": (
                        None
                        if entry["first_record"] is None
                        else entry["first_record"].decode("utf-8", "backslashreplace")
                    ),
                },
            )
            for identity, entry, times in ranked[:count]
        ]

    def _first_seen(self, entry: _TopEntry) -> FirstSeen:
        first_seen = entry["first_seen"]
        if first_seen is None:
            assert entry["source"] is not None
            fields_of, piece, named = entry["source"]
            first_seen = first_seen_of(fields_of(piece), named)
            entry["first_seen"], entry["source"] = first_seen, None
        return first_seen


def first_seen_of(fields: Fields, named: bool) -> FirstSeen:
    """Where a sequence was first seen, as ``--top`` says it, from its source's fields."""
    if "sequence" in fields:
        return {
            "sequence": fields["sequence"],
            "records": [fields["match_start"], fields["match_end"]],
        }
    first_seen: FirstSeen = {"lines": [fields["match_start"], fields["match_end"]]}
    if named:
        first_seen["file"] = fields["match_file"]
    if "match_stream" in fields:  # --stream-by
        first_seen["stream"] = fields["match_stream"]
    return first_seen


def write_top(rows: list[TopRow], stream: TextIO, fmt: str = "table", color: bool = False) -> None:
    """The ``--top`` report alone (with ``--quiet``): a table, or one JSON document."""
    if fmt == "json":
        import json

        stream.write(json.dumps({"top_sequences": rows}, indent=2) + "\n")
        stream.flush()
        return
    from rich.console import Console

    console = _console(Console, stream, color)
    console.print(_top_table(rows, console.width))


def _console(console_type: type[Console], stream: TextIO, color: bool) -> Console:
    """A rich console on ``stream``: styled exactly when ``color`` says so (without,
    no escape at all, bold included; a terminal's width still counts)."""
    import os

    width = None
    if not color:
        try:
            width = os.get_terminal_size(stream.fileno()).columns
        except (AttributeError, ValueError, OSError):
            width = None
    return console_type(
        file=stream,
        highlight=False,
        markup=False,
        emoji=False,
        force_terminal=color,
        no_color=not color,
        width=width,
    )


def _top_table(rows: list[TopRow], width: int) -> Table:
    """The report as a table no wider than ``width``: the first record is shortened."""
    from rich.table import Table
    from rich.text import Text

    cells = []
    for row in rows:
        seen = row["first_seen"]
        where = (
            f"library {seen['sequence'][:12]} {seen['records'][0]}-{seen['records'][1]}"
            if "sequence" in seen
            else f"lines {seen['lines'][0]}-{seen['lines'][1]}"
            + (f" of {seen['file']}" if "file" in seen else "")
            + (f" (stream {seen['stream']})" if "stream" in seen else "")
        )
        numbers = [f"{row[key]:,}" for key in ("removed", "seen", "length")]
        cells.append([*numbers, visible(where), visible(row["first_record"] or "")])
    names = ["Removed", "Seen", "Length", "First seen", "First record"]
    widths = [max([len(name), *(len(cell[k]) for cell in cells)]) for k, name in enumerate(names)]
    room = max(12, width - sum(widths[:4]) - 3 * len(names) - 1)  # borders and padding
    widths[4] = min(widths[4], room)
    table = Table(title="Top repeated sequences", expand=False)
    for k, name in enumerate(names):
        table.add_column(name, justify="right" if k < 3 else "left", no_wrap=True, width=widths[k])
    for cell in cells:
        text = cell[4]
        if len(text) > widths[4]:
            text = text[: widths[4] - 1] + "…"
        # Text, never markup: a record's brackets and :codes: are shown as they are.
        table.add_row(*(Text(part) for part in (*cell[:4], text)))
    return table


MARKER_COLOR = b"\x1b[33m"  # markers: yellow
LINE_COLOR = b"\x1b[36m"  # summary lines: cyan
EXPLAIN_COLOR = "\x1b[2m"  # explanations: dim
RESET = "\x1b[0m"


def marker_text(template: str, fields: Fields, given: str | None) -> bytes:
    """A marker's text from its template; the default one (``given`` None) says at its
    end when the run differs in its text from its occurrence (under key options)."""
    text = template.format_map(fields)
    variants = fields.get("variants", 1)
    if variants > 1 and given is None:
        text = f"{text[:-1]} ({variants} variants of the text)]"
    return text.encode("utf-8", "surrogateescape")


def painted(text: bytes, color: bytes | None) -> bytes:
    """``text`` in ``color`` (an ANSI escape), or as it is."""
    return color + text + RESET.encode() if color else text


def color_wanted(choice: str, stream: object) -> bool:
    """``--color``: always, never, or (auto) when ``stream`` is a terminal that can
    show colour, unless NO_COLOR is set (FORCE_COLOR forces it)."""
    import os

    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    try:
        terminal = bool(isatty()) if isatty is not None else False
    except (OSError, ValueError):
        terminal = False
    return terminal and os.environ.get("TERM") != "dumb"


def write_stats(
    stats: Stats, config: Config, stream: TextIO, fmt: str = "table", color: bool = False
) -> None:
    """Print the statistics to ``stream`` as a table or as one JSON document (the table
    in colour with ``color``)."""
    if fmt == "json":
        import json

        document = stats_document(stats, config)
        if stats.top_sequences is not None:
            document["top_sequences"] = stats.top_sequences
        stream.write(json.dumps(document, indent=2) + "\n")
        stream.flush()
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Deduplication statistics")
    table.add_column("Metric")
    table.add_column("Value", justify="right")
    for name, value in stats_rows(stats, config):
        table.add_row(name, value)
    console = _console(Console, stream, color)
    console.print(table)
    if stats.top_sequences is not None:
        console.print(_top_table(stats.top_sequences, console.width))
