"""A time limit for user patterns (``--mask``, ``--track``, ``--bypass``).

Python's ``re`` backtracks: a pattern such as ``(a+)+$`` takes exponential time on a
line of a few dozen characters, and the run would never end. ``re`` checks for signals
while it matches, so a timer (``SIGALRM``) can look at it. A whole batch is matched
under one interval timer (two system calls per batch, and one look per tenth of the
limit while a batch lasts); each look notes which record is being matched, read from
how far the batch's iterator has gone (nothing is done per record). A record seen
being matched for the whole limit ends the run with one line naming the pattern and
the record; a batch of many records that are each merely slow goes on. The run stops
at most a fifth of the limit after the record has taken the limit.

The guard needs the main thread and a ``SIGALRM`` that nobody else uses; elsewhere
(a thread of a host program, Windows) patterns run unguarded.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from time import monotonic
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
    """A record took the whole limit (a BaseException: no ``except Exception`` swallows
    it on its way out of the match)."""


def _guard_possible() -> bool:
    import signal
    import threading  # (here: the loop hook, which starts per call, never needs it)

    return (
        hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None)
    )


@contextlib.contextmanager
def _looking(look: Callable[[int, object], None], every: float) -> Iterator[None]:
    """``look`` called every ``every`` seconds while the block runs."""
    import signal

    previous = signal.signal(signal.SIGALRM, look)
    try:
        signal.setitimer(signal.ITIMER_REAL, every, every)
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
    from operator import length_hint

    limit, count = PATTERN_SECONDS, len(items)
    remaining = iter(items)
    seen = [-1, 0.0]  # the item the last look found being matched, and since when

    def look(signum: int, frame: object) -> None:
        # (map takes an item from the iterator before it calls the function on it)
        index, now = count - length_hint(remaining) - 1, monotonic()
        if index != seen[0]:
            seen[0], seen[1] = index, now
        elif now - seen[1] >= limit:
            raise _Expired

    try:
        with _looking(look, limit / 10):
            return list(map(function, remaining))
    except _Expired:
        raise PatternTimeout(label, int(seen[0])) from None
