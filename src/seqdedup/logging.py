"""Repeated sequences of log records folded inside the Python process: a ``logging``
handler (docs/logging.md).

:class:`FoldingHandler` wraps any handler and forwards records to it, except repeats of
whole sequences of records, which it replaces by one summary record per run. A record's
key is its level, logger, message template (``record.msg``, before ``%`` formatting)
and formatted exception; never its time. Each thread is a stream of its own (windows
per stream, one history: ``--stream-by``'s rule), so a traceback one thread already
logged folds in another thread too.

Records are held until the rule decides them (W - 1 later records of their stream, or
a pause) and handed to the engine in batches, so a call costs little more than the key
it makes. A timer thread decides what is held after ``idle`` seconds without records
and whatever is older than ``max_delay``, and summarises a run that goes on every
``every`` seconds (60 by default); ``flush()``, ``close()`` and interpreter exit
(``logging.shutdown``) decide everything. A forked child starts a timer of its own. A
hard exit (``os._exit``, as multiprocessing's forked workers end; a signal that kills)
loses the records held: at most ``max_delay`` seconds of them.

The target is never called with the folding lock held: what is decided goes into an
outbox under the lock, and one thread at a time forwards the outbox in order with no
lock of ours held, so a target that logs back into this handler (or whose lock another
thread holds while it logs) cannot deadlock with the timer. A target that raises on one
record gets ``handleError`` for that record alone; the others are still forwarded.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Hashable, Iterable
from functools import partial
from typing import Any

from seqdedup.engine.decisions import Decisions

BATCH = 256  # records handed to the engine at once (or sooner, by the timer)
LOCK_RETRY = 0.001  # seconds between the timer's tries at a lock another thread holds
EVERY = 60.0  # seconds between interim summaries of a run that goes on (the default)
DRAIN_WAIT = 5.0  # seconds flush() waits for another thread's forwarding, at most


class _Run:
    """A stream's run of repeated records not summarised yet."""

    __slots__ = ("keys", "records", "started")

    def __init__(self) -> None:
        self.records: list[logging.LogRecord] = []
        self.keys: list[bytes] = []
        self.started = time.monotonic()


class _Outbox:
    """Decided records waiting to be forwarded, in order, by one thread at a time with
    no lock of the handler's held (so a target that logs back cannot deadlock)."""

    def __init__(self) -> None:
        self._records: deque[logging.LogRecord] = deque()
        self._forwarding = threading.Lock()  # held by the one thread forwarding

    def put(self, records: Iterable[logging.LogRecord]) -> None:
        self._records.extend(records)

    def drain(self, send: Callable[[logging.LogRecord], None], wait: float = 0.0) -> None:
        """``send`` each record in order. A thread that finds another forwarding leaves
        its records to it (``wait``: or waits that long for its turn), and the
        forwarding thread looks again after it lets go, so nothing stays behind."""
        deadline = time.monotonic() + wait
        while self._records:
            if not self._forwarding.acquire(timeout=max(0.0, deadline - time.monotonic())):
                return
            try:
                while self._records:
                    send(self._records.popleft())
            finally:
                self._forwarding.release()


