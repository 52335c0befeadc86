"""``--fold``: one summary line in place of each run of skipped records (docs/ci-logs.md:
Folding repeats).

A *run* is a maximal stretch of consecutive skipped tracked records of one input. Its
*sequence* is the shortest block its first piece repeats (the first piece's keys have
that period: a 36-record piece of three equal 12-record blocks has a 12-record
sequence); the run holds ``copies`` whole copies of it from its start on, and ``extra``
records after them (a partial copy, or other repeated material). The sequence's id is
the blake2b-128 digest of its records' keys as the library encodes records, so every
fold of equal content carries the same id, in every run.

A run that goes on gets an interim line every ``--fold-every`` removed records and when
the input is idle (:meth:`Folder.idle`); each line covers its own *part* of the run
(its ``removed`` counts add up to the records skipped) and the next part says that it
continues the run.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING

from seqdedup.base.cengine import CEngine
from seqdedup.base.engine import Engine
from seqdedup.base.errors import SeqdedupError, visible
from seqdedup.config.groups import Duration
from seqdedup.config.normalize import timestamp_seconds
from seqdedup.engine.choice import compiled
from seqdedup.engine.pyengine import PYTHON
from seqdedup.engine.pykernel import KEY
from seqdedup.keys.maker import TextDigest, text_digest
from seqdedup.run.foldlines import SHORT_ID, folded_text, line_text, plain_text
from seqdedup.run.foldruns import (
    VARIANTS_TRACKED,
    FoldRun,
    Sequences,
    _Unit,
    key_bytes,
    sequence_row,
    variants_of,
)
from seqdedup.run.markers import LINE_COLOR, painted

if TYPE_CHECKING:
    from seqdedup.config.groups import FoldOptions, KeyOptions, RuleOptions
    from seqdedup.engine.attribution import Attribution
    from seqdedup.engine.matcher import Matcher
    from seqdedup.engine.pieces import Piece
    from seqdedup.keys.maker import KeyMaker
    from seqdedup.library.save import RunSaver
    from seqdedup.run.markers import Fields, PieceReport


class Folder:
    """Summary lines for the runs of skipped records, each with the tracked record it
    follows (placed as markers are: before the first record written after that one)."""

    def __init__(
        self,
        options: FoldOptions,
        rule: RuleOptions,
        key_options: KeyOptions,
        report: PieceReport,
        keys: KeyMaker,
        open_source: Callable[[], int | None],
        on_sequence: Callable[[bytes, list[bytes]], None] | None = None,
        engine: Engine = PYTHON,
    ) -> None:
        self._options = options
        self._sequences = Sequences(keys, open_source, on_sequence, engine)
        self._match = self._sequences.match
        # The timestamp scan in the kernel when it runs.
        self._stamp = engine.first_timestamp
        self._report = report
        self._every, self._window = options.fold_every, rule.window_size
        self._keys = bytearray()  # key hashes of the tracked records not yet decided
        self._key_base = 0  # the tracked index of the first of them
        self._taken = 0  # tracked records before this one were taken by settle()
        # With filters, the input record numbers of records taken early (not decided
        # yet, so attribution does not hold them): tracked index -> number.
        self._early_numbers: dict[int, int] = {}
        self._run: FoldRun | None = None
        self._folded = FoldedCounts(rule.max_unique_sequences)
        self._text = text_digest(key_options, engine.kernel)
        kernel = compiled(engine)
        whole = not isinstance(self._every, Duration)
        shared = (self._sequences, self._folded, self._stamp, keys, self._text)
        self._whole = (
            WholeRuns(options, rule, report, kernel, *shared)
            if kernel is not None and whole and on_sequence is None
            else None
        )
        # Whether add_runs takes each run's records joined (it splits only the runs it
        # does not line at once)
        self.takes_joined = self._whole is not None

    def append_keys(self, hashes: bytes) -> None:
        self._keys += key_bytes(hashes)

    def add_runs(
        self,
        first: int,
        size: int,
        runs: Sequence[tuple[int, int, Sequence[bytes]]] | Sequence[tuple[int, int, bytes]],
        pieces: list[Piece],
        delimiter: bytes | None = None,
    ) -> list[tuple[int, bytes]]:
        """The same, given as the runs of skipped records among tracked records
        ``first`` .. ``first + size - 1``: ``(start, stop, their records)``, the
        records as one string joined by ``delimiter`` when it is given."""
        lines: list[tuple[int, bytes]] = []
        run = self._run
        firsts = {piece.start: piece for piece in pieces}
        if run is not None and run.first_piece is None:
            run.first_piece = firsts.get(run.start)
        base = self._key_base
        keys = bytes(self._keys[(first - base) * KEY : (first + size - base) * KEY])
        whole = self._whole
        for start, stop, records in runs:
            if run is not None and start > run.stop:  # a kept record ended it
                lines += self._complete(run)
                run = None
            if (
                whole is not None
                and run is None
                and start >= self._taken
                and stop < first + size
                and whole.takes(start, stop, firsts.get(start))
            ):
                piece = firsts[start]
                lines.append(
                    whole.line(keys, start - first, start, stop, piece, records, delimiter)
                )
                continue
            if isinstance(records, bytes):
                assert delimiter is not None
                records = records.split(delimiter)
            at = max(start, self._taken)  # (records settled early were taken then)
            if at < stop:
                if run is None:
                    run = self._run = FoldRun(at, firsts.get(at))
                where = (at - first) * KEY, (stop - first) * KEY
                self._extend(run, keys[where[0] : where[1]], records[at - start :], lines)
        if run is not None and run.stop < first + size:  # the record after it is kept
            lines += self._complete(run)
        del self._keys[: (first + size - base) * KEY]
        self._key_base = first + size
        return lines

    def before_settled(
        self,
        matcher: Matcher,
        pending: list[bytes],
        tracked_at: list[int] | None,
        first_number: int = 1,
    ) -> list[tuple[int, bytes]]:
        """Before records settled early are written: those a decided repeat covers
        extend the open run, and a kept one after them ends it (its line first).
        ``pending``: the records not decided yet, the first numbered ``first_number``;
        ``tracked_at``: where the tracked ones stand in it (with filters)."""
        decided, settled = matcher.decided, matcher.settled
        if settled <= decided:
            return []
        stop = max(decided, min(matcher.cover + 1, settled))  # covered: skipped
        count = stop - decided
        positions = tracked_at[:count] if tracked_at is not None else range(count)
        if tracked_at is not None:
            early = self._early_numbers
            for old in [t for t in early if t < decided]:
                del early[old]
            for offset, position in enumerate(positions):
                early[decided + offset] = first_number + position
        return self.settle(decided, [pending[p] for p in positions], ended=stop < settled)

    def _number(self, tracked: int) -> int:
        """The input record number of a tracked record of the run."""
        early = self._early_numbers.get(tracked)
        return early if early is not None else self._report.number(tracked)

    def settle(self, first: int, records: Sequence[bytes], ended: bool) -> list[tuple[int, bytes]]:
        """Tracked records ``first`` ... are skipped (a decided repeat covers them)
        before the matcher decides them; with ``ended`` the record after them is kept,
        which ends the run now."""
        lines: list[tuple[int, bytes]] = []
        at = max(first, self._taken)
        stop = first + len(records)
        if at < stop:
            run = self._run
            if run is None:
                run = self._run = FoldRun(at, None)
            base = self._key_base
            keys = bytes(self._keys[(at - base) * KEY : (stop - base) * KEY])
            self._extend(run, keys, records[at - first :], lines)
            self._taken = stop
        if ended and self._run is not None:
            lines += self._complete(self._run)
        return lines

    def end(self) -> list[tuple[int, bytes]]:
        """The input stream ended: its last run is complete."""
        return self._complete(self._run) if self._run is not None else []

    def idle(self) -> list[tuple[int, bytes]]:
        """The input is idle: a line for what the open run removed since its last one."""
        run = self._run
        if run is None or run.stop == run.part_start:
            return []
        return [self._part_line(run, continues=True)]

    # -- internals ------------------------------------------------------------------
    def _extend(
        self, run: FoldRun, keys: bytes, records: Sequence[bytes], lines: list[tuple[int, bytes]]
    ) -> None:
        """Add the run's next skipped records. A part that holds ``--fold-every``
        records gets its line when the run goes on past it (so where lines fall does
        not depend on how the input was cut)."""
        every = self._every
        assert not isinstance(every, Duration)  # (TimedFolder's)
        taken = 0
        while taken < len(records):
            take = len(records) - taken
            if every is not None:
                if run.stop - run.part_start >= every:
                    lines.append(self._part_line(run, continues=True))
                take = min(take, run.part_start + every - run.stop)
            kept = keys[taken * KEY : (taken + take) * KEY]
            if self._text is not None:
                run.note_texts(records[taken : taken + take], self._text)
            if run.take(kept, records[taken : taken + take], self._match):
                self._sequences.of(run, fix=True)
            taken += take

    def _complete(self, run: FoldRun) -> list[tuple[int, bytes]]:
        """The run ended: the line of its last part (none if an idle line took it all)."""
        self._run = None
        return [self._part_line(run, continues=False)] if run.stop > run.part_start else []

    def _part_line(self, run: FoldRun, continues: bool) -> tuple[int, bytes]:
        """The line for the run's current part; a new part begins after it."""
        unit = run.unit if run.unit is not None else self._sequences.of(run)
        start, stop = run.part_start, run.stop
        variants = self._sequences.variants(run, unit.length)
        fields: Fields = {
            **self._report.span(start, stop - 1, self._number),
            **part_fields(run, unit, self._folded, self._stamp, continues, variants),
            "window_size": self._window,
            **self._report.source_fields(unit.source, unit.length),
        }
        if self._report.on_fold is not None:
            self._report.on_fold(fields.copy())
        named, color = self._report.inputs.named, self._report.options.color
        return stop - 1, line_text(self._options.fold_format, fields, named, color)


