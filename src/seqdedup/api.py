"""The public Python interface: a streaming :class:`Deduplicator` and :func:`deduplicate`.

The command line is a thin user of this module; nothing here prints.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import compress
from typing import TYPE_CHECKING, Any, Protocol, overload

from seqdedup.attribution import (
    Attributor,
    DecisionCount,
    KernelAttributor,
    RunHeads,
    SequenceTable,
    runs_of,
)
from seqdedup.config import Config
from seqdedup.engine import SEED
from seqdedup.engine import load as load_kernel
from seqdedup.errors import SeqdedupError
from seqdedup.filters import TRACKED, FilterList
from seqdedup.keys import ShellTransform, key_maker
from seqdedup.matcher import Matcher, make_matcher
from seqdedup.records import DamagedInput, DecodedChunks, Readable, RecordSplitter
from seqdedup.report import PieceReport, Stats, TopSequences, stats_document
from seqdedup.timelimit import PatternTimeout

if TYPE_CHECKING:
    from seqdedup._kernel import Matcher as ChunkMatcher
    from seqdedup.attribution import Piece
    from seqdedup.library import LoadedLibrary
    from seqdedup.saving import RunSaver


class Deduplicator:
    """Streaming sequence deduplication over records given as ``bytes``.

    Feed records in input order with :meth:`feed`; each call returns what became
    decidable and is to be written, in order: records, and with ``annotate`` the marker
    records. Call :meth:`flush` once at the end of input for the rest. A record is
    decidable once ``window_size - 1`` further tracked records have been fed, so output
    lags input by at most that many tracked records. ``on_explain`` receives one line
    per explanation (``--explain``), in input order; the engine itself never prints.
    With ``explain=True`` and no ``on_explain``, the lines collect in
    :attr:`explanations` (read and clear it between feeds on a long stream).

    Libraries named in the config (``read_sequences``, ``library_dir``) are loaded
    when the object is made; with ``library_dir``, :meth:`flush` saves what the run
    observed. Call :meth:`abort` instead when a run fails or is cut short: nothing is
    saved then.

    >>> d = Deduplicator(window_size=2)
    >>> d.feed([b"a", b"b", b"c", b"a", b"b"]) + d.flush()
    [b'a', b'b', b'c']
    """

    def __init__(
        self,
        config: Config | None = None,
        on_explain: Callable[[str], None] | None = None,
        **options: Any,
    ) -> None:
        if config is None:
            config = Config(**options)
        elif options:
            raise TypeError("pass either a Config or keyword options, not both")
        self.config = config
        self.stats = Stats()
        # explain=True without a callback: the lines wait in .explanations for the caller.
        self.explanations: list[str] = []
        if config.explain and on_explain is None:
            on_explain = self.explanations.append
        self._filters = FilterList(config.filters)
        transform = (
            ShellTransform(config.hash_transform, config.transform_timeout)
            if config.hash_transform
            else None
        )
        engine = load_kernel()
        self.engine = "python" if engine is None else "c"
        self._keys = key_maker(config, engine, SEED, transform)
        # The kernel's chunk path (raw bytes in, kept bytes out, no Python object per
        # record) serves every run that needs nothing per record from Python: no
        # filters, transform, JSON keys, masks, markers, explanations or library saving
        # (a --normalize pass it does itself).
        chunk_path = (
            engine is not None
            and not self._filters
            and (self._keys.plain or bool(self._keys.kernel_normalize))
            and not config.annotate
            and on_explain is None
            and config.library_dir is None
        )
        self._chunks: ChunkMatcher | None = None
        if chunk_path:
            assert engine is not None
            self._chunks = engine.Matcher(
                config.window_size,
                config.max_history,
                seed=SEED,
                delimiter=config.delimiter,
                skip_chars=config.skip_chars,
                byte_mode=config.byte_mode,
                inverse=config.inverse,
                run_heads=bool(config.top),
                normalize=self._keys.kernel_normalize,
            )
        self._matcher: Matcher = (
            self._chunks
            if self._chunks is not None
            else make_matcher(config.window_size, config.max_history, engine)
        )
        # Attribution only where something reads it (docs/engine.md: what needs what).
        attributed = (
            config.sequence_stats
            or config.annotate
            or on_explain is not None
            or bool(config.top)
            or config.library_dir is not None
        )
        # Pieces as objects only for what reads them one by one; the statistics read
        # only the count of sequences.
        pieces_read = (
            config.annotate
            or on_explain is not None
            or bool(config.top)
            or config.library_dir is not None
        )
        self._attributor: Attributor | KernelAttributor | DecisionCount
        if not attributed:
            self._attributor = DecisionCount()
        elif engine is not None:
            self._attributor = KernelAttributor(
                engine,
                self._matcher,
                config.max_candidates,
                config.max_history,
                config.max_unique_sequences,
                SEED,
                pieces_read,
            )
        else:
            self._attributor = Attributor(
                config.window_size,
                SequenceTable(config.max_unique_sequences),
                self._matcher.source,
                config.max_candidates,
                config.max_history,
                self._matcher.fingerprints,
            )
        self._library: LoadedLibrary | None = None
        if config.read_sequences or config.library_dir is not None:
            from seqdedup.library import load_libraries

            self._library = load_libraries(config, self._keys, self._matcher)
        if self._library is not None:
            self.stats.library_loaded = len(self._library.names)
            self._attributor.set_library_keys(self._library.region)
        self._report = PieceReport(
            config,
            self._attributor.record_number,
            self._library.locate if self._library is not None else None,
            on_explain,
            [rule.pattern for rule in self._filters.rules],
        )
        self._top: TopSequences | None = None
        self._run_heads = RunHeads()  # with --top: each duplicate run's first record
        if config.top:
            self._top = TopSequences(config.max_unique_sequences)
        self._saver: RunSaver | None = None
        if config.library_dir is not None:
            from seqdedup import saving

            self._saver = saving.RunSaver(
                config.library_dir,
                config.window_size,
                self._library,
                whole_runs=bool(config.read_sequences),
            )
            self._matcher.new_material = []
        # Markers and explanations must follow a piece's last record and precede what
        # comes after it: with them on, nothing past an open piece is released early.
        self._ordered = config.annotate or on_explain is not None
        self._pending: list[bytes] = []  # fed, not yet released, in input order
        # With filters: each pending record's filter decision, and where the tracked
        # ones stand in _pending.
        self._pending_decisions: list[int] = []
        self._tracked_at: list[int] = []
        self._as_text: list[int] = []  # --explain: record numbers compared as text
        self._released = 0  # records released so far (record numbers are 1-based)
        self._finished = False
        self._splitter: RecordSplitter | None = None  # feed_bytes() without the chunk path
        self._fed: str | None = None  # "records" or "bytes": the two cannot be mixed
        # Whether the last thing released was the last released record (not a marker);
        # after flush() this tells whether the input's final record ends the output.
        self.last_record_written = False
        # Several input streams: the counts at the start of the current one.
        self._stream_counted = (0, 0, 0)

    def _note_top(self, tracked: list[bytes], keep: list[bool], pieces: list[Piece]) -> None:
        """Count each closed piece for ``--top`` (record path)."""
        base = self._attributor.decided - len(keep)
        runs = [(base + a, base + b, tracked[a]) for a, b in runs_of(keep, False)]
        self._run_heads.add(base, len(keep), runs)
        self._note_pieces(pieces)

    def _note_pieces(self, pieces: list[Piece]) -> None:
        """``--top``: count each closed piece, with its first record when it starts a
        duplicate run (the same on the kernel's chunk path and the record path)."""
        if self._top is None:
            return
        heads, observe, fields = self._run_heads, self._top.observe, self._report.fields
        named = self._report.streams.named
        for piece in pieces:
            observe(piece, fields, heads.get(piece.start), named)
        heads.trim()

    def _start(self, how: str) -> None:
        if self._finished:
            raise RuntimeError("feed after flush: make a new Deduplicator")
        if self._fed is None:
            self._fed = how
        elif self._fed != how:
            raise RuntimeError("feed() and feed_bytes() cannot be mixed in one run")

    def feed_bytes(self, chunk: bytes) -> bytes:
        """Add raw input (any cut, split on the delimiter here); return the output
        bytes now decided: each kept record followed by the delimiter."""
        self._start("bytes")
        if self._chunks is not None:
            out, hashes, runs, decided, kept = self._chunks.feed_chunk(chunk)
            self._account(hashes, runs, decided, kept)
            return out
        if self._splitter is None:
            self._splitter = RecordSplitter(self.config.delimiter)
        return self._joined(self._feed(self._splitter.split(chunk)), final=False)

    def flush_bytes(self, save: bool = True) -> bytes:
        """End of raw input: the rest of the output. A final record that had no
        delimiter in the input is written without one. ``save`` as for :meth:`flush`."""
        if self._finished:
            return b""
        if self._fed == "records":
            raise RuntimeError("after feed(), end with flush()")
        self._fed = "bytes"
        out = self._end_bytes(last=True)
        self._finish(save)
        return out

    def next_stream_bytes(self) -> bytes:
        """The raw input of this stream (file) ends; the next begins: return the rest of
        this one's output. A final record without a delimiter gets one here (the next
        stream's records follow it), unless a newline ends it in text mode with another
        delimiter. See :meth:`next_stream`."""
        self._start("bytes")
        out = self._end_bytes(last=False)
        self._begin_stream()
        return out

    def next_stream(self) -> list[bytes]:
        """The current input stream ends and the next begins (the next name of
        ``config.inputs``): return what the end of this one decided.

        The streams are one run: every window of an earlier stream counts as seen
        (within the history), no window spans two streams, and record numbers in
        markers and explanations count inside each stream.
        """
        self._start("records")
        out = self._release(self._matcher.finish(), final=True)
        self._begin_stream()
        return out

    def _end_bytes(self, last: bool) -> bytes:
        """Decide the rest of a byte stream; ``last``: nothing follows it."""
        if self._chunks is not None:
            chunk_out, hashes, runs, decided, kept = self._chunks.finish_chunks(
                delimit_final=not last
            )
            self._account(hashes, runs, decided, kept)
            self._note_pieces(self._attributor.finish())
            return chunk_out
        final = self._splitter.finish() if self._splitter is not None else None
        self._splitter = None
        ending = b""
        if final is not None:
            final, ending = split_ending(final, self.config)
        out = self._feed([final]) if final is not None else []
        out += self._release(self._matcher.finish(), final=True)
        return self._joined(out, final=final is not None and (last or bool(ending)), ending=ending)

    def _begin_stream(self) -> None:
        """Everything of the stream that ended is released: start the next one."""
        self._note_stream()
        self._matcher.new_stream()
        self._note_pieces(self._attributor.new_stream())  # (nothing is open any more)
        self._run_heads = RunHeads()
        self._report.streams.begin(self._released + 1)
        if self._saver is not None:
            self._saver.new_stream(self._attributor.decided)

    def _note_stream(self) -> None:
        """With several inputs, the counts of the stream that ended."""
        streams = self._report.streams
        if not streams.named:
            return
        stats = self.stats
        total, emitted, skipped = self._stream_counted
        if stats.files is None:
            stats.files = []
        stats.files.append(
            {
                "name": streams.name(len(stats.files)),
                "lines": {
                    "total": stats.total - total,
                    "emitted": stats.emitted - emitted,
                    "skipped": stats.skipped - skipped,
                },
            }
        )
        self._stream_counted = (stats.total, stats.emitted, stats.skipped)

    def _joined(self, out: list[bytes], final: bool, ending: bytes = b"") -> bytes:
        if not out:
            return b""
        delimiter = self.config.delimiter
        joined = delimiter.join(out)
        if final and self.last_record_written:
            return joined + ending  # the input's final record had no delimiter
        return joined + delimiter

    def _account(self, hashes: bytes, runs: bytes | list[Any], decided: int, kept: int) -> None:
        """Book what the kernel's chunk path decided: attribution and statistics."""
        attributor = self._attributor
        assert not isinstance(attributor, Attributor)  # the kernel runs: so does its own
        attributor.append_keys(hashes)
        if isinstance(runs, bytes):  # int64 pairs
            attributor.add_runs(decided, runs)
        else:  # with --top, the runs carry their first record
            self._run_heads.add(attributor.decided, decided, runs)  # (before add_runs)
            self._note_pieces(attributor.add_runs(decided, runs))
        self._count(decided, kept)

    def _count(self, released: int, kept: int) -> None:
        """Statistics for ``released`` more records, ``kept`` of them kept (normal mode)."""
        stats = self.stats
        stats.total += released
        stats.emitted += kept
        stats.skipped += released - kept
        stats.unique_sequences = self._attributor.identified
        self._released += released

    def feed(self, records: Iterable[bytes]) -> list[bytes]:
        """Add records; return those now decided for output (and markers)."""
        self._start("records")
        return self._feed(records)

    def _feed(self, records: Iterable[bytes]) -> list[bytes]:
        batch = records if isinstance(records, list) else list(records)
        tracked = batch
        base = len(self._pending)
        places: Sequence[int] = range(len(batch))  # where the records matched lie in the batch
        try:
            if self._filters:
                decisions = self._filters.classify(batch)
                is_tracked = list(map(TRACKED.__eq__, decisions))
                places = list(compress(places, is_tracked))  # masks see the tracked ones only
                self._pending_decisions += decisions
                self._tracked_at += compress(range(base, base + len(batch)), is_tracked)
                tracked = list(compress(batch, is_tracked))
            hashes = self._keys.hashes(tracked)
        except PatternTimeout as exc:
            position = exc.index if tracked is batch else places[exc.index]
            number = self._released + base + 1 + position
            raise exc.at(self._report.streams.line(number).lower()) from None
        json = self._keys.json
        if json is not None and json.track_text and json.as_text:
            # --explain: which records were compared as text (not a JSON object)
            at = self._tracked_at[len(self._tracked_at) - len(tracked) :] if self._filters else None
            first = self._released + 1 + (0 if at is not None else base)
            self._as_text += [first + (at[i] if at is not None else i) for i in json.as_text]
        self._pending += batch
        self._attributor.append_keys(hashes)
        return self._release(self._matcher.push(hashes))

    def flush(self, save: bool = True) -> list[bytes]:
        """End of input: return everything still held back.

        With ``library_dir``, the library is saved here too, unless ``save=False``:
        then write the output first and call :meth:`save` after it, so that a failed
        save never costs output (what the command line does).
        """
        if self._finished:
            return []
        if self._fed == "bytes" and self._chunks is not None:
            raise RuntimeError("after feed_bytes(), end with flush_bytes()")
        out = self._release(self._matcher.finish(), final=True)
        self._finish(save)
        return out

    def _finish(self, save: bool) -> None:
        self._finished = True
        self._note_stream()
        if self._top is not None:
            self.stats.top_sequences = self._top.top(self.config.top)
        self.stats.unique_sequences = self._attributor.identified
        if save:
            self.save()

    def save(self) -> None:
        """Save what the run observed into ``library_dir`` (after :meth:`flush` or
        :meth:`flush_bytes` with ``save=False``); nothing to do without a library."""
        if self._saver is None:
            return
        if not self._finished:
            raise RuntimeError("save() comes after flush()")
        self.stats.library_saved = 0
        document = stats_document(self.stats, self.config)
        configuration = document.pop("configuration")
        assert isinstance(configuration, dict)
        saver, self._saver = self._saver, None
        self.stats.library_saved = saver.commit(configuration, document)

    def abort(self) -> None:
        """The run failed or was cut short: save nothing to the library."""
        if self._saver is not None:
            self._saver.discard()
            self._saver = None
        self._finished = True

    def _release(self, keep: list[bool], final: bool = False) -> list[bytes]:
        """Hand out the records up to the first undecided tracked one."""
        decided = len(keep)
        first_number = self._released + 1
        if self._filters:
            tracked_at = self._tracked_at[:decided]
            numbers = [first_number + position for position in tracked_at]
        else:
            tracked_at = None
            numbers = None
        pieces = self._attributor.add(keep, numbers)
        if final:
            pieces += self._attributor.finish()

        inverse = self.config.inverse
        if tracked_at is not None:
            if decided < len(self._tracked_at):
                cut = self._tracked_at[decided]
            else:
                cut = len(self._pending)
            if self._ordered and self._attributor.open_piece:
                # Nothing past an open piece yet: its marker and explanation come first.
                cut = tracked_at[-1] + 1 if tracked_at else 0
            written = [not inverse] * cut  # pass-through records
            for position, kept_flag in zip(tracked_at, keep, strict=True):
                written[position] = kept_flag != inverse
            decisions = self._pending_decisions[:cut]
            del self._pending_decisions[:cut]
            self._tracked_at = [position - cut for position in self._tracked_at[decided:]]
        else:
            cut = decided
            written = [not k for k in keep] if inverse else keep
            decisions = None
        records = self._pending[:cut]
        del self._pending[:cut]
        out = list(compress(records, written))
        tracked_records: list[bytes] = []
        if self._saver is not None or self._top is not None:
            tracked_records = (
                records[:decided]
                if tracked_at is None
                else [records[position] for position in tracked_at]
            )
        if self._top is not None:
            self._note_top(tracked_records, keep, pieces)
        if self._saver is not None:
            new_material = self._matcher.new_material
            assert new_material is not None
            self._matcher.new_material = []
            first = self._attributor.decided - len(keep)
            self._saver.observe(tracked_records, keep, new_material, first, pieces)

        self._count(cut, cut - keep.count(False))
        if cut:
            self.last_record_written = written[-1]

        report = self._report
        if report.explain is not None:
            as_text: list[int] = []
            if self._as_text:
                last = first_number + cut - 1
                as_text = [n for n in self._as_text if n <= last]
                del self._as_text[: len(as_text)]
            report.explain_all(pieces, decisions, first_number, as_text)
        if report.annotation is not None and pieces:
            out, marker_last = report.with_markers(out, written, pieces, first_number)
            if marker_last:
                self.last_record_written = False  # a marker ends this output
        return out


def split_ending(final: bytes, config: Config) -> tuple[bytes, bytes]:
    """A final record without a delimiter, and the newline that ends it: in text mode
    with another delimiter, a newline (or CRLF) that ends the input ends the last record
    (it is not part of the key, and is written back after it as read)."""
    if config.byte_mode or config.delimiter == b"\n":
        return final, b""
    stripped = final.removesuffix(b"\n")
    if stripped != final:
        stripped = stripped.removesuffix(b"\r")
    return stripped, final[len(stripped) :]


class Writable(Protocol):
    def write(self, data: bytes, /) -> object: ...
    def flush(self) -> object: ...


def process_stream(
    source: Readable,
    sink: Writable,
    config: Config | None = None,
    on_explain: Callable[[str], None] | None = None,
    on_progress: Callable[[int, Stats], None] | None = None,
    decompress: bool = False,
    **options: Any,
) -> Stats:
    """Deduplicate a byte stream into another; return the statistics.

    Records are split on ``config.delimiter``; each kept record is written followed by
    the delimiter, except a final record that had none in the input. Output is written
    per chunk read and flushed before the next read, so a live stream sees each record
    as soon as it is decidable. ``source`` should be unbuffered (see
    :func:`seqdedup.records.read_chunks`). ``on_progress(bytes_read, stats)`` is called
    after each chunk. With ``decompress``, a source that starts with a gzip, bzip2, xz or
    zstd header is decompressed as it is read (what the command line does).
    """
    return process_streams([source], sink, config, on_explain, on_progress, decompress, **options)


def process_streams(
    sources: Iterable[Readable],
    sink: Writable,
    config: Config | None = None,
    on_explain: Callable[[str], None] | None = None,
    on_progress: Callable[[int, Stats], None] | None = None,
    decompress: bool = False,
    **options: Any,
) -> Stats:
    """Deduplicate several byte streams (files) into one output, in order, as one run:
    each is its own stream (no window spans two), every window of an earlier one counts
    as seen. Otherwise as :func:`process_stream`; ``on_progress`` gets the bytes read
    from all sources so far. ``sources`` is iterated lazily: a generator may open each
    file when it is asked for it (and close it when asked for the next)."""
    dedup = Deduplicator(config, on_explain, **options)
    delimiter = dedup.config.delimiter
    try:
        upcoming = iter(sources)
        source = next(upcoming, None)
        read_before = 0
        if source is None:  # no input at all: an empty run
            _write(sink, dedup.flush_bytes(False))
        while source is not None:
            chunks = DecodedChunks(source, decompress)
            open_bytes = 0  # read since the last delimiter: the record being read, so far
            try:
                for chunk in chunks:
                    open_bytes += len(chunk)
                    _write(sink, dedup.feed_bytes(chunk))
                    ended = chunk.rfind(delimiter)
                    if ended >= 0:
                        open_bytes = len(chunk) - ended - len(delimiter)
                    if on_progress is not None:  # bytes of the sources themselves
                        on_progress(read_before + chunks.consumed, dedup.stats)
            except DamagedInput as exc:  # the input ends at the damage: decide the rest
                _write(sink, dedup.flush_bytes(False))
                raise DamagedInput(f"{exc}; {_written(dedup)} before it") from None
            except MemoryError:
                raise SeqdedupError(_out_of_memory(dedup, open_bytes)) from None
            read_before += chunks.consumed
            source = next(upcoming, None)
            _write(
                sink, dedup.next_stream_bytes() if source is not None else dedup.flush_bytes(False)
            )
        dedup.save()  # only now: a failed save must not cost any output
        return dedup.stats
    except BaseException:
        dedup.abort()  # a failed or interrupted run saves nothing to the library
        raise


def _written(dedup: Deduplicator) -> str:
    """How many records the output holds so far, as a message says it."""
    stats = dedup.stats
    written = stats.skipped if dedup.config.inverse else stats.emitted
    return f"{written:,} record{'s' * (written != 1)} written"


HUGE_RECORD = 64 << 20  # a record this long that exhausts memory is named as the cause


def _out_of_memory(dedup: Deduplicator, open_bytes: int) -> str:
    if open_bytes >= HUGE_RECORD:
        return (
            f"a record is larger than the memory available: {open_bytes:,} bytes of it "
            f"read without a delimiter; {_written(dedup)} before it (is the delimiter right?)"
        )
    return (
        f"out of memory after {dedup.stats.total:,} records; {_written(dedup)} "
        "(-m/--max-history bounds the memory of a long run)"
    )


def show_keys(
    sources: Iterable[Readable],
    sink: Writable,
    config: Config | None = None,
    decompress: bool = False,
    **options: Any,
) -> int:
    """Write each record's comparison key instead of the record (``--show-keys``), each
    followed by the delimiter, to check a normalisation before trusting it. Every record
    gets its key (filters do not apply); nothing is deduplicated. Returns the number
    of records."""
    config = config if config is not None else Config(**options)
    transform = (
        ShellTransform(config.hash_transform, config.transform_timeout)
        if config.hash_transform
        else None
    )
    keys_of = key_maker(config, load_kernel(), SEED, transform).keys
    delimiter = config.delimiter
    count = 0

    def make(records: list[bytes]) -> list[bytes]:
        try:
            return keys_of(records)
        except PatternTimeout as exc:
            raise exc.at(f"line {count - len(records) + exc.index + 1}") from None

    for source in sources:
        splitter = RecordSplitter(delimiter)
        for chunk in DecodedChunks(source, decompress):
            records = splitter.split(chunk)
            if records:
                count += len(records)
                _write(sink, delimiter.join(make(records)) + delimiter)
        final = splitter.finish()
        if final is not None:
            final, _ = split_ending(final, config)  # as when compared
            count += 1
            _write(sink, make([final])[0] + delimiter)
    return count


def _write(sink: Writable, out: bytes) -> None:
    """Write and flush at once: a live stream sees each record as soon as decided."""
    if out:
        sink.write(out)
    sink.flush()


@overload
def deduplicate(records: Iterable[str], **options: Any) -> Iterator[str]: ...
@overload
def deduplicate(records: Iterable[bytes], **options: Any) -> Iterator[bytes]: ...


def deduplicate(records: Iterable[Any], batch_size: int = 4096, **options: Any) -> Iterator[Any]:
    """Yield the records of ``records`` that are not inside a repeated sequence.

    Records may be ``str`` or ``bytes`` (the output has the type of the input); options
    are those of :class:`Config` (``window_size``, ``max_history``, ``skip_chars``...).
    Records are taken ``batch_size`` at a time; for a live source whose records must
    come out as soon as decidable, use :class:`Deduplicator` directly.

    >>> list(deduplicate(["x", "y", "x", "y", "z"], window_size=2))
    ['x', 'y', 'z']
    """
    dedup = Deduplicator(**options)
    text: bool | None = None
    batch: list[bytes] = []
    for number, record in enumerate(records, 1):
        if text is None:
            text = isinstance(record, str)
        if text and isinstance(record, str):
            batch.append(record.encode("utf-8", "surrogateescape"))
        elif not text and isinstance(record, bytes | bytearray):
            batch.append(bytes(record))
        else:
            first = "" if number == 1 else f", the first was {'str' if text else 'bytes'}"
            raise TypeError(
                f"deduplicate: record {number} is {type(record).__name__}{first}: "
                "records are all str or all bytes"
            )
        if len(batch) >= batch_size:
            yield from _decoded(dedup.feed(batch), text)
            batch = []
    yield from _decoded(dedup.feed(batch) + dedup.flush(), bool(text))


def _decoded(records: list[bytes], text: bool | None) -> Iterable[Any]:
    if text:
        return [record.decode("utf-8", "surrogateescape") for record in records]
    return records
