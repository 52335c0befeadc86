"""The public Python interface: a streaming :class:`Deduplicator` and :func:`deduplicate`.

The command line is a thin user of this module; nothing here prints.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import compress
from typing import Any, Protocol, overload

from seqdedup.config import Config
from seqdedup.filters import TRACKED, UNMATCHED, FilterList
from seqdedup.keys import KeyMaker, ShellTransform
from seqdedup.matcher import WindowMatcher
from seqdedup.records import Readable, RecordSplitter, read_chunks
from seqdedup.report import explain_bypassed, explain_unmatched
from seqdedup.sequences import RunCollector, SequenceTable


@dataclass
class Stats:
    """Counts of one run. ``total == emitted + skipped`` always."""

    total: int = 0
    emitted: int = 0
    skipped: int = 0
    unique_sequences: int = 0

    @property
    def redundancy_pct(self) -> float:
        """Share of records skipped, in percent."""
        return 100.0 * self.skipped / self.total if self.total else 0.0


class Deduplicator:
    """Streaming sequence deduplication over records given as ``bytes``.

    Feed records in input order with :meth:`feed`; each call returns the records that
    became decidable and are to be written, in order. Call :meth:`flush` once at the end
    of input for the rest. A record is decidable once ``window_size - 1`` further
    tracked records have been fed, so output lags input by at most that many tracked
    records. ``on_explain`` receives one line per explanation (``--explain``), in input
    order; the engine itself never prints.

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
        self._filters = FilterList(config.filters)
        transform = ShellTransform(config.hash_transform) if config.hash_transform else None
        self._keys = KeyMaker(config.skip_chars, config.byte_mode, transform)
        self._matcher = WindowMatcher(config.window_size, config.max_history)
        self._sequences = SequenceTable(config.max_unique_sequences)
        self._runs = RunCollector(self._sequences)
        self._explain = on_explain
        self._pending: list[bytes] = []  # fed, not yet released, in input order
        self._pending_hashes: list[int] = []  # key hashes of the pending tracked records
        # With filters: each pending record's filter decision, and where the tracked
        # ones stand in _pending.
        self._pending_decisions: list[int] = []
        self._tracked_at: list[int] = []
        self._released = 0  # records released so far (record numbers are 1-based)
        self._finished = False
        # Whether the last record released so far was written; after flush() this tells
        # whether the input's final record ends the output.
        self.last_record_written = False

    def feed(self, records: Iterable[bytes]) -> list[bytes]:
        """Add records; return those now decided for output."""
        if self._finished:
            raise RuntimeError("feed() after flush(): make a new Deduplicator")
        batch = records if isinstance(records, list) else list(records)
        tracked = batch
        if self._filters:
            decisions = self._filters.classify(batch)
            is_tracked = list(map(TRACKED.__eq__, decisions))
            base = len(self._pending)
            self._pending_decisions += decisions
            self._tracked_at += compress(range(base, base + len(batch)), is_tracked)
            tracked = list(compress(batch, is_tracked))
        hashes = self._keys.hashes(tracked)
        self._pending += batch
        self._pending_hashes += hashes
        return self._release(self._matcher.push(hashes))

    def flush(self) -> list[bytes]:
        """End of input: return every record still held back."""
        if self._finished:
            return []
        out = self._release(self._matcher.finish(), final=True)
        self._runs.finish()
        self.stats.unique_sequences = self._sequences.identified
        self._finished = True
        return out

    def _release(self, keep: list[bool], final: bool = False) -> list[bytes]:
        """Hand out the records up to the first undecided tracked one."""
        decided = len(keep)
        if self._filters:
            tracked_at = self._tracked_at
            cut = tracked_at[decided] if decided < len(tracked_at) else len(self._pending)
            written = [True] * cut  # pass-through records are always written
            for position, kept_flag in zip(tracked_at, keep, strict=False):
                written[position] = kept_flag
            if self._explain is not None:
                self._explain_filters(self._pending_decisions[:cut])
            del self._pending_decisions[:cut]
            self._tracked_at = [position - cut for position in tracked_at[decided:]]
        else:
            cut = decided
            written = keep
        if not cut:
            return []
        records = self._pending[:cut]
        del self._pending[:cut]
        hashes = self._pending_hashes[:decided]
        del self._pending_hashes[:decided]
        self._runs.add(keep, hashes)
        out = list(compress(records, written))
        stats = self.stats
        stats.total += cut
        stats.emitted += len(out)
        stats.skipped += cut - len(out)
        stats.unique_sequences = self._sequences.identified
        self._released += cut
        self.last_record_written = written[-1]
        return out

    def _explain_filters(self, decisions: list[int]) -> None:
        assert self._explain is not None
        rules = self._filters.rules
        for offset, decision in enumerate(decisions):
            if decision == TRACKED:
                continue
            number = self._released + offset + 1
            if decision == UNMATCHED:
                self._explain(explain_unmatched(number))
            else:
                self._explain(explain_bypassed(number, rules[decision].pattern))


class Writable(Protocol):
    def write(self, data: bytes, /) -> object: ...
    def flush(self) -> object: ...


def process_stream(
    source: Readable,
    sink: Writable,
    config: Config | None = None,
    on_explain: Callable[[str], None] | None = None,
    **options: Any,
) -> Stats:
    """Deduplicate a byte stream into another; return the statistics.

    Records are split on ``config.delimiter``; each kept record is written followed by
    the delimiter, except a final record that had none in the input. Output is written
    per chunk read and flushed before the next read, so a live stream sees each record
    as soon as it is decidable. ``source`` should be unbuffered (see
    :func:`seqdedup.records.read_chunks`).
    """
    dedup = Deduplicator(config, on_explain, **options)
    delimiter = dedup.config.delimiter
    splitter = RecordSplitter(delimiter)
    for chunk in read_chunks(source):
        out = dedup.feed(splitter.split(chunk))
        if out:
            sink.write(delimiter.join(out))
            sink.write(delimiter)
        sink.flush()
    final = splitter.finish()
    out = dedup.feed([final]) if final is not None else []
    out += dedup.flush()
    if out:
        sink.write(delimiter.join(out))
        if final is None or not dedup.last_record_written:
            sink.write(delimiter)  # a final record without delimiter is written without one
    sink.flush()
    return dedup.stats


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
    for record in records:
        if text is None:
            text = isinstance(record, str)
        batch.append(record.encode("utf-8", "surrogateescape") if text else record)
        if len(batch) >= batch_size:
            yield from _decoded(dedup.feed(batch), text)
            batch = []
    yield from _decoded(dedup.feed(batch) + dedup.flush(), bool(text))


def _decoded(records: list[bytes], text: bool | None) -> Iterable[Any]:
    if text:
        return [record.decode("utf-8", "surrogateescape") for record in records]
    return records
