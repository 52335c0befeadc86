"""The public Python interface: a streaming :class:`Deduplicator` and :func:`deduplicate`.

The command line is a thin user of this module; nothing here prints.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Generic, Protocol, cast, overload

from seqdedup.base.engine import SEED
from seqdedup.base.errors import SeqdedupError
from seqdedup.base.records import (
    DamagedInput,
    DecodedChunks,
    Readable,
    RecordSplitter,
    live_descriptor,
)
from seqdedup.base.stopping import graceful, requested, settle
from seqdedup.config.settings import STREAM_WAIT, Config, config_of
from seqdedup.config.timelimit import PatternTimeout
from seqdedup.engine.choice import chosen_engine
from seqdedup.keys.maker import key_maker, shell_transform
from seqdedup.run.assembled import feeding_paths
from seqdedup.run.calls import OneCall, bytes_records
from seqdedup.run.feeding import split_ending
from seqdedup.run.stages import Stages
from seqdedup.run.stats import Stats

if TYPE_CHECKING:
    from typing_extensions import TypeVar

    # A run's record type: bytes unless feed() is given str (Deduplicator[str])
    Record = TypeVar("Record", str, bytes, default=bytes)
else:
    from typing import TypeVar

    Record = TypeVar("Record", str, bytes)

if TYPE_CHECKING:
    from seqdedup.run.ledger import RunObserver
    from seqdedup.run.markers import FoldEvent


class Deduplicator(Generic[Record]):
    """Streaming sequence deduplication over records given as ``bytes`` or ``str``
    (the first :meth:`feed` says which; what comes back has that type, and a type
    checker reads it from ``Deduplicator[str]``; ``bytes`` by default).

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
        *,
        observer: RunObserver | None = None,
        on_fold: Callable[[FoldEvent], None] | None = None,
        **options: object,
    ) -> None:
        self._build(config_of(config, options), on_explain, observer, on_fold)

    def _build(
        self,
        config: Config,
        on_explain: Callable[[str], None] | None,
        observer: RunObserver | None,
        on_fold: Callable[[FoldEvent], None] | None = None,
    ) -> None:
        self.config = config
        # explain=True without a callback: the lines wait in .explanations for the caller.
        self.explanations: list[str] = []
        if config.explain and on_explain is None:
            on_explain = self.explanations.append
        self._stages = stages = Stages(config, on_explain, observer, on_fold)
        self.stats = stages.stats
        self.engine = stages.engine
        self._stream_path, self._records, self._bytes = feeding_paths(stages)
        self._finished = False
        self._fed: str | None = None  # "records" or "bytes": the two cannot be mixed
        self._guard = OneCall()  # one call at a time, none after one cut short
        self._text: bool | None = None  # whether feed() was given str records

    @property
    def last_record_written(self) -> bool:
        """Whether the last thing released was the last released record (not a marker);
        after the end of input, whether the input's final record ends the output."""
        return self._stages.last_record_written

    def _start(self, how: str) -> None:
        if self._finished:
            raise RuntimeError("feed after flush: make a new Deduplicator")
        if self._fed is None:
            self._fed = how
        elif self._fed != how:
            raise RuntimeError("feed() and feed_bytes() cannot be mixed in one run")

    def feed(self, records: Iterable[Record]) -> list[Record]:
        """Add records; return those now decided for output (and markers)."""
        self._start("records")
        batch, self._text = bytes_records(records, self._text)
        with self._guard:
            return self._typed(self._records.feed(batch))

    def _typed(self, out: list[bytes]) -> list[Record]:
        """Output of the run's record type (str when feed() was given str)."""
        typed: list[str] | list[bytes] = out
        if self._text:
            typed = [record.decode("utf-8", "surrogateescape") for record in out]
        return cast("list[Record]", typed)

    def feed_bytes(self, chunk: bytes) -> bytes:
        """Add raw input (any cut, split on the delimiter here); return the output
        bytes now decided: each kept record followed by the delimiter."""
        self._start("bytes")
        with self._guard:
            self._stages.ledger.read(chunk)
            return self._bytes.feed_bytes(chunk)

    def idle(self) -> list[Record]:
        """The input has been idle (``config.fold_idle`` seconds, say): with ``fold``,
        return a summary line for the run of duplicates that is still open, covering
        what it removed since its last line, the records a repeat already covers
        included (nothing when there is none). With
        ``stream_by``, every stream's pending records are decided as at end of input
        (no window spans the pause) and returned."""
        with self._guard:
            if self._stream_path is not None:
                return self._typed(self._stream_path.idle())
            return self._typed(self._records.idle_lines())

    def idle_bytes(self) -> bytes:
        """:meth:`idle` for a byte stream: the line followed by the delimiter."""
        if self._stream_path is not None:
            with self._guard:
                return self._stream_path.idle_bytes()
        delimiter = self.config.delimiter
        with self._guard:
            return b"".join(line + delimiter for line in self._records.idle_lines())

    def next_input(self) -> list[Record]:
        """The current input ends and the next begins (the next name of
        ``config.inputs``): return what the end of this one decided.

        The inputs are one run: every window of an earlier input counts as seen
        (within the history), no window spans two inputs, and record numbers in
        markers and explanations count inside each input.
        """
        self._start("records")
        with self._guard:
            out = self._records.end_records()
            self._stages.begin_input()
        return self._typed(out)

    def next_input_bytes(self) -> bytes:
        """The raw bytes of this input (file) end; the next begins: return the rest of
        this one's output. A final record without a delimiter gets one here (the next
        input's records follow it), unless a newline ends it in text mode with another
        delimiter. See :meth:`next_input`."""
        self._start("bytes")
        with self._guard:
            out = self._bytes.end_bytes(last=False)
            self._stages.begin_input()
        return out

    next_stream, next_stream_bytes = next_input, next_input_bytes  # (0.1's names)

    def flush(self, save: bool = True) -> list[Record]:
        """End of input: return everything still held back.

        With ``library_dir``, the library is saved here too, unless ``save=False``:
        then write the output first and call :meth:`save` after it, so that a failed
        save never costs output (what the command line does).
        """
        if self._finished:
            return []
        if self._fed == "bytes" and self._bytes is not self._records:
            raise RuntimeError("after feed_bytes(), end with flush_bytes()")
        with self._guard:
            out = self._records.end_records()
        self._finish(save)
        return self._typed(out)

    def flush_bytes(self, save: bool = True, cut: bool = False) -> bytes:
        """End of raw input: the rest of the output. A final record that had no
        delimiter is written without one; ``cut`` (the input was cut short) drops it.
        ``save`` as for :meth:`flush`."""
        if self._finished:
            return b""
        if self._fed == "records":
            raise RuntimeError("after feed(), end with flush()")
        self._fed = "bytes"
        with self._guard:
            out = self._bytes.end_bytes(last=True, cut=cut)
        self._finish(save)
        return out

    def _finish(self, save: bool) -> None:
        self._finished = True
        self._stages.finish()
        if save:
            self.save()

    def save(self, on_committed: Callable[[], None] | None = None) -> None:
        """Save what the run observed into ``library_dir`` (after :meth:`flush` or
        :meth:`flush_bytes` with ``save=False``; ``on_committed``: called at the commit,
        signals held across both); nothing to do without a library."""
        if self._stages.saver is None:
            return
        if not self._finished:
            raise RuntimeError("save() comes after flush()")
        self._stages.save(on_committed)

    def abort(self) -> None:
        """The run failed or was cut short: save nothing to the library."""
        self._stages.abort()
        self._finished = True


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
    **options: object,
) -> Stats:
    """Deduplicate a byte stream into another; return the statistics.

    Records are split on ``config.delimiter``; each kept record is written followed by
    the delimiter, except a final record that had none in the input. Output is written
    per chunk read and flushed before the next read, so a live stream sees each record
    as soon as it is decidable. ``source`` should be unbuffered (see
    :func:`seqdedup.base.records.read_chunks`). ``on_progress(bytes_read, stats)`` is called
    after each chunk. With ``decompress``, a source that starts with a gzip, bzip2, xz or
    zstd header is decompressed as it is read (what the command line does).
    """
    return process_inputs(
        [source], sink, config, on_explain, on_progress, decompress, None, **options
    )


