"""``--budget N``: the whole input reduced to fit in N tokens, exactly and always the
same way (docs/llm-context.md).

The lines that must stay verbatim (errors, warnings and their tracebacks: the built-in
patterns and ``--keep``) keep their first occurrence, unchanged and in order; their
repeats fold only when their text is identical. The rest is reduced in a fixed order
until the output fits, each step tried on the whole input:

1. fold exact repeats (the run's window and key options);
2. fold repeats once timestamps, UUIDs and hex ids are masked (verbatim lines still by
   their exact text);
3. the same with smaller windows (W/2, then 1);
4. elide the stretches of output lines that are neither verbatim nor within
   ``CONTEXT`` lines of one, largest saving first, each replaced by one marker; then
   with less context (down to none).

Every fold line and elision marker carries a reference to the exact bytes it replaces
(:mod:`seqdedup.removed`), so nothing is lost: ``seqdedup-expand`` restores the input
byte for byte from the reduced text and the ``--keep-removed`` file.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import accumulate
from types import ModuleType
from typing import NamedTuple

from seqdedup.budgetinput import (
    Buffer,
    Source,
    ones,
    verbatim_flags,
)
from seqdedup.config import Config
from seqdedup.decisions import Block, Decisions
from seqdedup.errors import visible
from seqdedup.keys import key_maker
from seqdedup.normalize import timestamp_finder
from seqdedup.removed import RemovedStore, digest_of, shortest_prefixes
from seqdedup.tokens import TokenCounter, estimate_tokens, record_tokens

PLACEHOLDER = "sd:" + "0a" * 6  # a reference as it costs at most (12 pieces)
SOURCES_NAMED = 3  # the stretches a fold line names (then how many more)
CONTEXT = 3  # lines kept around each verbatim line, as grep -C 3 (dropped last)
BATCH = 65_536  # records handed to a pass's engine at once
IDS = "timestamp,uuid,hex"  # the masks of step 2


class Reduction(NamedTuple):
    """A reduced text, its references (full digest -> exact bytes replaced), and its
    figures."""

    text: bytes
    pieces: dict[str, bytes]  # full digest -> the exact bytes a marker replaced
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

    def summary(self, budget: int) -> str:
        """One line of figures (what the command says on standard error)."""
        met = "within" if self.met else "NOT within"
        return (
            f"{self.tokens_in:,} tokens in, {self.tokens_out:,} out, {met} the budget of "
            f"{budget:,} (last step: {self.step}); {self.verbatim_lines:,} lines kept "
            f"verbatim; {len(self.pieces):,} references"
        )


def reduce_to_budget(
    data: Buffer, config: Config, count_tokens: TokenCounter | None = None
) -> Reduction:
    """``config.budget``'s reduction of the whole input ``data``, with what it removed
    stored in ``config.keep_removed`` (one transaction) when that is set."""
    from seqdedup.engine import load

    assert config.budget is not None
    reduction = reduce_input(data, config, config.budget, config.keep, count_tokens, load())
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


class Fold(NamedTuple):
    """Records ``start`` .. ``end`` (0-based, inclusive) removed as repeats of the
    ``sources`` (each an earlier stretch, first and last record, as long as the piece
    of the run it stands for); ``exact``: each piece byte for byte its source."""

    start: int
    end: int
    sources: tuple[tuple[int, int], ...]
    exact: bool


def fold_pass(
    source: Source,
    verbatim: bytearray,
    window: int,
    keys: Config,
    kernel: ModuleType | None,
) -> list[Fold]:
    """The folds of one step: the run's rule (:class:`seqdedup.decisions.Decisions`,
    its pieces) on each record's key: its text for a verbatim record, else the key
    ``keys`` makes of it; the two kinds kept apart by a first byte."""
    maker = key_maker(keys, kernel, 0) if keys.keyed else None
    rule = Decisions(window, pieces=True)
    pieces: list[Block] = []
    for first in range(0, source.count, BATCH):
        records = source.records(first, min(source.count, first + BATCH))
        made = records if maker is None else maker.keys(records)
        flags = verbatim[first : first + len(records)]
        keyed = [b"v" + r if f else b"k" + k for r, k, f in zip(records, made, flags, strict=True)]
        pieces += rule.feed(keyed).blocks
    pieces += rule.finish().blocks
    return _folds_of(source, pieces)


def _folds_of(source: Source, pieces: list[Block]) -> list[Fold]:
    """Folds from the pieces (each repeats one earlier stretch by key): adjacent pieces
    make one fold; whether each piece is a byte-for-byte copy is checked."""
    data, bounds = source.data, source.bounds
    runs: list[tuple[int, int, list[tuple[int, int]], bool]] = []
    for piece in pieces:
        start, end = piece.start, piece.end
        match_start, match_end = piece.source_start, piece.source_end
        # (records equal one by one exactly when the stretches between the first's
        # start and the last's end are: the delimiters inside fall at the same places)
        exact = (
            data[bounds[2 * start] : bounds[2 * end + 1]]
            == data[bounds[2 * match_start] : bounds[2 * match_end + 1]]
        )
        if runs and runs[-1][1] + 1 == start:
            first, _, sources, was_exact = runs[-1]
            sources.append((match_start, match_end))
            runs[-1] = (first, end, sources, was_exact and exact)
        else:
            runs.append((start, end, [(match_start, match_end)], exact))
    return [Fold(start, end, tuple(sources), exact) for start, end, sources, exact in runs]


class Plan:
    """The output of one step: the folds, then the elisions chosen, as record ranges;
    its tokens computed from prefix sums (no line made until it is written)."""

    def __init__(self, source: Source, folds: list[Fold], costs: Costs) -> None:
        self.source = source
        self.folds = folds
        self.costs = costs
        self.fold_starts = [fold.start for fold in folds]
        self.removed = sum(costs.records(f.start, f.end) for f in folds)
        self.fold_lines = costs.lines([fold_text(source, f, PLACEHOLDER) for f in folds])
        self.fold_line_sums = [0, *accumulate(self.fold_lines)]
        self.elided: list[tuple[int, int]] = []  # record ranges, sorted
        self.tokens = costs.records(0, source.count - 1) - self.removed + sum(self.fold_lines)

    def output_tokens(self, first: int, last: int) -> int:
        """The tokens of the output lines that records ``first`` .. ``last`` make
        (the range holds whole folds)."""
        if last < first:
            return 0
        low = bisect_left(self.fold_starts, first)
        high = bisect_right(self.fold_starts, last)
        removed = sum(self.costs.records(f.start, f.end) for f in self.folds[low:high])
        lines = self.fold_line_sums[high] - self.fold_line_sums[low]
        return self.costs.records(first, last) - removed + lines


class Costs:
    """Token costs: each record's (with its delimiter) as prefix sums, and a line's."""

    def __init__(self, source: Source, count: TokenCounter | None, kernel: ModuleType | None):
        self._count = count or estimate_tokens
        delimiter = self._count(source.delimiter)
        # the estimate counts many records in one call (None: a tokenizer, one by one)
        self._each = record_tokens(kernel) if count is None else None
        if self._each is not None:
            each = self._each(source.data, source.bounds)
        else:
            each = array("q", (self._count(r) for r in source.records(0, source.count)))
        self.sums = array("q", [0])
        self.sums.extend(accumulate(t + delimiter for t in each))
        self._delimiter = delimiter

    def records(self, first: int, last: int) -> int:
        return self.sums[last + 1] - self.sums[first] if last >= first else 0

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
            lines = Source(text, delimiter)
            each = self._each(text, lines.bounds)
            return sum(each) + self._delimiter * lines.count
        return sum(self.line(line) for line in Source(text, delimiter).records(0, None))


def fold_text(source: Source, fold: Fold, reference: str) -> bytes:
    """A fold line: what it replaces, where, which lines it repeats (how often), when,
    and whether the text alone is enough to read it."""
    counts: dict[tuple[int, int], int] = {}
    for stretch in fold.sources:
        counts[stretch] = counts.get(stretch, 0) + 1
    named = [
        _lines(a, b) + (f" ({n} times)" if n > 1 else "")
        for (a, b), n in list(counts.items())[:SOURCES_NAMED]
    ]
    if len(counts) > SOURCES_NAMED:
        named.append(f"{len(counts) - SOURCES_NAMED} more stretches")
    text = f"[{reference}: {_lines(fold.start, fold.end)} folded, repeats of "
    text += ", ".join(named) + _time_span(source, fold.start, fold.end)
    if fold.exact:
        text += "; the same text, byte for byte]"
    else:
        text += "; the same by key, the text differs: expand the reference]"
    return text.encode("utf-8", "surrogateescape")


def elision_text(source: Source, first: int, last: int, reference: str) -> bytes:
    count = last - first + 1
    text = f"[{reference}: {_lines(first, last)} elided ({count} line{'s' * (count > 1)})"
    text += _time_span(source, first, last) + "; expand the reference]"
    return text.encode("utf-8", "surrogateescape")


def _lines(first: int, last: int) -> str:
    """Records ``first`` .. ``last`` (0-based) as the lines they are (1-based)."""
    return f"line {first + 1}" if first == last else f"lines {first + 1}-{last + 1}"


def _time_span(source: Source, first: int, last: int) -> str:
    stamp = source.stamp
    start, end = stamp(source.record(first)), stamp(source.record(last))
    return f", {visible(start)} .. {visible(end)}" if start and end else ""


def protected_ranges(plan: Plan, verbatim: bytearray, context: int) -> list[tuple[int, int]]:
    """Record ranges elision must leave: each verbatim record written as it is, and the
    ``context`` output lines before and after it (whole folds)."""
    folds, starts = plan.folds, plan.fold_starts
    ranges: list[tuple[int, int]] = []

    def fold_at(record: int) -> Fold | None:  # the fold a record lies in
        at = bisect_right(starts, record) - 1
        return folds[at] if at >= 0 and folds[at].end >= record else None

    def line_at(record: int) -> tuple[int, int]:  # the output line a record makes
        fold = fold_at(record)
        return (record, record) if fold is None else (fold.start, fold.end)

    for record in ones(verbatim):
        if fold_at(record) is not None:
            continue  # a folded repeat: its line is no verbatim line
        first = last = record
        for _ in range(context):
            if first > 0:
                first = line_at(first - 1)[0]
            if last + 1 < plan.source.count:
                last = line_at(last + 1)[1]
        if ranges and first <= ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], max(last, ranges[-1][1]))
        else:
            ranges.append((first, last))
    return ranges


def elide(plan: Plan, verbatim: bytearray, context: int, budget: int, costs: Costs) -> None:
    """Elide the gaps between protected ranges, largest saving first, until the plan
    fits (ties: the earlier gap)."""
    gaps, at = [], 0
    for first, last in [*protected_ranges(plan, verbatim, context), (plan.source.count, 0)]:
        if first > at:
            gaps.append((at, first - 1))
        at = max(at, last + 1)
    savings = sorted(
        (
            (
                plan.output_tokens(a, b) - costs.line(elision_text(plan.source, a, b, PLACEHOLDER)),
                a,
                b,
            )
            for a, b in gaps
        ),
        key=lambda saving: (-saving[0], saving[1]),
    )
    chosen = []
    for saving, first, last in savings:
        if plan.tokens <= budget or saving <= 0:
            break
        chosen.append((first, last))
        plan.tokens -= saving
    plan.elided = sorted(chosen)


def reduce_input(
    data: Buffer,
    config: Config,
    budget: int,
    keep: Sequence[str] = (),
    count_tokens: TokenCounter | None = None,
    kernel: ModuleType | None = None,
) -> Reduction:
    """Reduce ``data`` (the whole input) to fit in ``budget`` tokens (see the module)."""
    source = Source(data, config.delimiter, timestamp_finder(kernel))
    costs = Costs(source, count_tokens, kernel)
    verbatim = verbatim_flags(source, keep)
    tokens_in = costs.records(0, source.count - 1)
    steps: list[tuple[str, int, Config]] = [("exact", config.window_size, config)]
    ids = config._replace(key_steps=(*config.key_steps, ("normalize", IDS)))
    steps.append(("ids", config.window_size, ids))
    steps += [
        ("ids", w, ids)
        for w in sorted({max(1, config.window_size // 2), 1}, reverse=True)
        if w < config.window_size
    ]
    contexts = range(CONTEXT, -1, -1)
    if verbatim_floor(source, verbatim, costs) > budget:
        # (no step can fit: each would be tried in vain before the most reducing one)
        steps, contexts = steps[-1:], range(0, -1, -1)
    plan = Plan(source, [], costs)
    step = "none"
    if plan.tokens > budget:
        for name, window, keys in steps:
            step = f"{name} (window {window})"
            plan = Plan(source, fold_pass(source, verbatim, window, keys, kernel), costs)
            if plan.tokens <= budget:
                break
    folded = plan.tokens  # (each context is tried from the folds alone)
    for context in contexts:
        if plan.tokens <= budget:
            break
        plan.tokens = folded
        elide(plan, verbatim, context, budget, costs)
        step = f"elide (context {context})"
    return render(plan, verbatim, costs, budget, tokens_in, step)


def verbatim_floor(source: Source, verbatim: bytearray, costs: Costs) -> int:
    """The tokens every output holds: each verbatim line's first occurrence."""
    firsts: dict[bytes, int] = {}
    for record in ones(verbatim):
        firsts.setdefault(source.record(record), costs.records(record, record))
    return sum(firsts.values())