class _Folds:
    """The rule over log records: records held until the engine decides them, each
    stream's run of removed records, and the summaries that replace the runs (the
    handler's lock serialises every call)."""

    def __init__(
        self,
        window: int,
        history: int | None,
        stream: Callable[[logging.LogRecord], Hashable] | None,
        include_args: bool,
        every: int | float | None,
    ) -> None:
        self._decisions = Decisions(window, history, closed=False)  # (flags: the kernel's)
        self._stream = stream
        self._include_args = include_args
        self._every = every
        self._streams: dict[Hashable, int] = {}
        self.held: dict[int, tuple[int, bytes, logging.LogRecord]] = {}  # by order
        self._batch: list[bytes] = []  # keys not handed to the engine yet
        self._batch_streams: list[int] = []
        self._fed = 0  # records handed to the engine (the next one's order)
        self._decided = 0  # records the engine has decided
        self.runs: dict[int, _Run] = {}  # by stream number

    def hold(self, record: logging.LogRecord) -> list[logging.LogRecord]:
        """Take a record; what got decided (a full batch is handed to the engine)."""
        name = record.thread if self._stream is None else self._stream(record)
        stream = self._streams.setdefault(name, len(self._streams))
        order = self._fed + len(self._batch)
        key = record_key(record, self._include_args).encode("utf-8", "surrogateescape")
        self.held[order] = (stream, key, record)
        self._batch.append(key)
        self._batch_streams.append(stream)
        return self._feed() if len(self._batch) >= BATCH else []

    @property
    def holding(self) -> bool:
        return bool(self.held or self._batch or self.runs)

    def _feed(self) -> list[logging.LogRecord]:
        """Hand the batch to the engine; the records it decided, in order (runs of
        repeats as summaries where each ended)."""
        batch, streams = self._batch, self._batch_streams
        self._batch, self._batch_streams = [], []
        self._fed += len(batch)
        return self._decided_records(self._decisions.feed(batch, streams).keep)

    def decide_all(self) -> list[logging.LogRecord]:
        """Everything held decided (as at a pause: no window spans it), every run
        summarised."""
        out = self._feed() if self._batch else []
        out += self._decided_records(self._decisions.pause().keep)
        for stream in list(self.runs):
            out += self.summary(stream, ended=True)
        return out

    def _decided_records(self, keep: list[bool]) -> list[logging.LogRecord]:
        """The next records are decided (``keep``: one flag each, in order). A removed
        record joins its stream's run; a kept one ends the run of its stream first."""
        out: list[logging.LogRecord] = []
        for order, kept in enumerate(keep, self._decided):
            stream, key, record = self.held.pop(order)
            if kept:
                if stream in self.runs:
                    out += self.summary(stream, ended=True)
                out.append(record)
                continue
            run = self.runs.get(stream)
            if run is None:
                run = self.runs[stream] = _Run()
            run.records.append(record)
            run.keys.append(key)
            if isinstance(self._every, int) and len(run.records) >= self._every:
                out += self.summary(stream, ended=False)
        self._decided += len(keep)
        return out

    def summary(self, stream: int, ended: bool) -> list[logging.LogRecord]:
        run = self.runs.pop(stream)
        if not ended:
            self.runs[stream] = _Run()
        return [summary_record(run.records, run.keys, stream, not ended)]