class TimedFolder(Folder):
    """``--fold-every TIME``: parts by time, not by records removed."""

    def _extend(
        self, run: FoldRun, keys: bytes, records: Sequence[bytes], lines: list[tuple[int, bytes]]
    ) -> None:
        """A part's line when the run goes on past TIME after the part began (by the
        clock: per batch, or per record by the records' own time)."""
        every = self._every
        assert isinstance(every, Duration)  # (run_folder's choice)
        clock = PartClock(every, self._options.fold_clock == "records", self._stamp)
        taken = 0
        while taken < len(records):
            now = clock.now(records[taken])
            if run.stop > run.part_start and now - run.part_clock >= clock.seconds:
                lines.append(self._part_line(run, continues=True))
            if run.stop == run.part_start:
                run.part_clock = now
            take = 1 if clock.by_records else len(records) - taken
            batch = records[taken : taken + take]
            if self._text is not None:
                run.note_texts(batch, self._text)
            if run.take(keys[taken * KEY : (taken + take) * KEY], batch, self._match):
                self._sequences.of(run, fix=True)
            taken += take


class WholeRuns:
    """The line of a run that lies whole in one batch with its first piece closed in
    it, in one part (most runs), made at once where nothing else asks for the run's
    records (parts counted, no texts compared, no library saved): its sequence from its
    keys by the kernel (fold_shape, encode_joined), its times from its first and last
    records. The same line as :class:`Folder`'s record-by-record path gives."""

    def __init__(
        self,
        options: FoldOptions,
        rule: RuleOptions,
        report: PieceReport,
        kernel: CEngine,
        sequences: Sequences,
        folded: FoldedCounts,
        stamp: Callable[[bytes], str],
        keys: KeyMaker,
        texts: TextDigest | None,
    ) -> None:
        self._options = options
        self._report = report
        self._kernel = kernel
        self._shape = kernel.fold_shape
        self._sequences = sequences
        self._folded = folded
        self._stamp = stamp
        self._keys = keys
        self._window = rule.window_size
        every = options.fold_every
        self._part_max = every if isinstance(every, int) else None
        # Its numbers its records' own indices plus one (one input, no filters): the
        # default text written inline (plain_text)
        self._plain = (
            options.fold_format is None
            and not report.inputs.named
            and not report.filtered
            and report.on_fold is None  # (the fields are made for the callback)
        )
        self._color = LINE_COLOR if report.options.color else None
        # With key options: each record's text digest, to count the copies' texts
        self._texts = texts

    def takes(self, start: int, stop: int, piece: Piece | None) -> bool:
        """Whether the run ``start`` .. ``stop`` (exclusive) is lined here: its first
        piece (None: not closed yet) ends inside it, and it is one part."""
        part_max = self._part_max
        return (
            piece is not None
            and piece.end < stop
            and (part_max is None or stop - start <= part_max)
        )

    def line(
        self,
        keys: bytes,
        at: int,
        start: int,
        stop: int,
        piece: Piece,
        records: Sequence[bytes] | bytes,
        delimiter: bytes | None,
    ) -> tuple[int, bytes]:
        """The run's line and the tracked record it follows, from its keys (``at``: its
        first key's index in ``keys``) and its records (joined by ``delimiter`` when it
        is given). With key options, its copies' texts are compared."""
        removed = stop - start
        length, matched = self._shape(keys, at, piece.end - start + 1, removed)
        unit_keys = keys[at * KEY : (at + length) * KEY]
        row: Callable[[], bytes]
        if isinstance(records, bytes) and self._texts is None:  # (most runs: inline)
            assert delimiter is not None
            end, begin = records.find(delimiter), records.rfind(delimiter)
            first_record = records if end < 0 else records[:end]
            last_record = records if begin < 0 else records[begin + len(delimiter) :]
            row, variants = partial(self._kernel.encode_joined, records, delimiter, length), 1
        else:
            first_record, last_record, row, variants = self._read(records, delimiter, length)
        digest = self._sequences.digest(unit_keys, row)
        copies = min(matched, removed) // length
        first_time = self._stamp(first_record)
        last_time = first_time if removed == 1 else self._stamp(last_record)
        count = self._folded.add(digest, copies) + 1
        source = piece.source_start
        times = (first_time, last_time)
        text = folded_text(first_record, first_time)
        if self._plain and source >= 0:
            line = plain_text(
                start + 1, removed, (copies, length, variants), digest, source + 1, times, text
            )
            return stop - 1, painted(line, self._color)
        fields: Fields = {
            **self._report.span(start, stop - 1),
            **removal_fields(removed, copies, length, digest, count, times, text),
            "part": 1,
            "continues": 0,
            "variants": variants,
            "window_size": self._window,
            **self._report.source_fields(source, length),
        }
        if self._report.on_fold is not None:
            self._report.on_fold(fields.copy())
        named, color = self._report.inputs.named, self._report.options.color
        return stop - 1, line_text(self._options.fold_format, fields, named, color)

    def _read(
        self, records: Sequence[bytes] | bytes, delimiter: bytes | None, length: int
    ) -> tuple[bytes, bytes, Callable[[], bytes], int]:
        """A run's first and last records, its sequence's row (made where its id is not
        known: from the keys made of its first records) and how many texts its copies of
        ``length`` records have (with key options)."""
        if isinstance(records, bytes):
            assert delimiter is not None
            listed: Sequence[bytes] = records.split(delimiter)
        else:
            listed = records
        first_record, last_record = listed[0], listed[-1]
        row = partial(sequence_row, self._keys, list(listed[:length]))
        texts = self._texts(listed[:VARIANTS_TRACKED]) if self._texts is not None else None
        return first_record, last_record, row, variants_of(texts, length, self._sequences.distinct)


