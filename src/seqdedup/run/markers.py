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
from typing import TYPE_CHECKING, TypedDict

from seqdedup.base.errors import visible
from seqdedup.config.markerfields import default_marker

if TYPE_CHECKING:
    from seqdedup.config.groups import MarkerOptions, RuleOptions
    from seqdedup.engine.pieces import Piece
    from seqdedup.keys.maker import TextDigest


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
    text: str  # fold lines: the first folded record, shortened (foldlines.folded_text)


# A fold line as an object (``Deduplicator(on_fold=...)``): its fields, the placeholders
# of --fold-format (removed, copies, extra, length, id, digest, count, first_time,
# last_time, part, continues, variants, text, window_size, start, end, file, match_*,
# stream)
FoldEvent = Fields


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


def marker_texts(
    rule: RuleOptions, digest: TextDigest | None, library: array[int] | None
) -> MarkerTexts | None:
    """The texts a run's markers compare (:class:`MarkerTexts`), as far back as the
    ``rule``'s history reaches, with the digests of the loaded ``library``'s records;
    None where markers compare none."""
    if digest is None:
        return None
    history = rule.max_history
    keep_back = None if history is None else history + 2 * rule.window_size
    return MarkerTexts(digest, keep_back, library if library is not None else array("Q"))


class PieceReport:
    """Markers (``--annotate``) and explanations (``--explain``) for the pieces
    attribution closes, with the filter decisions of pass-through records (the
    markers' options, W for their fields)."""

    def __init__(
        self,
        options: MarkerOptions,
        window_size: int,
        record_number: Callable[[int], int],
        locate: Callable[[int], tuple[str, int]] | None,
        on_explain: Callable[[str], None] | None,
        filter_patterns: Sequence[str],
        texts: MarkerTexts | None = None,
        on_fold: Callable[[Fields], None] | None = None,
    ) -> None:
        from seqdedup.config.markerfields import (
            DEFAULT_ANNOTATION,
            DEFAULT_FILES_ANNOTATION,
            DEFAULT_FILES_LIBRARY_ANNOTATION,
            DEFAULT_LIBRARY_ANNOTATION,
        )

        self.options = options
        self._window_size = window_size
        self._number = record_number  # tracked index -> input record number
        self._locate = locate  # library region index -> (sequence name, offset)
        self.explain = on_explain
        self.on_fold = on_fold  # --fold: each line's fields, as the line is made
        self.marker_color = MARKER_COLOR if options.color else None
        self._patterns = filter_patterns
        self.inputs = Inputs(options.inputs)
        named = self.inputs.named
        template = options.annotation_format
        self.annotation = (
            template or (DEFAULT_FILES_ANNOTATION if named else DEFAULT_ANNOTATION)
            if options.annotate
            else None
        )
        self._library_annotation = (
            self.annotation
            if template is not None
            else DEFAULT_FILES_LIBRARY_ANNOTATION
            if named
            else DEFAULT_LIBRARY_ANNOTATION
        )
        self.texts = texts
        # One input, no filters, the default text, no text compared: a marker's numbers
        # are its records' own indices plus one (marker() writes it without the fields)
        self._plain_markers = (
            options.annotate
            and template is None
            and not named
            and not filter_patterns
            and texts is None
        )

    @property
    def plain_markers(self) -> bool:
        """Whether every marker but a library sequence's is the default text with its
        records' own numbers (:func:`default_marker`)."""
        return self._plain_markers

    @property
    def filtered(self) -> bool:
        """Whether filters decide which records are tracked."""
        return bool(self._patterns)

    def fields(self, piece: Piece) -> Fields:
        """The placeholders of a piece's marker and explanation (record numbers count
        inside each input)."""
        fields = self.span(piece.start, piece.end)
        fields["count"] = piece.count
        fields["window_size"] = self._window_size
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
            text = default_marker(piece.start, piece.end, source, piece.count)
            return painted(text, self.marker_color)
        assert self.annotation is not None
        fields = self.fields(piece)
        template = self._library_annotation if "sequence" in fields else self.annotation
        assert template is not None
        texts, variants = self.texts, 1
        if texts is not None:
            variants = texts.variants(piece.start, piece.source_start, piece.end - piece.start + 1)
        fields["variants"] = variants
        return painted(
            marker_text(template, fields, self.options.annotation_format), self.marker_color
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
        from seqdedup.keys.filters import TRACKED, UNMATCHED

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


def span(first: int | str, last: int | str) -> str:
    """``line 7`` or ``lines 7-9``."""
    return f"line {first}" if first == last else f"lines {first}-{last}"
