"""``seqdedup diff --report FILE.html``: the answer drawn on one offline page (the
report page's machinery, :mod:`seqdedup.page.html`): headline figures, a timeline of
BAD with each change's stretch marked, and the top changes with BAD's counts beside
GOOD's, each opening to its records as text."""

from __future__ import annotations

from collections.abc import Sequence

from seqdedup.diff.changes import Broken, Change, Diff, Known, New, Rate, Values
from seqdedup.diff.text import NAMES, PRIORITY, body, header, summary, utf8

TOP = 50  # changes listed on the page
# each kind's colour, as the page's list marks it (templates/diff.html.jinja)
COLOURS = {
    "new": "#2f9e44",
    "kinds with new values": "#1971c2",
    "broken": "#c92a2a",
    "more often": "#e8871e",
    "less often": "#e8871e",
    "gone": "#868e96",
}
SHOWN_LINES = 40  # of each change's text


class DiffPage:
    """The page, its packages and path checked before anything is read."""

    def __init__(self, path: str) -> None:
        from seqdedup.page.html import check_report_extra, check_report_path

        check_report_extra()
        self.path = check_report_path(path)

    def write(self, diff: Diff, bad: str, good: Sequence[str], records: int) -> int:
        from seqdedup.base.version import __version__
        from seqdedup.page.html import render_template, write_html

        ranked = sorted(
            (c for c in diff.changes if not isinstance(c, Known)),
            key=lambda c: (PRIORITY[c.kind], c.first or records + 1),
        )[:TOP]
        rows = [_row(change, diff) for change in ranked]
        figures = [
            {"label": "records of BAD", "field": "records", "value": diff.records},
            {"label": "inputs of GOOD", "field": "good_inputs", "value": diff.good_inputs},
            *(
                {"label": NAMES[kind], "field": kind, "value": diff.number_of(kind)}
                for kind in NAMES
            ),
        ]
        html = render_template(
            "diff.html.jinja",
            {"chart-timeline": _timeline(diff, records)},
            version=__version__,
            title=f"What changed in {bad}",
            subtitle=summary(diff, bad, good),
            figures=figures,
            changes=rows,
            summary={
                "changed": diff.changed,
                "records": diff.records,
                "counts": {kind: diff.number_of(kind) for kind in NAMES},
            },
        )
        return write_html(self.path, html)


def _row(change: Change, diff: Diff) -> dict[str, object]:
    lines = body(change)
    first = ""
    if not isinstance(change, Known) and change.records:  # (a break's own first record)
        at = [line.text for line in change.records if line.number == change.first]
        first = at[0] if at else change.records[0].text
    good: int | str = ""
    bad: int | str = ""
    if isinstance(change, Rate):
        good, bad = change.good, change.bad
    elif isinstance(change, Broken):
        good, bad = change.whole, change.times
    elif isinstance(change, New):
        good, bad = 0, 1 + change.again
    elif isinstance(change, Values):
        good, bad = 0, change.length
    last = max(change.last, change.first)
    where = f"{change.first:,}" if last == change.first else f"{change.first:,}-{last:,}"
    where = "" if change.first == 0 else where
    return {
        "kind": change.kind,
        "label": NAMES[change.kind],
        "lines": where,
        "good": good,
        "bad": bad,
        "sample": utf8(first),
        "header": utf8(header(change, diff)),
        "text": utf8("\n".join(lines[:SHOWN_LINES])),
        "more": max(0, len(lines) - SHOWN_LINES),
    }


def _timeline(diff: Diff, records: int) -> dict[str, object]:
    """A Vega-Lite chart: one bar per change over the lines of BAD it spans."""
    values = []
    for change in diff.changes:
        if isinstance(change, Known) or change.first == 0:
            continue
        last = change.last_break if isinstance(change, Broken) else change.last
        values.append(
            {
                "kind": NAMES[change.kind],
                "first": change.first,
                "end": max(last, change.first) + 1,
                "what": utf8(header(change, diff)[2:]),
            }
        )
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "width": "container",
        "height": 140,
        "data": {"values": values},
        "mark": {"type": "bar"},
        "encoding": {
            "x": {
                "field": "first",
                "type": "quantitative",
                "title": "line of BAD",
                "scale": {"domain": [1, max(records, 1) + 1]},
            },
            "x2": {"field": "end"},
            "y": {"field": "kind", "type": "nominal", "title": None},
            "color": {
                "field": "kind",
                "type": "nominal",
                "legend": None,
                "scale": {"domain": list(COLOURS), "range": list(COLOURS.values())},
            },
            "tooltip": [{"field": "what", "type": "nominal", "title": "change"}],
        },
    }