class FoldingHandler(logging.Handler):
    """Forward records to ``target`` (a handler, or the name of one configured by
    ``logging.config.dictConfig``), folding repeated sequences of ``window`` or more
    records into one summary record per run.

    ``stream(record)`` names a record's stream (default: its thread); ``include_args``
    keys records by their formatted message instead of their template; ``every``: a
    summary also every that many removed records (an int) or seconds (a float; 60 by
    default, None: only when the run ends) of a run that goes on; ``idle``: seconds
    without records after which held records are decided; ``max_delay``: no record is
    held longer; ``pass_level``: records at or above it are forwarded at once (what is
    held before them first); ``history``: the windows remembered (None: all)."""

    def __init__(
        self,
        target: logging.Handler | str,
        window: int = 5,
        *,
        stream: Callable[[logging.LogRecord], Hashable] | None = None,
        include_args: bool = False,
        every: int | float | None = EVERY,
        idle: float | None = 1.0,
        max_delay: float | None = 5.0,
        pass_level: int = logging.CRITICAL,
        history: int | None = 100_000,
        level: int = logging.NOTSET,
    ) -> None:
        super().__init__(level)
        self._target = target
        self.window = window
        self._folds_of: Callable[[], _Folds] = partial(
            _Folds, window, history, stream, include_args, every
        )
        self._every = every
        self._idle = idle
        self._max_delay = max_delay
        self._pass_level = pass_level
        self._start()
        _FORKED.add(self)

    def _start(self) -> None:
        """A fresh engine, nothing held, and the timer running (at creation, and in a
        forked child, where the parent's held records are the parent's to forward)."""
        self._folds = self._folds_of()
        self._last_emit = time.monotonic()
        self._outbox = _Outbox()  # decided, not forwarded yet
        self._stop = threading.Event()
        self._timer: threading.Thread | None = None
        if self._closed:  # type: ignore[attr-defined]
            return
        idle, delay, every = self._idle, self._max_delay, self._every
        if idle is not None or delay is not None or isinstance(every, float):
            self._timer = threading.Thread(target=self._tick, name="seqdedup-folding", daemon=True)
            self._timer.start()

    # -- logging.Handler --------------------------------------------------------------
    def handle(self, record: logging.LogRecord) -> bool:
        """Filter and emit under the lock (as ``logging.Handler``), then forward what
        was decided with the lock released."""
        result = bool(super().handle(record))
        self._drain()
        return result

    def emit(self, record: logging.LogRecord) -> None:
        """(called with the handler's lock held, by ``handle``)"""
        try:
            self._last_emit = time.monotonic()
            if record.levelno >= self._pass_level:
                self._post([*self._folds.decide_all(), record])
            else:
                self._post(self._folds.hold(record))
        except Exception:  # never into the application: handleError, as every handler
            self.handleError(record)

    def flush(self) -> None:
        """Decide and forward everything held, then flush the target."""
        with self.lock:  # type: ignore[union-attr]
            try:
                self._post(self._folds.decide_all())
            except Exception:
                self.handleError(_INTERNAL)
        self._drain(wait=DRAIN_WAIT)
        target = self._resolved()
        if target is not None:
            target.flush()

    def close(self) -> None:
        """Forward what is held (interpreter exit calls this through logging.shutdown;
        the target is closed on its own), and stop the timer."""
        self._stop.set()
        self.flush()
        if self._timer is not None and self._timer is not threading.current_thread():
            self._timer.join(timeout=5)
        super().close()

    # -- forwarding -------------------------------------------------------------------
    def _post(self, records: list[logging.LogRecord]) -> None:
        """Decided records, to be forwarded in this order (under the lock). A summary
        passes this handler's filters first, as the records it replaces did."""
        self._outbox.put(r for r in records if "seqdedup" not in r.__dict__ or self.filter(r))

    def _drain(self, wait: float = 0.0) -> None:
        self._outbox.drain(self._send, wait)

    def _send(self, record: logging.LogRecord) -> None:
        """One record to the target; a failure is reported for that record alone."""
        try:
            target = self._resolved()
            if target is None:
                raise RuntimeError(f"no handler named {self._target!r}")
            target.handle(record)
        except Exception:
            self.handleError(record)

    def _resolved(self) -> logging.Handler | None:
        target = self._target
        if isinstance(target, str):  # (a name: dictConfig made it, maybe after us)
            found: logging.Handler | None = logging._handlers.get(target)  # type: ignore[attr-defined]
            if found is None:
                return None
            self._target = target = found
        return target

    def _tick(self) -> None:
        """The timer: a pause decides what is held; so does a record held too long; a
        run that goes on is summarised every ``every`` seconds."""
        step = min(x for x in (self._idle, self._max_delay, 1.0) if x is not None) / 4
        lock = self.lock
        assert lock is not None
        while not self._stop.wait(step):
            # Never blocked on the lock: logging.shutdown holds it while close() waits
            # for this thread, which must see the stop at once and end.
            while not lock.acquire(blocking=False):
                if self._stop.wait(LOCK_RETRY):
                    return
            try:
                self._post(self._timed())
            except Exception:
                self.handleError(_INTERNAL)
            finally:
                lock.release()
            self._drain()

    def _timed(self) -> list[logging.LogRecord]:
        folds, now = self._folds, time.monotonic()
        if not folds.holding:
            return []
        held = folds.held.values()
        oldest = min(held, key=lambda h: h[2].created)[2] if held else None
        too_old = (
            self._max_delay is not None
            and oldest is not None
            and time.time() - oldest.created >= self._max_delay
        )
        if (self._idle is not None and now - self._last_emit >= self._idle) or too_old:
            return folds.decide_all()
        out: list[logging.LogRecord] = []
        if isinstance(self._every, float):
            for stream, run in list(folds.runs.items()):
                if now - run.started >= self._every and run.records:
                    out += folds.summary(stream, ended=False)
        return out


