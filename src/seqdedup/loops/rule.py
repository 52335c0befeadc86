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


Events = dict[int, list[int]]  # (a call's place: the periods that begin or end there)


def _period_events(identity: list[int], max_period: int) -> tuple[Events, Events]:
    """Where each period becomes possible for a loop's start and where it stops. A loop
    of period p from ``start`` needs, in its first iteration, a call whose identity
    comes again ``p`` calls on, or ``p + 1`` past an extra call. A call ``j`` whose
    identity comes again ``d`` calls on allows ``p = d`` from the starts ``j - d + 1``
    to ``j`` and ``p = d - 1`` from ``j - d + 2`` to ``j``; for each ``d`` such calls
    in a row are one stretch of starts (calls alike make one event per period, not
    one per pair)."""
    reach = max_period + 1
    recent: dict[int, list[int]] = {}
    runs: dict[int, list[int]] = {}  # (d: the first and last call of its current row)
    begins: Events = {}
    ends: Events = {}

    def close(distance: int, first: int, last: int) -> None:
        for period, begin in (
            (distance, first - distance + 1),
            (distance - 1, first - distance + 2),
        ):
            if 1 <= period <= max_period:
                begins.setdefault(max(begin, 0), []).append(period)
                ends.setdefault(last + 1, []).append(period)

    for at, ident in enumerate(identity):
        seen = recent.setdefault(ident, [])
        while seen and at - seen[0] > reach:
            seen.pop(0)
        for earlier in seen:  # (for one distance, the earlier calls come in order)
            run = runs.get(at - earlier)
            if run is not None and run[1] == earlier - 1:
                run[1] = earlier
            else:
                if run is not None:
                    close(at - earlier, *run)
                runs[at - earlier] = [earlier, earlier]
        seen.append(at)
    for distance, (first, last) in runs.items():
        close(distance, first, last)
    return begins, ends


class LoopFinder:
    """The loops of one transcript's calls (see the module)."""

    def __init__(self, keys: Keyed, max_period: int = MAX_PERIOD) -> None:
        self.keys = keys
        self.count = len(keys.identity)
        self.max_period = max_period
        self._best: dict[int, dict[State, _Best]] = {}
        self._alike: dict[int, dict[tuple[int, ...], _Best]] = {}
        self.comparisons = 0  # (calls compared: the work, counted for the tests)
        self._begins, self._ends = _period_events(keys.identity, max_period)
        self._swept, self._active = 0, dict[int, int]()  # (see _periods)

    def _periods(self, start: int) -> list[int]:
        """The periods a loop from ``start`` may have (see ``_period_events``): the
        starts are swept in order, each stretch's period counted in where it begins
        and out after it ends."""
        if start < self._swept:  # (asked out of order: swept again from the first)
            self._swept, self._active = 0, {}
        active = self._active
        while self._swept <= start:
            for period in self._begins.get(self._swept, ()):
                active[period] = active.get(period, 0) + 1
            for period in self._ends.get(self._swept, ()):
                if active[period] == 1:
                    del active[period]
                else:
                    active[period] -= 1
            self._swept += 1
        return sorted(active)

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

    def _following(self, period: int, state: State) -> list[State]:
        """The iterations that may follow the one at ``state``: without an extra call
        first, then with one at each place. An extra call at offset q compares the
        calls before it as without one and those after it one place on, so the two
        alignments are each walked once (from the front, and from the back).

        Two calls count as equal when their identities are, or for p >= 2 (the rule's
        tolerance) when the later one's result is non-empty and the earlier's, or its
        shape is the earlier's."""
        first, skipped = state
        moved = skipped != NO_EXTRA  # (the compared calls past the extra: one place on)
        start = first + period + moved  # (the next iteration's first call)
        count = self.count
        identity, result, shape = self.keys.identity, self.keys.result, self.keys.shape
        loose = period > 1

        def tolerated(later: int, earlier: int) -> bool:  # (identities differ)
            return bool(result[later] and result[later] == result[earlier]) or (
                shape[later] == shape[earlier]
            )

        out: list[State] = []
        compared = 0
        lead, first_exact = 0, period  # (calls equal from the front; the first exact)
        while lead < period and start + lead < count:
            later, earlier = start + lead, first + lead + (moved and lead >= skipped)
            compared += 1
            if identity[later] == identity[earlier]:
                if first_exact == period:
                    first_exact = lead
            elif not (loose and tolerated(later, earlier)):
                break
            lead += 1
        if lead == period and first_exact < period:
            out.append((start, NO_EXTRA))
        if start + period < count:
            tail, last_exact = period, -1  # (equal one place on, from the back; the last exact)
            while tail > 0:
                later, earlier = start + tail, first + tail - 1 + (moved and tail > skipped)
                compared += 1
                if identity[later] == identity[earlier]:
                    if last_exact < 0:
                        last_exact = tail - 1
                elif not (loose and tolerated(later, earlier)):
                    break
                tail -= 1
            for extra in range(tail, min(lead, period - 1) + 1):
                if first_exact < extra or last_exact >= extra:
                    out.append((start, extra))
        self.comparisons += compared
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
    from seqdedup.engine.choice import chosen_engine

    if not 1 <= max_period <= MAX_PERIOD:
        raise UsageError(f"max_period must be 1 to {MAX_PERIOD}, not {max_period}")
    return LoopFinder(keyed(calls, mask_bits(normalize), chosen_engine()), max_period).loops()