def skipped_runs(
    first: int, keep: Sequence[bool], records: Sequence[bytes]
) -> list[tuple[int, int, Sequence[bytes]]]:
    """The runs of skipped records among tracked records ``first`` ... (``keep``: their
    decisions), with their records: what :meth:`Folder.add_runs` takes."""
    from seqdedup.engine.runs import runs_of

    return [(first + a, first + b, records[a:b]) for a, b in runs_of(keep, False)]


class PartClock:
    """``--fold-every TIME``'s clock: the wall clock (live input), or each record's own
    time (named files), where a record without a timestamp ends the run with one line."""

    def __init__(self, every: Duration, by_records: bool, stamp: Callable[[bytes], str]) -> None:
        self.seconds = float(every)
        self.by_records = by_records
        self._every = every
        self._stamp = stamp

    def now(self, record: bytes) -> float:
        if not self.by_records:
            return time.monotonic()
        found = timestamp_seconds(self._stamp(record))
        if found is None:
            shown = visible(record[:60].decode("utf-8", "replace"))
            raise SeqdedupError(
                f"--fold-every {self._every} reads each removed record's own time on a "
                f"named file, and this one has none: {shown!r} (give a count instead, "
                "such as --fold-every 1000)"
            )
        return found


class FoldedCounts:
    """Copies folded so far per sequence id (a line's ``count``), least recently folded
    evicted past ``limit``."""

    def __init__(self, limit: int | None) -> None:
        self._folded: OrderedDict[bytes, int] = OrderedDict()
        self._limit = limit

    def add(self, digest: bytes, copies: int) -> int:
        """``copies`` more of sequence ``digest``; how many have been folded so far."""
        folded = self._folded
        count = folded.pop(digest, 0) + copies
        folded[digest] = count
        if self._limit is not None and len(folded) > self._limit:
            folded.popitem(last=False)
        return count