def process_inputs(
    sources: Iterable[Readable],
    sink: Writable,
    config: Config | None = None,
    on_explain: Callable[[str], None] | None = None,
    on_progress: Callable[[int, Stats], None] | None = None,
    decompress: bool = False,
    on_chunk: Callable[[bytes], None] | None = None,
    **options: object,
) -> Stats:
    """Deduplicate several inputs (files) into one output, in order, as one run: no
    window spans two inputs, every window of an earlier one counts as seen. Otherwise
    as :func:`process_stream`; ``on_progress`` gets the bytes read from all sources so
    far; ``on_chunk`` each chunk of input as decoded, before it is decided. ``sources``
    is iterated lazily: a generator may open each file when it is asked for it (and
    close it when asked for the next)."""
    return feed_inputs(
        Deduplicator(config_of(config, options), on_explain),
        sources,
        sink,
        on_progress,
        decompress,
        on_chunk,
    )


def feed_inputs(
    dedup: Deduplicator[bytes],
    sources: Iterable[Readable],
    sink: Writable,
    on_progress: Callable[[int, Stats], None] | None = None,
    decompress: bool = False,
    on_chunk: Callable[[bytes], None] | None = None,
) -> Stats:
    """:func:`process_inputs` with the run given (one watched by a report page's
    picture, say)."""
    delimiter = dedup.config.delimiter
    idle = _idle(dedup.config)
    try:
        upcoming = iter(sources)
        source = next(upcoming, None)
        read_before = 0
        if source is None:  # no input at all: an empty run
            _write(sink, dedup.flush_bytes(False))
        while source is not None:
            chunks = DecodedChunks(source, decompress, idle=idle)
            open_bytes = 0  # read since the last delimiter: the record being read, so far
            try:
                for chunk in chunks:
                    if not chunk:  # the input is idle
                        _write(sink, dedup.idle_bytes())
                        continue
                    open_bytes += len(chunk)
                    if on_chunk is not None:
                        on_chunk(chunk)
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
            if chunks.cut:  # a signal asked the run to stop (inside stopping.graceful)
                return _stopped(dedup, sink, source)
            source = next(upcoming, None)
            _write(
                sink, dedup.next_input_bytes() if source is not None else dedup.flush_bytes(False)
            )
        dedup.save(settle)  # only now: a failed save must not cost any output
        return dedup.stats
    except BaseException:
        dedup.abort()  # a failed or interrupted run saves nothing to the library
        raise


