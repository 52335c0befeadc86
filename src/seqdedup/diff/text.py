"""``seqdedup diff``'s answer as text (within a token budget) or JSON.

Text: a summary line, then one block per change in BAD's order, each line led by its
kind's mark (``=`` known, ``+`` new, ``~`` new values, ``>`` more often, ``<`` less
often, ``!`` broken, ``-`` gone), records as ``LINE | TEXT``. Under ``--budget N`` the
summary and the changes' first lines come first (new, new values, broken, more or less
often, gone, known), then
their records, in that order, while they fit; what does not fit is said, with the lines
of BAD that hold it (its references: ``sed -n 'A,Bp' BAD`` shows them).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from seqdedup.diff.changes import Broken, Change, Diff, Known, Line, New, Rate, Values

FIRST_ROWS = 3  # a change's records shown with it before others' come
VALUES_NAMED = 8  # new values a text answer names
MARKS = {
    "known": "=",
    "new": "+",
    "values": "~",
    "more": ">",
    "less": "<",
    "broken": "!",
    "gone": "-",
}
PRIORITY = {"new": 0, "values": 1, "broken": 2, "more": 3, "less": 3, "gone": 4, "known": 5}
NAMES = {
    "new": "new",
    "values": "kinds with new values",
    "broken": "broken",
    "more": "more often",
    "less": "less often",
    "gone": "gone",
}


def summary(diff: Diff, bad: str, good: Sequence[str], short: bool = False) -> str:
    """The answer's first line (``short``: without the inputs' names)."""
    found = [f"{diff.number_of(kind)} {NAMES[kind]}" for kind in NAMES]
    if diff.bad_empty:  # (the job printed nothing: no count of changes says that)
        what = f"{diff.records:,} records, all blank" if diff.records else "no record"
        against = "GOOD" if short else ", ".join(good)
        return f"seqdedup diff: BAD is empty: {bad} holds {what}, against {against}"
    if short:
        verdict = ", ".join(found) if diff.changed else "nothing changed"
        return f"seqdedup diff: {_n(diff.records, 'record')}: {verdict}"
    inputs = _n(diff.good_inputs, "input")
    verdict = ", ".join(found) if diff.changed else "nothing changed"
    ends = f" (line ends differ: {diff.line_ends}; compared without the CR)"
    return (
        f"seqdedup diff: {bad} ({_n(diff.records, 'record')}) against {', '.join(good)}"
        f" ({inputs}): {verdict}{ends if diff.line_ends else ''}{_apart(diff)}"
    )


def _apart(diff: Diff) -> str:
    """The sides hardly line up: how little, and why (empty where they do)."""
    if not diff.apart:
        return ""
    return f"; only {diff.lined_up:.1%} of BAD's records have a key GOOD shows: {diff.apart}"


def _n(count: int, word: str) -> str:
    """``3 records``, ``1 record``."""
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def _count(n: float) -> str:
    return f"{n:,.1f}".removesuffix(".0")


def header(change: Change, diff: Diff) -> str:
    mark = MARKS[change.kind]
    if isinstance(change, Known):
        span = (
            f"line {change.first:,}"
            if change.first == change.last
            else f"lines {change.first:,}-{change.last:,}"
        )
        return f"{mark} {span}: {_n(change.length, 'known record')}"
    if isinstance(change, New):
        text = f"{mark} {_span(change.first, change.last)}: new, {_n(change.length, 'record')}"
        if change.repeated:
            text += f" ({change.repeated:,} repeating new records above)"
        if change.again:
            text += (
                f"; again {_n(change.again, 'time')} ({_n(change.again_length, 'record')}),"
                f" the last ending at line {change.again_last:,}"
            )
        return text
    if isinstance(change, Values):
        named = ", ".join(change.values[:VALUES_NAMED])
        more = ", ..." if change.distinct > VALUES_NAMED else ""
        return (
            f"{mark} {_span(change.first, change.last)}: new values of a known kind,"
            f" {_n(change.length, 'record')}: {change.shape}:"
            f" {_n(change.distinct, 'new value')}: {named}{more}"
        )
    if isinstance(change, Broken):
        how = {
            "cut short": f"cut short after {change.done:,} of {change.length:,} records",
            "started part way": f"started part way ({change.done:,} of {change.length:,} records)",
            "partly": f"only {change.done:,} of its {change.length:,} records",
            "reordered": f"{change.done:,} of its {change.length:,} records in another order",
        }[change.how]
        text = (
            f"{mark} {_span(change.first, change.last)}: broken, {how}; whole"
            f" {_n(change.whole, 'time')} in GOOD, broke {_n(change.times, 'time')} in BAD"
        )
        if change.times > 1:
            text += f" (the last at line {change.last_break:,})"
        return text + (f" [{change.since}]" if change.since else "")
    return _rate_header(change, diff)


def _rate_header(change: Rate, diff: Diff) -> str:
    mark, per = MARKS[change.kind], f"per {change.per}"
    good = f"{change.good:,} in GOOD ({_count(change.good_rate)} {per})"
    size = _n(change.length, "record")
    if change.kind == "gone":
        return f"{mark} gone: {size}, {good}, never in BAD"
    ratio = change.bad_rate / change.good_rate if change.good_rate else 0.0
    times = f"{ratio:.1f}x" if ratio >= 1 else f"1/{1 / ratio:.1f}" if ratio else "0"
    when = f" [{change.since} - {change.until}]" if change.since and change.until else ""
    return (
        f"{mark} {_span(change.first, change.last)}: {NAMES[change.kind]} ({times}), {size}:"
        f" {change.bad:,} in BAD ({_count(change.bad_rate)} {per}) against {good}{when}"
    )


def _span(first: int, last: int) -> str:
    return f"line {first:,}" if first == last else f"lines {first:,}-{last:,}"


def body(change: Change) -> list[str]:
    """The records a change shows, one line each."""
    mark = MARKS[change.kind]
    if isinstance(change, Known):
        return []
    lines = [_record(mark, line) for line in change.records]
    if isinstance(change, Values):
        lines.append(f"{mark}   as GOOD has it:")
        lines.append(_record(mark, change.good))
    if isinstance(change, Broken):
        if change.left_out:
            numbers = [line.number for line in change.records]
            after = numbers.index(change.left_out_after) + 1
            lines.insert(
                after, f"{mark}         ... {_n(change.left_out, 'record')} of the sequence"
            )
        lines.append(f"{mark}   as GOOD runs it:")
        at = change.expected_at or range(1, len(change.expected) + 1)
        for k, line in enumerate(change.expected):
            skipped = at[k] - (at[k - 1] if k else 0) - 1
            if skipped:
                lines.append(f"{mark}         ... {_n(skipped, 'record')}")
            lines.append(_record(mark, line))
        if at and at[-1] < change.length:
            lines.append(f"{mark}         ... {_n(change.length - at[-1], 'record')}")
    return lines


def _record(mark: str, line: Line) -> str:
    number = f"{line.number:>7,}" if line.number else " " * 7
    return f"{mark} {number} | {line.text}"


def as_text(
    diff: Diff,
    bad: str,
    good: Sequence[str],
    budget: int | None = None,
    count: Callable[[bytes], int] | None = None,
) -> str:
    """The answer as text; within ``budget`` tokens (by ``count``) when given."""
    heads = [header(change, diff) for change in diff.changes]
    bodies = [body(change) for change in diff.changes]
    top = summary(diff, bad, good)
    if budget is None or count is None:
        lines = [top]
        for head, rows in zip(heads, bodies, strict=True):
            lines += [head, *rows]
        return "\n".join(lines) + "\n"
    return _within(diff, top, heads, bodies, budget, count)


def _within(
    diff: Diff,
    top: str,
    heads: list[str],
    bodies: list[list[str]],
    budget: int,
    count: Callable[[bytes], int],
) -> str:
    """The summary, then each change with its first records by priority, then more of
    their records by priority, each only where it fits with the lines that say what is
    left out; the whole answer when it fits."""
    fitting = _Fitting(diff, heads, bodies, count)
    whole = [top, *(line for k in range(len(heads)) for line in (heads[k], *bodies[k]))]
    if sum(map(fitting.cost, whole)) <= budget:
        return "\n".join(whole) + "\n"
    missing = fitting.cost(fitting.missing_line(len(heads)))
    if fitting.cost(top) + missing > budget:  # (the inputs' names can go)
        top = summary(diff, "", (), short=True)
    shown = fitting.choose(budget - fitting.cost(top) - missing)
    lines = [top]
    for k, head in enumerate(heads):
        if k in shown:
            lines += [head, *bodies[k][: shown[k]]]
            if shown[k] < len(bodies[k]):
                lines.append(fitting.more_line(k, len(bodies[k]) - shown[k]))
    if len(shown) < len(heads):
        lines.append(fitting.missing_line(len(heads) - len(shown)))
    return "\n".join(lines) + "\n"


class _Fitting:
    """What each part of a budgeted answer costs, and which parts go in."""

    def __init__(
        self, diff: Diff, heads: list[str], bodies: list[list[str]], count: Callable[[bytes], int]
    ) -> None:
        self.diff, self.heads, self.bodies, self._count = diff, heads, bodies, count

    def cost(self, line: str) -> int:
        return self._count(line.encode("utf-8", "surrogateescape") + b"\n")

    def more_line(self, k: int, hidden: int) -> str:
        change = self.diff.changes[k]
        return f"{MARKS[change.kind]}   ... {_n(hidden, 'more line')} {_where(change)}"

    @staticmethod
    def missing_line(missing: int) -> str:
        return f"... {_n(missing, 'change')} not shown: --format json has them all"

    def price(self, k: int, rows: int) -> int:
        """What change k costs with its first ``rows`` records."""
        body = self.bodies[k]
        hidden = self.cost(self.more_line(k, len(body))) if rows < len(body) else 0
        return self.cost(self.heads[k]) + sum(map(self.cost, body[:rows])) + hidden

    def choose(self, left: int) -> dict[int, int]:
        """Change -> its records shown, within ``left`` tokens."""
        kinds = [change.kind for change in self.diff.changes]
        ranked = sorted(range(len(kinds)), key=lambda k: (PRIORITY[kinds[k]], k))
        shown: dict[int, int] = {}
        for k in ranked:  # each change with its first few records, else alone
            for rows in (min(FIRST_ROWS, len(self.bodies[k])), 0):
                if self.price(k, rows) <= left:
                    shown[k] = rows
                    left -= self.price(k, rows)
                    break
        for k in (k for k in ranked if k in shown):  # then more of their records
            while shown[k] < len(self.bodies[k]):
                more = self.price(k, shown[k] + 1) - self.price(k, shown[k])
                if more > left:
                    break
                shown[k] += 1
                left -= more
        return shown


def _where(change: Change) -> str:
    if isinstance(change, Rate) and change.kind == "gone":
        return "(GOOD's text)"
    return f"({_span(change.first, max(change.last, change.first))} of BAD)"


def utf8(text: str) -> str:
    """Text that is valid UTF-8: a byte that was not shows as U+FFFD (JSON and MCP
    carry Unicode; the text answer keeps the bytes)."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def as_json(diff: Diff, bad: str, good: Sequence[str]) -> str:
    """The answer as one JSON document (docs/diff.md gives its fields)."""
    document = {
        "bad": bad,
        "good": list(good),
        "records": diff.records,
        "good_inputs": diff.good_inputs,
        "per": diff.per,
        "factor": diff.factor,
        "min_count": diff.min_count,
        "changed": diff.changed,
        "bad_empty": diff.bad_empty,
        "line_ends": diff.line_ends or None,
        "lined_up": round(diff.lined_up, 4),
        "apart": diff.apart or None,
        "counts": {kind: diff.number_of(kind) for kind in MARKS},
        "changes": [_object(change) for change in diff.changes],
    }
    return json.dumps(document, ensure_ascii=False, indent=1) + "\n"


def _object(change: Change) -> dict[str, object]:
    fields: dict[str, object] = dict(change._asdict())
    for name in ("records", "expected"):
        if name in fields:
            fields[name] = [{"line": line.number, "text": utf8(line.text)} for line in fields[name]]  # type: ignore[attr-defined]
    if isinstance(change, Values):
        fields.update(shape=utf8(change.shape), good=utf8(change.good.text))
        fields["values"] = [utf8(value) for value in change.values]
    return {"kind": fields.pop("kind"), **fields}