def part_fields(
    run: FoldRun,
    unit: _Unit,
    folded: FoldedCounts,
    stamp: Callable[[bytes], str],
    continues: bool,
    variants: int,
) -> Fields:
    """A line's fields of the run's current part (what it removed, of which sequence,
    when; ``variants``: its copies' texts); a new part begins after it. The caller adds
    where it lies and its source."""
    start, stop, length = run.part_start, run.stop, unit.length
    removed = stop - start
    copies = max(0, min(run.start + run.matched, stop) - start) // length
    first_time = stamp(run.part_first)
    times = (first_time, first_time if removed == 1 else stamp(run.last_record))
    count = folded.add(unit.digest, copies) + 1
    text = folded_text(run.part_first, first_time)
    fields: Fields = {
        **removal_fields(removed, copies, length, unit.digest, count, times, text),
        "part": run.part,
        "continues": int(continues),
        "variants": variants,
    }
    run.part += 1
    run.part_start = stop
    return fields


def removal_fields(
    removed: int,
    copies: int,
    length: int,
    digest: bytes,
    count: int,
    times: tuple[str, str],
    text: str,
) -> Fields:
    """A line's fields of what it removed: ``copies`` whole copies of the ``length``
    records of sequence ``digest`` (folded ``count`` times so far) among ``removed``
    records, the first and last of them at ``times``, the first quoted as ``text``."""
    hex_digest = digest.hex()
    return {
        "removed": removed,
        "copies": copies,
        "extra": removed - copies * length,
        "length": length,
        "id": hex_digest[:SHORT_ID],
        "digest": hex_digest,
        "sequence": "",
        "count": count,
        "first_time": times[0],
        "last_time": times[1],
        "text": text,
    }