def record_key(record: logging.LogRecord, include_args: bool = False) -> str:
    """What is compared: level, logger, message template (or the formatted message),
    exception and stack; never the time."""
    if record.exc_info and not record.exc_text:  # (cached on the record, as Formatter does)
        record.exc_text = _FORMATTER.formatException(record.exc_info)
    message = record.getMessage() if include_args else str(record.msg)
    return f"{record.levelno}|{record.name}|{message!r}|{record.exc_text!r}|{record.stack_info!r}"


def summary_record(
    records: list[logging.LogRecord], keys: list[bytes], stream: int, continues: bool
) -> logging.LogRecord:
    """One record for a run of repeated records: at the highest level among them, from
    their logger (or ``seqdedup``), with the fold line's fields as its attributes. It
    carries every other field of the last record it replaces (``extra`` fields a
    formatter names, the folded thread's name and id), without its exception."""
    from seqdedup.engine.pykernel import shortest_period

    length = _period(keys, shortest_period)
    copies, extra = divmod(len(records), length)
    texts = {
        tuple(_text(r) for r in records[k : k + length]) for k in range(0, len(records), length)
    }
    first, last = records[0], records[-1]
    names = {r.name for r in records}
    fields: dict[str, Any] = {
        "removed": len(records),
        "copies": copies,
        "extra": extra,
        "length": length,
        "variants": len(texts),
        "first_time": first.created,
        "last_time": last.created,
        "stream": stream,
        "thread_name": first.threadName,
        "continues": continues,
    }
    # The summary's level is the highest it replaces (a level filter downstream still
    # sees the errors); its text names every level it replaced, so folded INFO records
    # after one ERROR do not read as errors.
    levels: dict[str, int] = {}
    for r in sorted(records, key=lambda r: r.levelno):
        levels[r.levelname] = levels.get(r.levelname, 0) + 1
    fields["levels"] = levels
    replaced = ", ".join(f"{count} {name}" for name, count in levels.items())
    message = (
        f"seqdedup: {len(records)} repeated records folded ({copies} "
        f"{'copy' if copies == 1 else 'copies'} of a sequence of {length}"
        + (f" and {extra} more" if extra else "")
        + (f", {len(texts)} variants of the text" if len(texts) > 1 else "")
        + f", thread {first.threadName}; replaced {replaced})"
    )
    level = max(r.levelno for r in records)
    record = logging.makeLogRecord(last.__dict__)
    record.name = names.pop() if len(names) == 1 else "seqdedup"
    record.levelno, record.levelname = level, logging.getLevelName(level)
    record.msg, record.args, record.message = message, None, message
    record.exc_info = record.exc_text = record.stack_info = None
    record.created, record.msecs = last.created, last.msecs
    record.seqdedup = fields
    for name, value in fields.items():
        setattr(record, f"seqdedup_{name}", value)
    return record


def _period(keys: list[bytes], shortest_period: Callable[[bytes], int]) -> int:
    """The length of the sequence a run repeats (the shortest period of its keys)."""
    import hashlib

    digests = b"".join(hashlib.blake2b(key, digest_size=16).digest() for key in keys)
    return shortest_period(digests)


def _text(record: logging.LogRecord) -> str:
    return record.getMessage() + "\n" + (record.exc_text or "")


# Every handler, so that a forked child restarts each (a child has no timer thread).
_FORKED: weakref.WeakSet[FoldingHandler] = weakref.WeakSet()


def _restart_in_child() -> None:
    for handler in list(_FORKED):
        handler._start()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_restart_in_child)

_FORMATTER = logging.Formatter()
_INTERNAL = logging.LogRecord("seqdedup", logging.ERROR, __file__, 0, "seqdedup", None, None)


__all__ = ["FoldingHandler", "record_key", "summary_record"]
