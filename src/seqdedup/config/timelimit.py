"""A time limit for user patterns (``--mask``, ``--track``, ``--bypass``).

Python's ``re`` backtracks: a pattern such as ``(a+)+$`` takes exponential time on a
line of a few dozen characters, and the run would never end. ``re`` checks for signals
while it matches, so a timer (``SIGALRM``) can stop it. A whole batch is matched under
one timer, which costs two system calls per batch; only when a batch runs past the
limit are its records matched again one by one, each under its own timer, to find a
record that takes too long alone (a batch of many records that are each merely slow
goes on). Such a record ends the run with one line naming the pattern and the record.

The guard needs the main thread and a ``SIGALRM`` that nobody else uses; elsewhere
(a thread of a host program, Windows) patterns run unguarded.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from seqdedup.base.errors import SeqdedupError

PATTERN_SECONDS = 5.0  # the longest one record may take with one pattern

Item = TypeVar("Item")
Result = TypeVar("Result")


class PatternTimeout(SeqdedupError):
    """A pattern took longer than PATTERN_SECONDS on one record. ``index`` is the
    record's position in the batch it was matched in, until the caller that knows the
    record numbers calls :meth:`at`."""

    def __init__(self, label: str, index: int, where: str = "") -> None:
        self.label, self.index = label, index
        where = where or f"record {index + 1} of its batch"
        super().__init__(
            f"{label} took more than {PATTERN_SECONDS:g} s on {where}: the pattern "
            "backtracks without end on it (nested repetition such as (a+)+ does); "
            "simplify the pattern"
        )

    def at(self, where: str) -> PatternTimeout:
        """The same error, saying where the record is (``line 7 of b.log``)."""
        return PatternTimeout(self.label, self.index, where)


class _Expired(BaseException):
    """The timer went off (a BaseException: no ``except Exception`` swallows it)."""


def _expire(signum: int, frame: object) -> None:
    raise _Expired


def _guard_possible() -> bool:
    import signal

    return (
        hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None)
    )


@contextlib.contextmanager
def _timer(seconds: float) -> Iterator[None]:
    import signal

    previous = signal.signal(signal.SIGALRM, _expire)
    try:
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, previous)


def each_within(
    function: Callable[[Item], Result], items: Sequence[Item], label: str
) -> list[Result]:
    """``list(map(function, items))``, stopped with :class:`PatternTimeout` when
    ``function`` takes longer than PATTERN_SECONDS on one item. ``label`` names the
    pattern in the message (``--mask '(a+)+$'``)."""
    if not items or not _guard_possible():
        return list(map(function, items))
    try:
        with _timer(PATTERN_SECONDS):
            return list(map(function, items))
    except _Expired:
        pass
    results: list[Result] = []  # a slow batch: which record is slow on its own?
    for index, item in enumerate(items):
        try:
            with _timer(PATTERN_SECONDS):
                results.append(function(item))
        except _Expired:
            raise PatternTimeout(label, index) from None
    return results