def render(
    plan: Plan, verbatim: bytearray, costs: Costs, budget: int, tokens_in: int, step: str
) -> Reduction:
    """The reduced text of a plan, its references and figures."""
    source = plan.source
    delimiter = source.delimiter
    cuts: list[tuple[int, int, Fold | None]] = sorted(
        [(f.start, f.end, f) for f in plan.folds if not _inside(plan.elided, f.start)]
        + [(a, b, None) for a, b in plan.elided]
    )
    spans = {digest_of(source.span(a, b)): (a, b) for a, b, _ in cuts}
    references = shortest_prefixes(spans)
    out: list[bytes] = []
    markers: list[tuple[int, str | None]] = []
    placed: list[tuple[int, int, str | None]] = []
    lines = at = removed_verbatim = size = 0
    for first, last, fold in cuts:
        if first > at:
            out.append(source.span(at, first - 1))
            size += len(out[-1])
            lines += first - at
        digest = digest_of(source.span(first, last))
        reference = references[digest]
        if fold is None:
            out.append(elision_text(source, first, last, reference) + delimiter)
        else:
            out.append(fold_text(source, fold, reference) + delimiter)
        markers.append((lines, digest))
        placed.append((size, size + len(out[-1]), digest))
        size += len(out[-1])
        removed_verbatim += verbatim[first : last + 1].count(1)
        lines += 1
        at = last + 1
    if at < source.count:
        out.append(source.span(at, source.count - 1))
    text = b"".join(out)
    tokens_out = costs.text(text, delimiter)
    kept_verbatim = verbatim.count(1) - removed_verbatim
    if tokens_out > budget:  # (only where the verbatim lines and their folds do not fit)
        note = (
            f"[seqdedup: the budget of {budget:,} tokens is not met: the {kept_verbatim:,} "
            f"lines kept verbatim and the lines between them take {tokens_out:,}]"
        ).encode()
        text, markers, placed = _noted(note + delimiter, text, markers, placed)
        tokens_out += costs.line(note)
    return Reduction(
        text,
        {digest: source.span(a, b) for digest, (a, b) in spans.items()},
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


def _inside(ranges: list[tuple[int, int]], record: int) -> bool:
    at = bisect_right(ranges, (record, 1 << 62)) - 1
    return at >= 0 and ranges[at][0] <= record <= ranges[at][1]