process_streams = process_inputs  # (its name in 0.1, kept for one release)


def _idle(config: Config) -> float | None:
    """After how long a pause of live input decides what waits for more: with
    --stream-by, every stream's pending records; with --fold, the open run's line."""
    return STREAM_WAIT if config.stream_split else config.fold_idle if config.fold else None


def _stopped(dedup: Deduplicator, sink: Writable, source: Readable) -> Stats:
    """A signal ended the input early: what was read is decided as at its end and
    written; the library is saved when the input was live (it has no end of its own),
    and left unchanged when a file was cut short (a later run reads it whole)."""
    live = live_descriptor(source) is not None
    # (a file cut inside a record: its start is no record; live input is what came)
    _write(sink, dedup.flush_bytes(False, cut=not live))
    if live:
        dedup.save(settle)
    else:
        dedup.abort()
    dedup._stages.ledger.interrupted(requested())
    return dedup.stats


def follow_file(
    path: str,
    sink: Writable,
    config: Config | None = None,
    on_explain: Callable[[str], None] | None = None,
    from_start: bool = False,
    on_note: Callable[[str], None] | None = None,
    picture: RunObserver | None = None,
) -> Stats:
    """Deduplicate a file as ``tail -F`` follows it (:class:`seqdedup.run.follow.Follower`),
    each record written as soon as it is decided, until a signal (Ctrl-C; SIGTERM or
    SIGHUP in the command) asks it to stop: then what is pending is decided as at the
    end of input, the library (if any) saved, and the statistics returned with
    ``stats.interrupted`` set to the signal's number. (Signals reach the main thread
    only: there it must run to be stopped so.)"""
    from seqdedup.run.follow import Follower

    dedup: Deduplicator[bytes] = Deduplicator(config, on_explain, observer=picture)
    settings = dedup.config
    idle = _idle(settings)
    follower = Follower(
        path, from_start, on_note, delimiter=settings.delimiter, rotate_wait=settings.rotate_wait
    )
    try:
        with graceful():  # Ctrl-C (SIGTERM, SIGHUP) only asks the run to stop
            for chunk in follower.chunks(idle):
                _write(sink, dedup.feed_bytes(chunk) if chunk else dedup.idle_bytes())
            # (how a follow ends: the rest decided as at the end of input, then saved)
            rest = follower.rest()
            _write(sink, dedup.feed_bytes(rest) + dedup.flush_bytes(False))
            dedup.save(settle)
            dedup._stages.ledger.interrupted(requested())
        return dedup.stats
    except BaseException:
        dedup.abort()
        raise
    finally:
        follower.close()


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
    **options: object,
) -> int:
    """Write each record's comparison key instead of the record (``--show-keys``), each
    followed by the delimiter, to check a normalisation before trusting it. Every record
    gets its key (filters do not apply); nothing is deduplicated. Returns the number
    of records."""
    config = config if config is not None else Config(**options)
    key_options = config.key_options
    transform = shell_transform(key_options)
    keys_of = key_maker(key_options, chosen_engine().kernel, SEED, transform).keys
    delimiter = config.delimiter
    count = 0
    if config.stream_split:  # the stream's name is not part of the key
        from seqdedup.keys.streams import StreamNamer

        namer = StreamNamer(config.stream_options, config.byte_mode)

        def keys_of_records(records: list[bytes]) -> list[bytes]:
            return keys_of(namer.split(records)[1])
    else:
        keys_of_records = keys_of

    def make(records: list[bytes]) -> list[bytes]:
        try:
            return keys_of_records(records)
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
            final, _ = split_ending(final, config.key_options)  # as when compared
            count += 1
            _write(sink, make([final])[0] + delimiter)
    return count


