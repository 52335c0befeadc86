"""The loop rule (docs/loops.md states it; the tests' oracle implements it literally).

A loop of period p (1 <= p <= MAX_PERIOD) with k iterations is a stretch of calls in
which each iteration equals the one before it call by call. Two tolerances: an
iteration after the first may hold one extra call, anywhere before its last (it is
skipped, not compared); and for p >= 2 a call whose identity differs still counts as
equal when its result is non-empty and equal to the earlier call's, or when it has the
same shape, provided each iteration keeps at least one call whose identity is equal.
Reported: k >= 3, or k = 2 and p = 1 with the two calls adjacent and byte for byte the
same in action and result.

Which loops: the calls are read from the first; at the first call where some period
gives a loop, the loop reported is the one reaching furthest (the most iterations a
period allows from there, then the fewest calls), the smallest period among equals;
the reading goes on after its last call.

Work: from an iteration, which iterations may follow does not depend on where the
loop began, so each period's answers are kept for every iteration met (a state is
where an iteration starts and which of its calls, if any, is the extra one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from seqdedup.base.errors import UsageError
from seqdedup.loops.calls import Call, Keyed, keyed, mask_bits

MAX_PERIOD = 64
NO_EXTRA = -1

State = tuple[int, int]  # (an iteration's first call, the offset of its extra call or -1)


class Loop(NamedTuple):
    """A loop: its period, its iterations, its first and last call (indexes into the
    calls), the calls of its first iteration, and the extra calls of later ones."""

    period: int
    iterations: int
    first: int
    last: int
    calls: tuple[int, ...]
    inserted: tuple[int, ...]


class _Best(NamedTuple):
    iterations: int  # from this iteration on, itself counted
    last: int  # the last call of the last of them
    following: State | None  # the iteration chosen after this one


def matched(state: State, period: int) -> list[int]:
    """The calls of an iteration that are compared (its extra call left out)."""
    start, extra = state
    if extra == NO_EXTRA:
        return list(range(start, start + period))
    return [*range(start, start + extra), *range(start + extra + 1, start + period + 1)]


def _repeats(identity: list[int], reach: int) -> dict[int, list[int]]:
    """For each call whose identity comes again within ``reach`` calls: how far on
    (a loop needs one such pair per iteration: the periods worth trying)."""
    recent: dict[int, list[int]] = {}
    distances: dict[int, list[int]] = {}
    for at, ident in enumerate(identity):
        seen = recent.setdefault(ident, [])
        while seen and at - seen[0] > reach:
            seen.pop(0)
        for earlier in seen:
            distances.setdefault(earlier, []).append(at - earlier)
        seen.append(at)
    return distances


class LoopFinder:
    """The loops of one transcript's calls (see the module)."""

    def __init__(self, keys: Keyed, max_period: int = MAX_PERIOD) -> None:
        self.keys = keys
        self.count = len(keys.identity)
        self.max_period = max_period
        self._best: dict[int, dict[State, _Best]] = {}
        self._alike: dict[int, dict[tuple[int, ...], _Best]] = {}
        self.comparisons = 0  # (calls compared: the work, counted for the tests)
        self._distances = _repeats(keys.identity, max_period + 1)
        self._changes = self._period_changes()
        self._swept, self._active = 0, dict[int, int]()  # (see _periods)

    def _periods(self, start: int) -> list[int]:
        """The periods a loop from ``start`` may have: its second iteration keeps a call
        whose identity equals its counterpart's, at ``p`` calls on, or ``p + 1`` past
        an extra call. A pair of equal identities ``d`` apart at ``j`` allows ``p = d``
        from the starts ``j - d + 1`` to ``j`` and ``p = d - 1`` from ``j - d + 2``: the
        starts are swept in order, each pair's periods counted in and out."""
        if start < self._swept:  # (asked out of order: swept again from the first)
            self._swept, self._active = 0, {}
        while self._swept <= start:
            for period, change in self._changes.get(self._swept, ()):
                count = self._active.get(period, 0) + change
                if count:
                    self._active[period] = count
                else:
                    del self._active[period]
            self._swept += 1
        return sorted(self._active)

    def _period_changes(self) -> dict[int, list[tuple[int, int]]]:
        """Where each pair of equal identities starts and stops allowing its periods."""
        changes: dict[int, list[tuple[int, int]]] = {}
        for call, distances in self._distances.items():
            for distance in distances:
                for period, first in (
                    (distance, call - distance + 1),
                    (distance - 1, call - distance + 2),
                ):
                    if 1 <= period <= self.max_period:
                        changes.setdefault(max(first, 0), []).append((period, 1))
                        changes.setdefault(call + 1, []).append((period, -1))
        return changes

    def loops(self) -> list[Loop]:
        found: list[Loop] = []
        start = 0
        while start < self.count:
            loop = self.loop_at(start)
            if loop is None:
                start += 1
            else:
                found.append(loop)
                start = loop.last + 1
        return found

    def loop_at(self, start: int) -> Loop | None:
        """The loop reported from call ``start``, or None."""
        chosen: Loop | None = None
        for period in self._periods(start):
            if start + 2 * period > self.count:
                break
            loop = self._loop(start, period)
            if loop is not None and (chosen is None or loop.last > chosen.last):
                chosen = loop
                if loop.last == self.count - 1:
                    break  # (no period reaches further; the smallest is kept)
        return chosen

    def _loop(self, start: int, period: int) -> Loop | None:
        first: State = (start, NO_EXTRA)
        if first not in self._best.get(period, {}) and not self._following(period, first):
            return None  # (the common case: no second iteration; nothing kept for it)
        best = self._solve(period, first)
        if best.iterations < 2:
            return None
        if best.iterations == 2 and not (
            period == 1
            and best.following == (start + 1, NO_EXTRA)
            and self.keys.same_as_before[start + 1]
        ):
            return None
        inserted = []
        state = best.following
        while state is not None:
            if state[1] != NO_EXTRA:
                inserted.append(state[0] + state[1])
            state = self._best[period][state].following
        calls = tuple(range(start, start + period))
        return Loop(period, best.iterations, start, best.last, calls, tuple(inserted))

    def _equal(self, period: int, later: int, earlier: int) -> bool:
        keys = self.keys
        self.comparisons += 1
        if keys.identity[later] == keys.identity[earlier]:
            return True
        if period == 1:
            return False
        result = keys.result[later]
        return (result != 0 and result == keys.result[earlier]) or (
            keys.shape[later] == keys.shape[earlier]
        )

    def _following(self, period: int, state: State) -> list[State]:
        """The iterations that may follow the one at ``state``: without an extra call
        first, then with one at each place. An extra call at offset q compares the
        calls before it as without one and those after it one place on, so the two
        alignments are each walked once (from the front, and from the back)."""
        before = matched(state, period)
        start = before[-1] + 1
        out: list[State] = []
        identity = self.keys.identity
        lead, first_exact = 0, period  # (calls equal from the front; the first exact)
        while (
            lead < period
            and start + lead < self.count
            and self._equal(period, start + lead, before[lead])
        ):
            if first_exact == period and identity[start + lead] == identity[before[lead]]:
                first_exact = lead
            lead += 1
        if lead == period and first_exact < period:
            out.append((start, NO_EXTRA))
        if start + period >= self.count:
            return out
        tail, last_exact = period, -1  # (equal one place on, from the back; the last exact)
        while tail > 0 and self._equal(period, start + tail, before[tail - 1]):
            tail -= 1
            if last_exact < 0 and identity[start + tail + 1] == identity[before[tail]]:
                last_exact = tail
        for extra in range(tail, min(lead, period - 1) + 1):
            if first_exact < extra or last_exact >= extra:
                out.append((start, extra))
        return out

    def _solve(self, period: int, root: State) -> _Best:
        """The best loop from the iteration at ``root`` on: the most iterations, then
        the earliest last call, then the first choice in order (iterative: a loop may
        be longer than Python's stack is deep)."""
        known = self._best.setdefault(period, {})
        alike = self._alike.setdefault(period, {})
        pending: dict[State, list[State]] = {}
        stack = [root]
        while stack:
            state = stack[-1]
            if state in known:
                stack.pop()
                continue
            signature = self._signature(period, state)
            if signature in alike:  # (an iteration like one worked out: the same future)
                known[state] = alike[signature]
                stack.pop()
                continue
            nexts = pending.get(state)
            if nexts is None:
                nexts = pending[state] = self._following(period, state)
                missing = [s for s in nexts if s not in known]
                if missing:
                    stack.extend(reversed(missing))
                    continue
            best = _Best(1, matched(state, period)[-1], None)
            for following in nexts:
                then = known[following]
                if then.iterations + 1 > best.iterations or (
                    then.iterations + 1 == best.iterations and then.last < best.last
                ):
                    best = _Best(then.iterations + 1, then.last, following)
            known[state] = alike[signature] = best
            del pending[state]
            stack.pop()
        return known[root]

    def _signature(self, period: int, state: State) -> tuple[int, ...]:
        """What decides an iteration's future: where the next one starts and what its
        compared calls are (their identities, which fix their shapes and results). Two
        iterations alike in these have the same followers, so the same best loop."""
        identity = self.keys.identity
        start, extra = state
        if extra == NO_EXTRA:
            return (start + period, *identity[start : start + period])
        return (
            start + period + 1,
            *identity[start : start + extra],
            *identity[start + extra + 1 : start + period + 1],
        )


def find_loops(
    calls: Sequence[Call], normalize: str = "all", max_period: int = MAX_PERIOD
) -> list[Loop]:
    """The loops of ``calls`` (in order), each call's identity masked with the classes
    ``normalize`` names (``--normalize``'s words; "all" by default: timestamps, ids,
    numbers). Indexes in the loops are into ``calls``."""
    from seqdedup.base.kernel import load

    if not 1 <= max_period <= MAX_PERIOD:
        raise UsageError(f"max_period must be 1 to {MAX_PERIOD}, not {max_period}")
    return LoopFinder(keyed(calls, mask_bits(normalize), load()), max_period).loops()