def run_folder(
    options: FoldOptions,
    rule: RuleOptions,
    key_options: KeyOptions,
    report: PieceReport,
    keys: KeyMaker,
    attributor: Attribution,
    saver: RunSaver | None,
    engine: Engine,
) -> Folder:
    """``--fold``'s summary lines, over the run's report, keys and attribution (and its
    library, which holds each folded sequence under its id)."""
    kind = TimedFolder if isinstance(options.fold_every, Duration) else Folder
    return kind(
        options,
        rule,
        key_options,
        report,
        keys,
        lambda: attributor.open_source,
        saver.add_sequence if saver is not None else None,
        engine,
    )


JSON_SNIFF = 100  # records of the first input looked at to tell a JSON log


def fold_format_of(
    options: FoldOptions, keys: KeyOptions, first_input: str, decompress: bool = True
) -> str | None:
    """The format of ``--fold``'s lines: ``--fold-format``'s; without it, on JSON records
    JSON fold lines (a text line in a JSON stream breaks ``| jq``): when
    ``--json-key``/``--json-ignore`` is given, or the first 100 records of the first
    input, a named regular file, all parse as JSON objects. Standard input is not read
    ahead of the run."""
    if not options.fold or options.fold_format is not None or keys.byte_mode:
        return options.fold_format
    if keys.json_key or keys.json_ignore:
        return "json"
    from seqdedup.base.inputs import first_records

    records = first_records(first_input, keys.delimiter, JSON_SNIFF, decompress)
    return "json" if json_objects(records) else None


def json_objects(records: Sequence[bytes]) -> bool:
    """Whether there are records and each is one JSON object."""
    import json

    try:
        return bool(records) and all(isinstance(json.loads(r), dict) for r in records)
    except ValueError:  # (UnicodeDecodeError and JSONDecodeError are ValueErrors)
        return False