def _write(sink: Writable, out: bytes) -> None:
    """Write and flush at once: a live stream sees each record as soon as decided."""
    if out:
        sink.write(out)
    sink.flush()


@overload
def deduplicate(
    records: Iterable[str], batch_size: int = ..., **options: object
) -> Iterator[str]: ...
@overload
def deduplicate(
    records: Iterable[bytes], batch_size: int = ..., **options: object
) -> Iterator[bytes]: ...


def deduplicate(
    records: Iterable[str] | Iterable[bytes], batch_size: int = 4096, **options: object
) -> Iterator[str] | Iterator[bytes]:
    """Yield the records of ``records`` that are not inside a repeated sequence.

    Records may be ``str`` or ``bytes`` (the output has the type of the input); options
    are those of :class:`Config` (``window_size``, ``max_history``, ``skip_chars``...).
    Records are taken ``batch_size`` at a time; for a live source whose records must
    come out as soon as decidable, use :class:`Deduplicator` directly.

    >>> list(deduplicate(["x", "y", "x", "y", "z"], window_size=2))
    ['x', 'y', 'z']
    """
    dedup = Deduplicator(config_of(None, options))  # (the options checked here, at the call)
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    return _deduplicated(dedup, records, batch_size)


def _deduplicated(
    dedup: Deduplicator, records: Iterable[str] | Iterable[bytes], batch_size: int
) -> Iterator[str] | Iterator[bytes]:
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


def _decoded(records: list[bytes], text: bool | None) -> list[str] | list[bytes]:
    if text:
        return [record.decode("utf-8", "surrogateescape") for record in records]
    return records


__all__ = [
    "Deduplicator",
    "Writable",
    "deduplicate",
    "feed_inputs",
    "follow_file",
    "process_inputs",
    "process_stream",
    "show_keys",
]
