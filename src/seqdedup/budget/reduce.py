"""``--budget N``: the whole input reduced to fit in N tokens, exactly and always the
same way (docs/llm-context.md).

The log is read as events and kinds of line (:mod:`seqdedup.budget.events`). Units earn their
place in the output in rank order while the budget lasts: every error event (its first
occurrence verbatim), then every kind of line once, then the lines around the events,
then the rest. The largest prefix of that order whose output fits is found by
bisection, so the budget is spent, not just met. Every stretch left out becomes one
marker line that says what it held: the lines it repeats (a block and how many
copies), or its kinds of line with their counts, the values that differ where it is of
one kind, and its time span. Each marker carries a reference to the exact bytes it
replaces (:mod:`seqdedup.budget.removed`), so nothing is lost: ``seqdedup-expand`` restores
the input byte for byte from the reduced text and the ``--keep-removed`` file.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from itertools import accumulate
from typing import NamedTuple

from seqdedup.base.engine import Engine
from seqdedup.base.errors import visible
from seqdedup.base.message import message_of
from seqdedup.base.records import Int64s
from seqdedup.base.tokens import TokenCounter, estimate_tokens
from seqdedup.budget.events import (
    Units,
    context_order,
    ranked_units,
    shape_groups,
    units_of,
)
from seqdedup.budget.input import Buffer, WholeInput, verbatim_units
from seqdedup.budget.removed import (
    OWN_STARTS,
    RemovedStore,
    digest_of,
    escaped,
    shortest_prefixes,
    vouching_line,
)
from seqdedup.budget.shapes import ShapeNote, lines_named, shape_notes
from seqdedup.budget.values import briefly, columns
from seqdedup.config.groups import BudgetOptions, KeyOptions
from seqdedup.config.normalize import VALUES
from seqdedup.config.settings import Config
from seqdedup.engine.choice import chosen_engine

PLACEHOLDER = "sd:" + "0a" * 4  # a reference as it costs at most (8 pieces)
KINDS_NAMED = 1  # the kinds of line a marker names (then how many more) ...
KINDS_NAMED_LONG = 3  # ... and a long one (--long-markers)
VALUES_READ = 256  # records of a stretch read for the values that differ (both ends)
HEAD_WIDTH = 24  # bytes of a kind's first line that name it where no line shows it
HEAD_WIDTH_LONG = 32
EXHAUSTIVE = 128  # units up to which every count is tried (past it: bisection)
FILL_TRIES = 48  # units past the largest fitting count tried one by one
COPY_TRIES = 16  # earlier occurrences of a stretch's first key tried as what it repeats
SHAPE_READ = 4096  # lines of an error shape read for its note's values (both ends)
SHAPE_COLUMNS = 2  # the fields a shape's note names
NOTE_ROOM = 120  # characters of values in a shape's note, at least (budget / 6 above)
Ranges = list[tuple[int, int]]


class Reduction(NamedTuple):
    """A reduced text, its references (full digest -> exact bytes replaced), and its
    figures."""

    text: bytes
    pieces: Mapping[str, bytes]  # full digest -> the exact bytes a marker replaced
    references: dict[str, str]  # full digest -> its reference (sd:...)
    lines: dict[str, tuple[int, int]]  # full digest -> the input lines it held (1-based)
    markers: list[tuple[int, str | None]]  # (line of the reduced text, digest or None)
    tokens_in: int
    tokens_out: int
    verbatim_lines: int
    met: bool
    step: str  # the last step taken
    # each marker line where it stands in ``text``: (first byte, the byte past its
    # delimiter, digest or None); what restores it, whatever the delimiter
    marker_bytes: tuple[tuple[int, int, str | None], ...] = ()
    events: int = 0  # error events (distinct), and how many of them are shown
    events_shown: int = 0
    kinds: int = 0  # kinds of line (distinct), and how many of them are shown
    kinds_shown: int = 0

    def summary(self, budget: int, unit: str = "tokens") -> str:
        """One line of figures (what the command says on standard error; ``unit``: what
        the budget counts)."""
        met = "within" if self.met else "NOT within"
        return (
            f"{self.tokens_in:,} {unit} in, {self.tokens_out:,} out, {met} the budget of "
            f"{budget:,}; shown: {self.events_shown:,} of {self.events:,} error events, "
            f"{self.kinds_shown:,} of {self.kinds:,} kinds of line, {self.step}; "
            f"{len(self.pieces):,} references"
        )


def reduce_to_budget(
    data: Buffer, config: Config, count_tokens: TokenCounter | None = None
) -> Reduction:
    """``config.budget``'s reduction of the whole input ``data``, with what it removed
    stored in ``config.keep_removed`` (one transaction) when that is set."""
    assert config.budget is not None
    if count_tokens is None and config.tokenizer is not None:
        from seqdedup.base.tokens import tokenizer_counter

        count_tokens = tokenizer_counter(config.tokenizer)
    options = config.budget_options
    engine = chosen_engine()
    reduction = reduce_input(data, options, config.key_options, count_tokens, engine=engine)
    if config.keep_removed is not None:
        store = RemovedStore(config.keep_removed)
        try:
            store.save(
                reduction.pieces,
                reduction.text,
                config.delimiter,
                digest_of(data),
                reduction.markers,
                reduction.marker_bytes,
            )
        finally:
            store.close()
    return reduction


class Costs:
    """Token costs: each record's (with its delimiter) as prefix sums, and a line's."""

    def __init__(self, log: WholeInput, count: TokenCounter | None):
        engine = log.engine
        self._count = count or estimate_tokens
        delimiter = self._count(log.delimiter)
        # the estimate counts many records in one call (None: a tokenizer, one by one)
        self._each = engine.record_tokens if count is None else None
        # (the sums of the first k records, without their delimiters: added per record
        # below)
        if count is None:
            self.sums: Int64s = engine.token_sums(log.data, log.bounds)
        else:
            each = (self._count(r) for r in log.records(0, log.count))
            self.sums = array("q", accumulate(each, initial=0))
        self._delimiter = delimiter

    def records(self, first: int, last: int) -> int:
        if last < first:
            return 0
        return self.sums[last + 1] - self.sums[first] + (last - first + 1) * self._delimiter

    def line(self, text: bytes) -> int:
        return self._count(text) + self._delimiter

    def lines(self, texts: list[bytes]) -> Sequence[int]:
        """Each line's tokens (with its delimiter), counted in one call where the
        kernel counts."""
        if self._each is None:
            return [self.line(text) for text in texts]
        bounds = array("q")
        at = 0
        for text in texts:
            bounds.append(at)
            at += len(text)
            bounds.append(at)
        counts = self._each(b"".join(texts), bounds)
        return [count + self._delimiter for count in counts]

    def text(self, text: bytes, delimiter: bytes) -> int:
        """The tokens of a whole text, line by line as the budget counts them."""
        if self._each is not None:
            lines = WholeInput(text, delimiter)
            each = self._each(text, lines.bounds)
            return sum(each) + self._delimiter * lines.count
        return sum(self.line(line) for line in WholeInput(text, delimiter).records(0, None))


class Layout:
    """What an output shows and how its markers read: the units in rank order, the
    repeats the engine found, and the text of a marker for any stretch left out."""

    def __init__(
        self,
        log: WholeInput,
        units: Units,
        costs: Costs,
        ranked: list[int],
        long: bool = False,
    ) -> None:
        self.log = log
        self.escaped = False  # (input lines escaped: the first line vouches for them; set)
        self.units = units
        self.costs = costs
        self.long = long  # (--long-markers)
        self._named_kinds = KINDS_NAMED_LONG if long else KINDS_NAMED
        self._head_width = HEAD_WIDTH_LONG if long else HEAD_WIDTH
        self.order = [(units.starts[u], units.ends[u]) for u in ranked]
        # the error shapes' notes, and the note each place of the order shows
        self.notes: list[ShapeNote] = []
        self._note_at: dict[int, int] = {}
        self._note_costs: list[int] = []
        self.values = partial(log.engine.value_matches, bits=VALUES)  # (what masks a value)
        self._counted = _counted_as(units, log.engine)
        self._tally = log.engine.tally
        # each stretch's kinds with their counts, most frequent first: the search asks
        # for the same stretches again and again
        self._kinds: dict[tuple[int, int], tuple[list[tuple[int, int]], int]] = {}
        self._copies: dict[tuple[int, int], tuple[str | None, int]] = {}  # (and repeats)
        # (a marker's text: by its stretch, its reference and which of the lines it may
        # name are shown, all it depends on)
        self._markers: dict[tuple[int, int, str, tuple[bool, ...]], bytes] = {}

    def insert_notes(self, notes: list[ShapeNote], at: int) -> None:
        """Error shapes' notes, each shown after its example, placed at ``at`` in the
        order (a place that shows its example, shown before it: it costs its note)."""
        self._note_at.update((at + k, len(self.notes) + k) for k in range(len(notes)))
        self.notes += notes
        self._note_costs += [self.costs.line(note.text) for note in notes]
        self.order[at:at] = [(note.first, note.last) for note in notes]

    def notes_shown(self, count: int, extra: Sequence[int], shown: Ranges) -> list[int]:
        """The notes an output showing the first ``count`` places of the order (and the
        ``extra`` ones) shows: those whose shape has a line not ``shown`` (where every
        line is, the note would tell nothing)."""
        return [
            n
            for at, n in self._note_at.items()
            if (at < count or at in extra)
            and not all(_inside(shown, line) for line in self.notes[n].lines)
        ]

    def plan(self, count: int, extra: Sequence[int] = ()) -> tuple[Ranges, Ranges, list[int]]:
        """The record ranges shown when the first ``count`` units of the order are (and
        the ``extra`` ones), the stretches left out between them and each one's marker
        tokens (references costed at their most); a stretch that costs no more than its
        marker would is shown instead. Left to right: a marker names only records up to
        its own, so the ranges shown so far decide its text (and a stretch shown lets a
        later marker name its repeat)."""
        chosen = _merged(sorted([*self.order[:count], *(self.order[k] for k in extra)]))
        shown: Ranges = []
        gaps: Ranges = []
        costs: list[int] = []
        for first, last, left_out in self._stretches(chosen):
            if left_out:
                tokens = self.costs.line(self.marker(first, last, PLACEHOLDER, shown))
                if self.costs.records(first, last) > tokens:
                    gaps.append((first, last))
                    costs.append(tokens)
                    continue
            if shown and first == shown[-1][1] + 1:
                shown[-1] = (shown[-1][0], last)
            else:
                shown.append((first, last))
        return shown, gaps, costs

    def _stretches(self, shown: Ranges) -> Iterator[tuple[int, int, bool]]:
        """The shown ranges and the stretches between them, in order (True: left out)."""
        at = 0
        for first, last in shown:
            if first > at:
                yield at, first - 1, True
            yield first, last, False
            at = last + 1
        if at < self.log.count:
            yield at, self.log.count - 1, True

    def marker(self, first: int, last: int, reference: str, shown: Ranges) -> bytes:
        """The marker of records ``first`` .. ``last``: what they repeat, or their kinds
        with counts (each named by the line that shows it, else by its first words);
        when (unless the lines around it say so); a long one (--long-markers) counts
        the lines, names a third kind and the values that differ."""
        count, named_kinds = last - first + 1, self._named_kinds
        kinds, distinct = self._kinds_in(first, last)
        copy, source = self._copy_of(first, last)
        inside = (
            _inside(shown, source),
            *(_inside(shown, self.units.first[kind]) for kind, _ in kinds[:named_kinds]),
        )
        found = self._markers.get((first, last, reference, inside))
        if found is not None:
            return found
        text = f"[{reference} {lines_named(first, last)}"
        text += f" ({count} lines): " if count > 1 and self.long else ": "
        copy = copy if inside[0] else None
        if copy is not None:
            text += copy
        else:
            named = [self._named(kind, n, shown) for kind, n in kinds[:named_kinds]]
            others = (count - sum(n for _, n in kinds), distinct - len(named))
            text += _kinds_said(named, count, *others, long=self.long)
        if distinct == 1 and count > 1 and self.long:
            text += self._differing(first, last, self.units.first[kinds[0][0]])
        text += _time_span(self.log, first, last, self.long)
        made = self._markers[first, last, reference, inside] = (text + "]").encode(
            "utf-8", "surrogateescape"
        )
        return made

    def _kinds_in(self, first: int, last: int) -> tuple[list[tuple[int, int]], int]:
        """The KINDS_NAMED most frequent kinds of records ``first`` .. ``last`` with their
        counts (ties: the first met), and how many kinds there are."""
        found = self._kinds.get((first, last))
        if found is None:
            size = len(self.units.first)
            distinct, pairs = self._tally(self._counted, first, last, size, self._named_kinds)
            top = array("q", pairs)
            found = self._kinds[first, last] = (
                list(zip(top[::2], top[1::2], strict=True)),
                distinct,
            )
        return found

    def _named(self, kind: int, count: int, shown: Ranges) -> str:
        example = self.units.first[kind]
        if _inside(shown, example):
            return f"{count} like line {example + 1}"
        record = self.log.record(example)
        head = message_of(record, self.log.stamp(record), self._head_width, kind=True)
        return f'{count} like "{head}"'

    def _copy_of(self, first: int, last: int) -> tuple[str | None, int]:
        """``first`` .. ``last`` as a repeat of an earlier stretch, or as copies of a
        block (a stretch that repeats itself), where the keys are the same record for
        record (else None), and where that stretch starts; ``, byte for byte`` where the
        text is too (seqdedup-expand
        then restores it from the reduced text alone). The earlier stretches tried end
        where the first record's key occurred before, nearest first: the nearest whose
        text is the same, else the nearest whose keys are."""
        found = self._copies.get((first, last))
        if found is not None:
            return found
        count = last - first + 1
        kinds = self.units.line_kind
        chosen, exact = -1, False
        source = self.units.previous[first]
        for _ in range(COPY_TRIES):
            if source < 0:
                break
            # (the last keys first: a long stretch's keys are sliced only where they may match)
            same = kinds[source + count - 1] == kinds[last]
            if same and kinds[source : source + count] == kinds[first : last + 1]:
                exact = _same_bytes(self.log, first, last, first - source)
                if chosen < 0 or exact:
                    chosen = source
                if exact:
                    break
            source = self.units.previous[source]
        text = None if chosen < 0 else _copy_text(first, last, chosen, exact)
        found = self._copies[first, last] = (text, chosen)
        return found

    def _differing(self, first: int, last: int, example: int) -> str:
        """The values (numbers, addresses, ids, paths, quoted; not times) in which records
        ``first`` .. ``last`` differ from each other and from their example: a few listed, many as
        their range and how many distinct (a long stretch read at both ends, VALUES_READ
        records in all, so that a counter's range is whole)."""
        records = [self.log.record(example)]
        complete = last - first + 1 <= VALUES_READ
        if complete:
            records += self.log.records(first, last + 1)
        else:
            half = VALUES_READ // 2
            records += self.log.records(first, first + half)
            records += self.log.records(last + 1 - half, last + 1)
        found = columns(records, self.values)[:2]
        return "; values " + "; ".join(briefly(c, complete) for c in found) if found else ""

    def tokens(self, count: int, note: bytes | None, extra: Sequence[int] = ()) -> int:
        """The tokens of the output that shows the first ``count`` units and the
        ``extra`` ones (references costed at their most)."""
        shown, _, markers = self.plan(count, extra)
        total = sum(self.costs.records(first, last) for first, last in shown) + sum(markers)
        total += sum(self._note_costs[n] for n in self.notes_shown(count, extra, shown))
        if markers or note is not None or self.escaped:  # (the line that vouches)
            total += self.costs.line(VOUCHING_SAMPLE)
        return total + (self.costs.line(note) if note is not None else 0)


def _copy_text(first: int, last: int, source: int, exact: bool) -> str:
    """How a marker says that ``first`` .. ``last`` repeat the stretch from ``source``."""
    count, period = last - first + 1, first - source
    if period >= count:  # (a block seen once before)
        text = f"a repeat of {lines_named(source, source + count - 1)}"
    else:
        copies, extra = divmod(count, period)
        block = lines_named(source, source + period - 1)
        text = f"{copies} copies of {block}" if period > 1 else f"{copies} like {block}"
        text += f" and {extra} of its lines" if extra else ""
    return text + (", byte for byte" if exact else "")


def _same_bytes(log: WholeInput, first: int, last: int, period: int) -> bool:
    """Whether records ``first`` .. ``last`` are those ``period`` records earlier, byte
    for byte (they are exactly when the bytes from the first's start to the last's end
    are: the delimiters inside fall at the same places)."""
    bounds, data = log.bounds, log.data
    return bool(
        data[bounds[2 * first] : bounds[2 * last + 1]]
        == data[bounds[2 * (first - period)] : bounds[2 * (last - period) + 1]]
    )


def _counted_as(units: Units, engine: Engine) -> array[int]:
    """What a marker counts each record as: its kind of line, and an event's its shape
    (named by the shape's first event): "43 like line 1; values 14 .. 56"."""
    counted = array("q")
    counted.frombytes(units.line_kind.cast("B"))
    shapes = units.event_kinds
    lines = shapes.lines
    first_of_shape: dict[bytes, int] = {}
    value = [  # (each line's; the lines ascending: a shape's first record comes first)
        first_of_shape.setdefault(shape, counted[record])
        for shape, record in zip(shapes.shape, lines.firsts, strict=True)
    ]
    # (each verbatim record's, its line's value)
    values = engine.take(array("q", value).tobytes(), 8, lines.ids)
    engine.put(counted, 8, shapes.verbatim, values)
    return counted


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted record ranges, the touching and overlapping ones joined."""
    merged: list[tuple[int, int]] = []
    for first, last in ranges:
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(last, merged[-1][1]))
        else:
            merged.append((first, last))
    return merged


def _kinds_said(named: list[str], count: int, more: int, others: int, long: bool) -> str:
    """A stretch's kinds as its marker says them: those ``named``, then ``others``
    other kinds ("+3 other kinds": their lines are the rest of the stretch's; the
    long form counts them, "7 more of 3 other kinds"); a stretch of one line is "like
    line 5", not "1 like line 5"."""
    if count == 1:
        named = [named[0].removeprefix("1 ")]
    said = ", ".join(named)
    if others:
        kinds = f"{others} other kind{'s' * (others > 1)}"
        said += f", {more} more of {kinds}" if long and more > others else f" +{kinds}"
    return said


def _inside(ranges: list[tuple[int, int]], record: int) -> bool:
    at = bisect_right(ranges, (record, 1 << 62)) - 1
    return record >= 0 and at >= 0 and ranges[at][0] <= record <= ranges[at][1]


def _escaped_input(data: Buffer, delimiter: bytes, engine: Engine) -> tuple[WholeInput, bool]:
    """The input's records, with ESCAPE before each that begins as a marker or a note
    would (no input line can read as one), and whether any does. Records are looked at
    only where they start (letters folded, then checked exactly: the common case costs
    no pass over the bytes)."""
    log = WholeInput(data, delimiter, engine)
    starts = engine.literal_hits(data, log.bounds, (), tuple(s.lower() for s in OWN_STARTS))
    if 1 not in starts:
        return log, False
    escaped_data = escaped(data, delimiter)
    if escaped_data is data:  # (a start in other letter case: nothing to escape)
        return log, False
    return WholeInput(escaped_data, delimiter, engine), True


def reduce_input(
    data: Buffer,
    options: BudgetOptions,
    keys: KeyOptions,
    count_tokens: TokenCounter | None = None,
    *,
    engine: Engine,
) -> Reduction:
    """Reduce ``data`` (the whole input, records as ``keys`` split and compare them) to
    fit in ``options.budget`` tokens (see the module)."""
    assert options.budget is not None
    budget = options.budget
    log, escaped_any = _escaped_input(data, keys.delimiter, engine)
    costs = Costs(log, count_tokens)
    verbatim, heads = verbatim_units(log, options.keep, options.verbatim_levels)
    units = units_of(log, verbatim, heads, keys, options.event_fields, engine)
    ranked, events, kinds, kinds_at = ranked_units(units)
    layout = Layout(log, units, costs, ranked, options.long_markers)
    layout.escaped = escaped_any
    # the notes of the error shapes right after their examples, before the kinds
    groups, room = shape_groups(units, ranked), max(NOTE_ROOM, budget // 6)
    notes = shape_notes(log, units, groups, room, options.event_fields, layout.values)
    layout.insert_notes(notes, kinds_at)
    # the events among the first k places of the order (one of each shape comes before
    # the kinds, more of a shape after them)
    flags = [units.verbatim[u] for u in ranked]
    before = [0, *accumulate([*flags[:kinds_at], *[0] * len(notes), *flags[kinds_at:]])]
    tokens_in = costs.records(0, log.count - 1)
    sums = [0, *accumulate(costs.records(a, b) for a, b in layout.order)]
    if sums[-1] < budget:  # (room for more than every new unit: the lines around them)
        anchors = [u for u in ranked if units.verbatim[u]] or ranked
        layout.order += [(r, r) for r in context_order(units, anchors, ranked, log.count)]
        sums = [0, *accumulate(costs.records(a, b) for a, b in layout.order)]
    # (the input as it stands, its escaped lines vouched for by the first line)
    whole = tokens_in + (costs.line(VOUCHING_SAMPLE) if layout.escaped else 0)
    if whole <= budget:
        chosen = len(layout.order)
    else:
        most = min(len(sums) - 1, bisect_right(sums, budget))
        chosen = _largest_fitting(layout, budget, most, events, before)
    extra = _filled(layout, budget, chosen, events, before)
    shown, gaps, _ = layout.plan(chosen, extra)
    shown_notes = layout.notes_shown(chosen, extra, shown)
    events_shown = sum(_inside(shown, units.starts[u]) for u in ranked if units.verbatim[u])
    kinds_shown = sum(_inside(shown, units.starts[u]) for u in ranked if not units.verbatim[u])
    more = sum(b - a + 1 for a, b in shown) - sum(
        units.ends[u] - units.starts[u] + 1 for u in ranked if _inside(shown, units.starts[u])
    )
    note = _events_note(events, events_shown) if events_shown < events else None
    step = f"{more:,} more lines"
    reduction = render(
        layout, (shown, gaps, shown_notes), note, budget, tokens_in, step, verbatim,
        escaped_any,
    )  # fmt: skip
    return reduction._replace(
        events=events, events_shown=events_shown, kinds=kinds, kinds_shown=kinds_shown
    )


def _filled(layout: Layout, budget: int, chosen: int, events: int, before: list[int]) -> list[int]:
    """Units past the first ``chosen`` that still fit one by one, in rank order (a
    unit too large for what is left, such as a long traceback, lets smaller ones
    after it in): up to FILL_TRIES tried."""
    extra: list[int] = []
    note = _note(events, before, chosen)
    for unit in range(chosen + 1, min(len(layout.order), chosen + 1 + FILL_TRIES)):
        if layout.tokens(chosen, note, [*extra, unit]) <= budget:
            extra.append(unit)
    return extra


def _largest_fitting(layout: Layout, budget: int, most: int, events: int, before: list[int]) -> int:
    """The most units of the order whose output fits (at least none): bisection, the
    output's tokens growing with the units shown, then the counts just above tried."""

    def fits(count: int) -> bool:
        return layout.tokens(count, _note(events, before, count)) <= budget

    if most <= EXHAUSTIVE:  # (few units: every count tried, the output's tokens
        # need not grow with them: a unit shown can let a marker name a repeat)
        return max((c for c in range(most + 1) if fits(c)), default=0)
    low, high = 0, most
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    above = range(low + 1, min(most, low + EXHAUSTIVE // 8) + 1)
    return max((c for c in above if fits(c)), default=low)


def _note(events: int, before: list[int], count: int) -> bytes | None:
    """The events note of an output showing the first ``count`` units of the order
    (``before``: the events among the first k), None when it shows every event."""
    shown = before[min(count, len(before) - 1)]
    return _events_note(events, shown) if shown < events else None


def _events_note(events: int, shown: int) -> bytes:
    return (
        f"[seqdedup: {events:,} error events; the {shown:,} shown are FATAL first, then "
        "ERROR, then WARN, one of each kind of line before more of it, the most frequent "
        "and the most recent of each; the others are counted in the markers]"
    ).encode()


def _time_span(log: WholeInput, first: int, last: int, long: bool) -> str:
    """When the stretch ``first`` .. ``last`` was, as far as the lines right before and
    after it do not say so with timestamps of their own: nothing between two stamped
    lines, "until" its last time after one, "from" its first before one (without the
    date that line shows), else both (the end without the date the start gives). The
    long form gives both, whole, unless both lines are stamped. (A stretch left out is
    always between lines shown, or at an end: the planning, which makes markers left to
    right before the lines after them are placed, costs the same marker.)"""
    stamp = log.stamp
    before, after = (
        stamp(log.record(line)) if 0 <= line < log.count else "" for line in (first - 1, last + 1)
    )
    if before and after:
        return ""
    start, end = stamp(log.record(first)), stamp(log.record(last))
    if not (start and end):
        return ""
    if start == end:
        return f"; {visible(start)}"
    if not long and before:
        return f"; until {visible(_after_shared_date(before, end))}"
    if not long and after:
        return f"; from {visible(_after_shared_date(after, start))}"
    return f"; {visible(start)} .. {visible(end if long else _after_shared_date(start, end))}"


def _after_shared_date(known: str, time: str) -> str:
    """``time`` without its date where the ``known`` time has the same: the part up to
    its last space or "T" ("20:11:11" for "17/06/09 20:11:11" after "17/06/09
    20:10:57")."""
    cut = max(time.rfind(" "), time.rfind("T")) + 1
    return time[cut:] if cut and known[:cut] == time[:cut] else time


def render(
    layout: Layout,
    planned: tuple[Ranges, Ranges, Sequence[int]],
    note: bytes | None,
    budget: int,
    tokens_in: int,
    step: str,
    verbatim: bytearray,
    escaped_any: bool = False,
) -> Reduction:
    """The reduced text that shows what is ``planned`` (the ranges shown, the gaps
    between them, the shape notes shown), its references and figures; it starts with
    the line that vouches for it wherever it is not the input as it stands."""
    (shown, gaps, shown_notes), log, costs = planned, layout.log, layout.costs
    delimiter = log.delimiter
    digests = {(a, b): digest_of(log.span(a, b, view=True)) for a, b in gaps}
    spans = {digest: gap for gap, digest in digests.items()}
    references = shortest_prefixes(spans)
    out: list[bytes] = []
    markers: list[tuple[int, str | None]] = []
    placed: list[tuple[int, int, str | None]] = []
    lines = at = hidden_verbatim = size = 0
    # markers, and notes after their examples (before a marker at the same place)
    notes = [(layout.notes[n].last + 1, -1, layout.notes[n].text) for n in shown_notes]
    for first, last, line in sorted([*notes, *((a, b, None) for a, b in gaps)]):
        if first > at:
            out.append(log.span(at, first - 1))
            size += len(out[-1])
            lines += first - at
            at = first
        digest = None  # (a note: it stands for no input)
        if line is None:  # (a stretch left out: its marker)
            digest = digests[first, last]
            line = layout.marker(first, last, references[digest], shown)
            hidden_verbatim += verbatim[first : last + 1].count(1)
            at = last + 1
        out.append(line + delimiter)
        markers.append((lines, digest))
        placed.append((size, size + len(out[-1]), digest))
        size += len(out[-1])
        lines += 1
    if at < log.count:
        out.append(log.span(at, log.count - 1))
    text, markers, placed, tokens_out = _headed(
        costs, delimiter, b"".join(out), markers, placed, (note, budget, escaped_any)
    )
    kept_verbatim = verbatim.count(1) - hidden_verbatim
    return Reduction(
        text,
        RemovedPieces(log, spans),
        references,
        {digest: (a + 1, b + 1) for digest, (a, b) in spans.items()},
        markers,
        tokens_in,
        tokens_out,
        kept_verbatim,
        tokens_out <= budget,
        step,
        tuple(placed),
    )


Placed = list[tuple[int, int, str | None]]


class RemovedPieces(Mapping[str, bytes]):
    """The exact bytes each marker replaced, by full digest: read from the input when
    asked (they are most of a large input; a run without --keep-removed reads none)."""

    def __init__(self, log: WholeInput, spans: dict[str, tuple[int, int]]) -> None:
        self._log = log
        self._spans = spans

    def __getitem__(self, digest: str) -> bytes:
        first, last = self._spans[digest]
        return self._log.span(first, last)

    def __iter__(self) -> Iterator[str]:
        return iter(self._spans)

    def __len__(self) -> int:
        return len(self._spans)


def _headed(
    costs: Costs,
    delimiter: bytes,
    text: bytes,
    markers: list[tuple[int, str | None]],
    placed: Placed,
    asked: tuple[bytes | None, int, bool],
) -> tuple[bytes, list[tuple[int, str | None]], Placed, int]:
    """The text with its first lines: the note, the one saying the budget is not met
    (only where not even the markers alone fit), and above them the line that vouches
    for the markers (wherever the text is not the input as it stands); its tokens.
    ``asked``: the note, the budget, and whether any input line was escaped."""
    note, budget, escaped_any = asked
    if note is not None:
        text, markers, placed = _noted(note + delimiter, text, markers, placed)
    least = costs.text(text, delimiter)
    if markers or escaped_any:
        least += costs.line(vouching_line(text))
    if least > budget:
        over = (
            f"[seqdedup: the budget of {budget:,} tokens is not met: the least output "
            f"takes {least:,}]"
        ).encode()
        text, markers, placed = _noted(over + delimiter, text, markers, placed)
    if markers or escaped_any:
        text, markers, placed = _noted(vouching_line(text) + delimiter, text, markers, placed)
    return text, markers, placed, costs.text(text, delimiter)


# (the first line as it costs at most: its check's digits and letters alternate)
VOUCHING_SAMPLE = re.sub(rb"[0-9a-f]{12}", b"0a" * 6, vouching_line(b""))


def _noted(
    line: bytes,
    text: bytes,
    markers: list[tuple[int, str | None]],
    placed: list[tuple[int, int, str | None]],
) -> tuple[bytes, list[tuple[int, str | None]], list[tuple[int, int, str | None]]]:
    """The text with a note ``line`` first: a marker of its own (dropped on expanding),
    the others one line and ``len(line)`` bytes further."""
    shift = len(line)
    markers = [(0, None)] + [(at + 1, digest) for at, digest in markers]
    placed = [(0, shift, None)] + [(a + shift, b + shift, d) for a, b, d in placed]
    return line + text, markers, placed
