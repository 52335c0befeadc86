"""The two ways a run is fed, behind one interface (:class:`BytePath`).

- :class:`ChunkPath`: the kernel's chunk path. Raw bytes in, the kept bytes out,
  decided, attributed and counted by the kernel with no Python object per record; it
  serves every run that needs nothing per record from Python (see
  :func:`seqdedup.run.plan.plan_run`).
- :class:`RecordPath`: records (``bytes``) in, through filters, keys and the matcher,
  with the Python stages for markers, explanations, ``--top`` and the library around
  it; raw bytes are split here first.

Each is given the run's stages (:class:`seqdedup.run.stages.Parts`) and books what it
decides with the run's :class:`seqdedup.run.ledger.Ledger`.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from itertools import compress
from typing import TYPE_CHECKING, Any, Protocol, cast

from seqdedup.base.records import RecordSplitter
from seqdedup.config.timelimit import PatternTimeout
from seqdedup.engine.attribution import Attributor, ChunkAttribution
from seqdedup.engine.pieces import unpack_pieces
from seqdedup.keys.filters import TRACKED
from seqdedup.run.ledger import DecidedStep, Ledger
from seqdedup.run.markers import RESET
from seqdedup.run.top import HEAD_SEARCH, shown_head

if TYPE_CHECKING:
    from seqdedup._kernel import Matcher as ChunkMatcher
    from seqdedup._kernel import RunsTaken
    from seqdedup.config.groups import KeyOptions
    from seqdedup.engine.attribution import KernelAttributor
    from seqdedup.engine.pieces import Piece
    from seqdedup.run.plan import Parts


class BytePath(Protocol):
    """What both paths offer for raw input."""

    def feed_bytes(self, chunk: bytes) -> bytes: ...
    def end_bytes(self, last: bool, cut: bool = False) -> bytes: ...


def split_ending(final: bytes, options: KeyOptions) -> tuple[bytes, bytes]:
    """A final record without a delimiter, and the newline that ends it: in text mode
    with another delimiter, a newline (or CRLF) that ends the input ends the last record
    (it is not part of the key, and is written back after it as read)."""
    if options.byte_mode or options.delimiter == b"\n":
        return final, b""
    stripped = final.removesuffix(b"\n")
    if stripped != final:
        stripped = stripped.removesuffix(b"\r")
    return stripped, final[len(stripped) :]


def markers_due(parts: Parts, decided: DecidedStep, final: bool) -> list[tuple[int, bytes]]:
    """The record path's markers (``--annotate``) or summary lines (``--fold``) now
    due, each with the tracked record it follows."""
    report, folder = parts.report, parts.folder
    if report.annotation is not None:
        markers = [(piece.end, report.marker(piece)) for piece in decided.pieces]
        if report.texts is not None:  # (what no later marker reads goes)
            report.texts.trim(parts.attributor.decided, parts.attributor.open_source)
        return markers
    if folder is None:
        return []
    from seqdedup.run.fold import skipped_runs

    runs = skipped_runs(decided.first, decided.keep, decided.records)
    lines = folder.add_runs(decided.first, len(decided.keep), runs, decided.pieces)
    return lines + folder.end() if final else lines


def joined(out: list[bytes], delimiter: bytes, ending: bytes | None) -> bytes:
    """Records (and lines) as output bytes: each followed by the delimiter, the last by
    ``ending`` instead when it is given (a final record that had no delimiter)."""
    if not out:
        return b""
    return delimiter.join(out) + (delimiter if ending is None else ending)


def idle_lines(parts: Parts, ledger: Ledger, pending: list[bytes]) -> list[bytes]:
    """The input is idle: with ``--fold``, the open run's line so far, counting the
    records a decided repeat already covers (certain to go; they only wait for their
    own window). ``pending``: the records fed and not decided, in input order."""
    folder = parts.folder
    if folder is None:
        return []
    matcher = parts.matcher
    covered = matcher.cover + 1 - matcher.decided
    if covered > 0 and not parts.filters:  # (pending[0] is tracked record `decided`)
        folder.settle(matcher.decided, pending[:covered], ended=False)
    return ledger.lines(folder.idle())


def _first_shown(joined: bytes, delimiter: bytes) -> bytes:
    """:func:`seqdedup.run.top.shown_head` of a run's records joined: its first record when
    that is not blank (the common case: no split), else its first that is not."""
    first = joined.partition(delimiter)[0]
    if first.strip(b" \t\r\n\v\f"):
        return first
    return shown_head(joined.split(delimiter, HEAD_SEARCH)[:HEAD_SEARCH])


class ChunkPath:
    """Raw chunks through the kernel's chunk path. With ``--annotate``, each closed
    piece's marker is put where its skipped run lies in the output (the kernel says
    where each run lies; a piece of a run that reached the end of the last chunk goes
    first); with ``--fold``, each summary line the same way (the kernel hands over each
    run's records). With filters, the kernel splits each chunk, the filters classify its
    records as one region, and the kernel decides the tracked ones and writes the
    output, the passed-through records in their place (markers and summary lines then
    take the record path)."""

    def __init__(self, parts: Parts, ledger: Ledger, kernel: ChunkMatcher) -> None:
        self._parts = parts
        self._ledger = ledger
        self._kernel = kernel
        # (the plan feeds chunks only where the kernel attributes, or nothing does)
        assert not isinstance(parts.attributor, Attributor)
        self._attributor = cast("ChunkAttribution", parts.attributor)
        self._markers = parts.report.annotation is not None
        self._filters = parts.filters if parts.filters else None
        # --annotate alone, its default text: the kernel writes the markers into the
        # output from the pieces packed (no Piece made, unless one repeats a library)
        # (markers are read from the kernel's attribution: the plan's "kernel")
        packer = cast("KernelAttributor", parts.attributor)
        self._packer = (
            packer
            if self._markers
            and parts.report.plain_markers
            and parts.folder is None
            and parts.saver is None
            and parts.top is None
            and packer.hands_packed
            else None
        )

    def feed_bytes(self, chunk: bytes) -> bytes:
        if self._filters is not None:
            return self._filtered(self._kernel.split_chunk(chunk))
        out, hashes, runs, decided, kept, offsets = self._kernel.feed_chunk(chunk)
        if self._packer is not None:
            return self._marked_packed(self._packer, out, hashes, runs, (decided, kept), offsets)
        placed = self._account(hashes, runs, decided, kept)
        return self._marked(out, runs, offsets, placed) if placed else out

    def _marked_packed(
        self,
        attributor: KernelAttributor,
        out: bytes,
        hashes: bytes,
        runs: RunsTaken,
        counts: tuple[int, int],
        offsets: bytes,
    ) -> bytes:
        """Book what the kernel decided (``counts``: decided, kept); the output with
        each closed piece's default marker, written by the engine's mark_runs from the
        pieces packed."""
        assert isinstance(runs, bytes)  # (no run heads without --top, fold or saving)
        attributor.append_keys(hashes)
        packed = attributor.add_runs_packed(counts[0], runs)
        self._ledger.count(*counts)
        if not packed:
            return out
        report = self._parts.report
        color = report.marker_color
        delimiter = self._parts.key_options.delimiter
        prefix, suffix = (color, RESET.encode()) if color else (b"", b"")
        marked = self._parts.plan.engine.mark_runs(
            out, runs, offsets, packed, delimiter, prefix, suffix
        )
        if marked is not None:
            return marked
        placed = [(piece.end, report.marker(piece)) for piece in unpack_pieces(packed)]
        return self._marked(out, runs, offsets, placed)

    def end_bytes(self, last: bool, cut: bool = False) -> bytes:
        """Decide the rest of a byte stream; ``last``: nothing follows it; ``cut``: it
        was cut short, so the bytes after its last delimiter are no record (dropped)."""
        kernel, parts, ledger = self._kernel, self._parts, self._ledger
        attributor = self._attributor
        if self._filters is not None:
            out = self._filtered(kernel.split_final(delimit_final=not last, drop_final=cut))
            ledger.note_pieces(attributor.finish())
            return out
        out, hashes, runs, decided, kept, offsets = kernel.finish_chunks(
            delimit_final=not last, drop_final=cut
        )
        placed = self._account(hashes, runs, decided, kept)
        closed = attributor.finish()  # a piece whose run reached the end
        ledger.note_pieces(closed)
        if parts.saver is not None:
            parts.saver.observe_runs(attributor.decided, 0, [], [], closed)
        if self._markers:
            placed += [(piece.end, parts.report.marker(piece)) for piece in closed]
        elif parts.folder is not None:  # the run that reached the end: its line
            placed += parts.folder.add_runs(attributor.decided, 0, [], closed)
            placed += parts.folder.end()
        return self._marked(out, runs, offsets, placed) if placed else out

    def _filtered(self, split: tuple[bytes, bytes, int]) -> bytes:
        """Classify the records the kernel split, then have it decide them."""
        assert self._filters is not None
        region, bounds, first = split
        try:
            mask = self._filters.tracked_mask(region, bounds, self._parts.key_options.delimiter)
        except PatternTimeout as exc:
            line = self._parts.report.inputs.line(first + 1 + exc.index)
            raise exc.at(line.lower()) from None
        out, hashes, runs, decided, kept, numbers, released = self._kernel.decide_split(mask)
        self._account(hashes, runs, decided, kept, numbers, released)
        return out

    def _account(
        self,
        hashes: bytes,
        runs: bytes | list[Any],
        decided: int,
        kept: int,
        numbers: bytes | None = None,
        released: int | None = None,
    ) -> list[tuple[int, bytes]]:
        """Book what the kernel decided (``decided`` tracked records; ``released`` in
        all, with filters, and their input ``numbers``): attribution and statistics;
        the markers or summary lines now due, with the tracked record each follows."""
        parts, ledger, attributor = self._parts, self._ledger, self._attributor
        folder, saver = parts.folder, parts.saver
        attributor.append_keys(hashes)
        first = attributor.decided
        joined = folder is None or folder.takes_joined  # (the saver takes them joined)
        if isinstance(runs, list):  # the runs carry their first record, or all of them
            whole = folder is not None or saver is not None  # (all of them: run_heads=2)
            if parts.top is not None:  # (before add_runs)
                ledger.run_heads_of(first, decided, self._heads(runs) if whole else runs)
            if not joined:
                runs = self._split(runs)
        pieces = attributor.add_runs(decided, runs, numbers)
        ledger.note_pieces(pieces)
        ledger.count(decided if released is None else released, kept)
        if saver is not None:
            assert isinstance(runs, list)
            saver.observe_runs(first, decided, self._kernel.new_stretches, runs, pieces)
        if folder is not None:
            assert isinstance(runs, list)
            folder.append_keys(hashes)
            joiner = parts.key_options.delimiter if joined else None
            return folder.add_runs(first, decided, runs, pieces, joiner)
        return (
            [(piece.end, parts.report.marker(piece)) for piece in pieces] if self._markers else []
        )

    def _heads(self, runs: list[tuple[int, int, bytes]]) -> list[tuple[int, int, bytes]]:
        """Each run with its first record (the kernel handed its records joined)."""
        delimiter = self._parts.key_options.delimiter
        return [(start, stop, _first_shown(data, delimiter)) for start, stop, data in runs]

    def _split(self, runs: list[tuple[int, int, bytes]]) -> list[tuple[int, int, list[bytes]]]:
        """Runs whose records the kernel handed over as one stretch of bytes, split."""
        delimiter = self._parts.key_options.delimiter
        return [(start, stop, data.split(delimiter)) for start, stop, data in runs]

    def _marked(
        self, out: bytes, runs: RunsTaken, offsets: bytes, placed: list[tuple[int, bytes]]
    ) -> bytes:
        """The output with each marker (and a delimiter) where the run of the tracked
        record it follows lies."""
        starts = array("q")
        if isinstance(runs, bytes):
            starts.frombytes(runs)
            starts = starts[0::2]
        else:
            starts.extend(run[0] for run in runs)
        at = array("q")
        at.frombytes(offsets)
        delimiter = self._parts.key_options.delimiter
        view = memoryview(out)  # slices without copies: the join copies once
        parts: list[bytes | memoryview] = []
        taken = 0
        for end, marker in placed:
            run = bisect_right(starts, end) - 1  # -1: a run of an earlier chunk
            offset = at[run] if run >= 0 else 0
            parts += (view[taken:offset], marker, delimiter)
            taken = offset
        parts.append(view[taken:])
        return b"".join(parts)


def tracked_of(records: list[bytes], decided: int, tracked_at: list[int] | None) -> list[bytes]:
    """The decided tracked records among the released ``records`` (with filters, at
    ``tracked_at``)."""
    if tracked_at is None:
        return records[:decided]
    return [records[position] for position in tracked_at]


def book(ledger: Ledger, decided: DecidedStep, cut: int, written: list[bool]) -> None:
    """The record path's step booked: ``cut`` records released, ``written`` each."""
    ledger.book(decided)
    ledger.count(cut, cut - decided.keep.count(False))
    if cut:
        ledger.written_last(written[-1])


class RecordPath:
    """Records through filters, keys, the matcher and the Python stages."""

    def __init__(self, parts: Parts, ledger: Ledger, ordered: bool) -> None:
        self._parts = parts
        self._ledger = ledger
        # The decided records' bytes are read by --top, the library and --fold.
        self._reads_records = ledger.reads_records or parts.folder is not None
        # Markers and explanations must follow a piece's last record and precede what
        # comes after it: with them on, nothing past an open piece is released early.
        self._ordered = ordered
        self._pending: list[bytes] = []  # fed, not yet released, in input order
        # With filters: each pending record's filter decision, and where the tracked
        # ones stand in _pending.
        self._pending_decisions: list[int] = []
        self._tracked_at: list[int] = []
        self._as_text: list[int] = []  # --explain: record numbers compared as text
        self._splitter: RecordSplitter | None = None  # raw bytes, split here
        # The oldest pending records already written because their decision was certain
        # (settled): new material never waits for its window. Not with markers or
        # explanations, which must come before the records after a duplicate run.
        self._written_early = 0
        self._hashes = _sized_hasher(parts)  # (a sized matcher notes each batch's sizes)

    # -- bytes --------------------------------------------------------------------------
    def feed_bytes(self, chunk: bytes) -> bytes:
        if self._splitter is None:
            self._splitter = RecordSplitter(self._parts.key_options.delimiter)
        return self._joined(self.feed(self._splitter.split(chunk)), final=False)

    def end_bytes(self, last: bool, cut: bool = False) -> bytes:
        """Decide the rest of a byte stream; ``last``: nothing follows it; ``cut``: it
        was cut short, so the bytes after its last delimiter are no record (dropped)."""
        final = self._splitter.finish() if self._splitter is not None and not cut else None
        self._splitter = None
        ending = b""
        if final is not None:
            final, ending = split_ending(final, self._parts.key_options)
        out = self.feed([final]) if final is not None else []
        out += self.end_records()
        return self._joined(out, final=final is not None and (last or bool(ending)), ending=ending)

    def _joined(self, out: list[bytes], final: bool, ending: bytes = b"") -> bytes:
        last = final and self._ledger.last_record_written  # (the input's had none)
        return joined(out, self._parts.key_options.delimiter, ending if last else None)

    # -- records ------------------------------------------------------------------------
    def feed(self, records: Iterable[bytes]) -> list[bytes]:
        """Add records; return those now decided for output (and markers)."""
        parts = self._parts
        batch = records if isinstance(records, list) else list(records)
        tracked = batch
        base = len(self._pending)
        places: Sequence[int] = range(len(batch))  # where the records matched lie in the batch
        try:
            if parts.filters:
                decisions = parts.filters.classify(batch)
                is_tracked = list(map(TRACKED.__eq__, decisions))
                places = list(compress(places, is_tracked))  # masks see the tracked ones only
                self._pending_decisions += decisions
                self._tracked_at += compress(range(base, base + len(batch)), is_tracked)
                tracked = list(compress(batch, is_tracked))
            hashes = (self._hashes or parts.keys.hashes)(tracked)
        except PatternTimeout as exc:
            position = exc.index if tracked is batch else places[exc.index]
            number = self._ledger.released + base + 1 + position
            raise exc.at(parts.report.inputs.line(number).lower()) from None
        json = parts.keys.json
        if json is not None and json.track_text and json.as_text:
            # --explain: which records were compared as text (not a JSON object)
            at = self._tracked_at[len(self._tracked_at) - len(tracked) :] if parts.filters else None
            first = self._ledger.released + 1 + (0 if at is not None else base)
            self._as_text += [first + (at[i] if at is not None else i) for i in json.as_text]
        self._pending += batch
        if parts.report.texts is not None:
            parts.report.texts.append(tracked)
        parts.attributor.append_keys(hashes)
        if parts.folder is not None:
            parts.folder.append_keys(hashes)
        return self._release(parts.matcher.push(hashes))

    def idle_lines(self) -> list[bytes]:
        """The input is idle: see :func:`idle_lines`."""
        return idle_lines(self._parts, self._ledger, self._pending)

    def end_records(self) -> list[bytes]:
        """End of a stream of records: the rest of it."""
        return self._release(self._parts.matcher.finish(), final=True)

    def _filtered(
        self, keep: list[bool], tracked_at: list[int]
    ) -> tuple[int, list[bool], list[int]]:
        """With filters: how many pending records are released (up to the first
        undecided tracked one, or the last one an open piece lets go), which of them are
        written, and their filter decisions."""
        inverse = self._parts.markers.inverse
        decided = len(keep)
        tracked_at_all = self._tracked_at
        cut = tracked_at_all[decided] if decided < len(tracked_at_all) else len(self._pending)
        if self._ordered and self._parts.attributor.open_piece:
            # Nothing past an open piece yet: its marker and explanation come first.
            cut = tracked_at[-1] + 1 if tracked_at else 0
        written = [not inverse] * cut  # pass-through records
        for position, kept_flag in zip(tracked_at, keep, strict=True):
            written[position] = kept_flag != inverse
        decisions = self._pending_decisions[:cut]
        del self._pending_decisions[:cut]
        self._tracked_at = [position - cut for position in self._tracked_at[decided:]]
        return cut, written, decisions

    def _release(self, keep: list[bool], final: bool = False) -> list[bytes]:
        """Hand out the records up to the first undecided tracked one: attribute the
        decided, cut what is released, book it, explain it, place the markers."""
        first_number = self._ledger.released + 1
        tracked_at = self._tracked_at[: len(keep)] if self._parts.filters else None
        pieces = self._attribute(keep, tracked_at, first_number, final)
        cut, written, decisions = self._cut(keep, tracked_at)
        records = self._pending[:cut]
        del self._pending[:cut]
        early = min(self._written_early, cut)
        out = list(compress(records[early:], written[early:]))
        self._written_early -= early
        tracked_records = tracked_of(records, len(keep), tracked_at) if self._reads_records else []
        first = self._parts.attributor.decided - len(keep)
        new_material = self._ledger.take_new_material()
        decided = DecidedStep(first, keep, tracked_records, new_material, pieces)
        book(self._ledger, decided, cut, written)
        if self._parts.report.explain is not None:
            self._explain(pieces, decisions, first_number, cut)
        placed = markers_due(self._parts, decided._replace(new_material=None), final)
        if placed:  # (among the records that ``out`` holds: those written early are not)
            out, marker_last = self._parts.report.with_markers(
                out, written[early:], placed, first_number + early
            )
            if marker_last:
                self._ledger.written_last(False)  # a marker ends this output
        if not self._ordered and not final:
            out += self._settled()
        return out

    def _attribute(
        self, keep: list[bool], tracked_at: list[int] | None, first_number: int, final: bool
    ) -> list[Piece]:
        """The pieces the decided records close (with filters, their input numbers)."""
        attributor = self._parts.attributor
        numbers = None if tracked_at is None else [first_number + at for at in tracked_at]
        pieces = attributor.add(keep, numbers)
        if final:
            pieces += attributor.finish()
        return pieces

    def _cut(
        self, keep: list[bool], tracked_at: list[int] | None
    ) -> tuple[int, list[bool], list[int] | None]:
        """How many pending records are released, which are written, and (with
        filters) their filter decisions."""
        if tracked_at is not None:
            return self._filtered(keep, tracked_at)
        written = [not k for k in keep] if self._parts.markers.inverse else keep
        return len(keep), written, None

    def _explain(
        self, pieces: list[Piece], decisions: list[int] | None, first_number: int, cut: int
    ) -> None:
        as_text: list[int] = []
        if self._as_text:
            last = first_number + cut - 1
            as_text = [n for n in self._as_text if n <= last]
            del self._as_text[: len(as_text)]
        self._parts.report.explain_all(pieces, decisions, first_number, as_text)

    def _settled(self) -> list[bytes]:
        """The pending records whose decision is certain already (the matcher's
        ``settled``), not written yet: they are written now, and booked when decided."""
        parts = self._parts
        matcher, inverse = parts.matcher, parts.markers.inverse
        settled, cover = matcher.settled, matcher.cover
        tracked = matcher.decided  # the tracked index of the next tracked pending record
        tracked_at = self._tracked_at if parts.filters else None
        is_tracked = set(tracked_at) if tracked_at is not None else None
        pending, out = self._pending, []
        if parts.folder is not None:  # a run ended by a settled record: its line first
            first = self._ledger.released + 1
            before = parts.folder.before_settled(matcher, pending, tracked_at, first)
            out = self._ledger.lines(before)
        position = 0
        for position in range(len(pending)):
            if is_tracked is not None and position not in is_tracked:
                written = not inverse  # passed through
            else:
                if tracked >= settled:
                    break
                written = (tracked > cover) != inverse
                tracked += 1
            if written and position >= self._written_early:
                out.append(pending[position])
        else:
            position = len(pending)
        self._written_early = max(self._written_early, position)
        return out


def _sized_hasher(parts: Parts) -> Callable[[Sequence[bytes]], bytes] | None:
    """Under a minimum size, the keys' hasher that notes each batch's sizes for the
    sized matcher (None: the keys' own)."""
    if not parts.rule.min_size:
        return None
    from seqdedup.engine.sized import SizedMatcher

    matcher = parts.matcher
    return matcher.hasher(parts.keys) if isinstance(matcher, SizedMatcher) else None
