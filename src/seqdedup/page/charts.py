"""The report page's charts as Vega-Lite specifications (plain JSON, drawn in the
browser by Vega-Lite's own script, which ``page.html`` embeds): the timeline with its
folded bands, the heat map per stream or input, the block lengths and what each W
removes, the costliest sequences, and (a library's page) its runs.

Every chart fills its container's width (``"width": "container"``), so that the page
has no horizontal scroll on a phone; tooltips show records as text (Vega's tooltip
handler escapes them).
"""

from __future__ import annotations

from seqdedup.page.types import (
    Blocks,
    Heat,
    LibraryShare,
    Page,
    RunRow,
    SequenceRow,
    Spec,
    Timeline,
)

READ, WRITTEN, FOLDED, REMOVED = "#c9d3df", "#2f6db3", "#e8871e", "#d1495b"
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
HEIGHT = 220
LABEL_CHARS = 40  # a sequence's first line as a bar's label
LABEL_WIDTH = 260  # pixels of a label at most (a phone's chart keeps its bars)
COMMON_SHOWN = 16  # characters all the labels share from which only the rest is shown


def _chart(**spec: object) -> Spec:
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v6.json",
        "width": "container",
        "height": HEIGHT,
        "autosize": {"type": "fit-x", "contains": "padding"},
        "config": {"view": {"stroke": None}, "axis": {"labelFontSize": 11}},
        **spec,
    }


def _place(axis: str, field: str, title: str | None = None) -> Spec:
    """An x encoding of a place on the timeline: a time, or a record number."""
    encoding: Spec = {"field": field, "title": title}
    if axis == "time":
        encoding.update(
            type="temporal",
            axis={"labelOverlap": "greedy", "labelSeparation": 6, "format": "%H:%M:%S"},
        )
    else:
        encoding.update(
            type="quantitative",
            axis={"format": "~s", "labelOverlap": "greedy", "labelSeparation": 6},
            scale={"zero": False, "nice": False},
        )
    return encoding


def _at(axis: str, field: str, title: str) -> Spec:
    """A tooltip field of a place on the timeline."""
    if axis == "time":
        return {"field": field, "type": "temporal", "format": TIME_FORMAT, "title": title}
    return {"field": field, "type": "quantitative", "format": ",d", "title": title}


def _short(text: str) -> str:
    """A label: the first line of a sequence, shortened."""
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def _common_start(texts: list[str]) -> int:
    """How many first characters every text shares."""
    shortest, longest = min(texts), max(texts)  # (the two that differ first)
    at = 0
    while at < len(shortest) and shortest[at] == longest[at]:
        at += 1
    return at


def _legend(name: str, names: list[str], colours: list[str]) -> Spec:
    """A layer's colour, from one legend shared by the layers."""
    return {
        "datum": name,
        "type": "nominal",
        "scale": {"domain": names, "range": colours},
        "legend": {"orient": "top", "title": None},
    }


def timeline_chart(timeline: Timeline) -> Spec:
    """The share of the records removed per bucket (where a storm starts shows even
    when most of the input repeats), the folded stretches as light bands in front (a
    band names its sequence on hover); one legend names both, and only what is drawn."""
    axis = timeline["axis"]
    names, colours = ["share removed"], [REMOVED]
    if timeline["bands"]:
        names, colours = [*names, "folded"], [*colours, FOLDED]
    x_title = "time (the records' timestamps)" if axis == "time" else "record number"
    layers: list[Spec] = []
    layers.append(
        {
            "data": {"values": timeline["buckets"]},
            "mark": {"type": "rect"},
            "encoding": {
                "x": _place(axis, "from", x_title),
                "x2": {"field": "to"},
                "y": {
                    "field": "share",
                    "type": "quantitative",
                    "title": "% of the records removed",
                    "scale": {"domain": [0, 100]},
                },
                "color": _legend("share removed", names, colours),
                "tooltip": [
                    _at(axis, "from", "from"),
                    {"field": "read", "type": "quantitative", "format": ",d"},
                    {"field": "removed", "type": "quantitative", "format": ",d"},
                    {"field": "written", "type": "quantitative", "format": ",d"},
                    {"field": "share", "type": "quantitative", "title": "% removed"},
                ],
            },
        }
    )
    if timeline["bands"]:
        layers.append(
            {
                "data": {"values": timeline["bands"]},
                "mark": {"type": "rect", "opacity": 0.25},
                "encoding": {
                    "x": _place(axis, "from", x_title),
                    "x2": {"field": "to"},
                    "color": _legend("folded", names, colours),
                    "tooltip": [
                        {"field": "sequence", "type": "nominal"},
                        {"field": "copies", "type": "quantitative", "format": ",d"},
                        {
                            "field": "removed",
                            "type": "quantitative",
                            "format": ",d",
                            "title": "records removed",
                        },
                        _at(axis, "first", "from"),
                        _at(axis, "last", "until"),
                    ],
                },
            }
        )
    return _chart(layer=layers)


def heat_chart(heat: Heat) -> Spec:
    """Records removed per stream or input (rows) and bucket (columns)."""
    axis = heat["axis"]
    rows = heat["rows"]
    return _chart(
        height=max(HEIGHT // 2, 18 * len(rows)),
        data={"values": heat["cells"]},
        mark={"type": "rect"},
        encoding={
            "x": _place(axis, "from", "time" if axis == "time" else "record number"),
            "x2": {"field": "to"},
            "y": {
                "field": "row",
                "type": "nominal",
                "sort": rows,
                "title": None,
                "axis": {"labelLimit": 120},
            },
            "color": {
                "field": "removed",
                "type": "quantitative",
                "title": "removed",
                "scale": {"scheme": "oranges"},
            },
            "tooltip": [
                {"field": "row", "type": "nominal", "title": heat["kind"]},
                _at(axis, "from", "from"),
                {"field": "removed", "type": "quantitative", "format": ",d"},
            ],
        },
    )


def widths_chart(blocks: Blocks) -> Spec:
    """The share of the sample each W removes, the W used marked."""
    return _chart(
        data={"values": blocks["widths"]},
        mark={"type": "bar"},
        encoding={
            "x": {
                "field": "window_size",
                "type": "ordinal",
                "title": "W (-w)",
                "axis": {"labelAngle": 0},
            },
            "y": {"field": "share", "type": "quantitative", "title": "% of the sample removed"},
            "color": {
                "condition": {"test": "datum.used", "value": FOLDED},
                "value": WRITTEN,
            },
            "tooltip": [
                {"field": "window_size", "type": "ordinal", "title": "W"},
                {"field": "removed", "type": "quantitative", "format": ",d"},
                {"field": "share", "type": "quantitative", "title": "%"},
                {"field": "used", "type": "nominal", "title": "this run's W"},
            ],
        },
    )


def lengths_chart(blocks: Blocks) -> Spec:
    """How many repeated blocks of each length the sample holds."""
    return _chart(
        data={"values": blocks["histogram"]},
        mark={"type": "bar", "color": WRITTEN},
        encoding={
            "x": {
                "field": "lengths",
                "type": "ordinal",
                "sort": None,
                "title": "block length",
                "axis": {"labelAngle": 0},
            },
            "y": {"field": "blocks", "type": "quantitative", "title": "repeated blocks"},
            "tooltip": [
                {"field": "lengths", "type": "ordinal"},
                {"field": "blocks", "type": "quantitative", "format": ",d"},
            ],
        },
    )


def top_chart(top: list[SequenceRow]) -> Spec:
    """Records removed by each of the costliest sequences."""
    samples = [row.get("sample", "") for row in top]
    common = _common_start(samples) if len(samples) > 1 else 0
    # (first lines that all begin alike are labelled by where they differ)
    cut = common if common >= COMMON_SHOWN else 0
    values = [
        {
            "rank": f"#{i} {'…' * bool(cut)}{_short(sample[cut:])}",
            "removed": row["removed"],
            "sample": row["sample"],
            "seen": row["seen"],
        }
        for i, (row, sample) in enumerate(zip(top, samples, strict=True), 1)
    ]
    return _chart(
        height=18 * len(values) + 10,
        data={"values": values},
        mark={"type": "bar", "color": REMOVED},
        encoding={
            "y": {
                "field": "rank",
                "type": "ordinal",
                "sort": None,
                "title": None,
                "axis": {"labelLimit": LABEL_WIDTH},
            },
            "x": {"field": "removed", "type": "quantitative", "title": "records removed"},
            "tooltip": [
                {"field": "rank", "type": "ordinal"},
                {"field": "removed", "type": "quantitative", "format": ",d"},
                {"field": "seen", "type": "quantitative", "format": ",d"},
                {"field": "sample", "type": "nominal", "title": "first record"},
            ],
        },
    )


def library_chart(library: LibraryShare) -> Spec:
    """The records of the run: kept, removed as repeats of the library, of the run."""
    values = [
        {"part": "kept (new)", "records": library["kept"]},
        {"part": "repeats of this run", "records": library["removed_by_run"]},
        {"part": "repeats of the library", "records": library["removed_by_library"]},
    ]
    return _chart(
        height=HEIGHT // 3,
        data={"values": values},
        mark={"type": "bar"},
        encoding={
            "x": {"field": "records", "type": "quantitative", "stack": "zero", "title": "records"},
            "color": {
                "field": "part",
                "type": "nominal",
                "sort": None,
                "title": None,
                "scale": {"range": [WRITTEN, FOLDED, READ]},
                "legend": {"orient": "top"},
            },
            "tooltip": [
                {"field": "part", "type": "nominal"},
                {"field": "records", "type": "quantitative", "format": ",d"},
            ],
        },
    )


def runs_chart(runs: list[RunRow]) -> Spec:
    """A library's runs: records read and written by each."""
    values = [
        {"run": row["run"], "finished": row["finished"], "kind": kind, "records": records}
        for row in runs
        for kind, records in (("read", row["read"]), ("written", row["written"]))
    ]
    return _chart(
        data={"values": values},
        mark={"type": "bar"},
        encoding={
            "x": {"field": "run", "type": "ordinal", "title": "run", "axis": {"labelAngle": 0}},
            "xOffset": {"field": "kind"},
            "y": {"field": "records", "type": "quantitative"},
            "color": {
                "field": "kind",
                "type": "nominal",
                "scale": {"range": [READ, WRITTEN]},
                "legend": {"orient": "top", "title": None},
            },
            "tooltip": [
                {"field": "run", "type": "ordinal"},
                {"field": "finished", "type": "nominal"},
                {"field": "kind", "type": "nominal"},
                {"field": "records", "type": "quantitative", "format": ",d"},
            ],
        },
    )


def charts_of(data: Page) -> dict[str, Spec]:
    """The page's charts by the id of the element each is drawn in."""
    charts: dict[str, Spec] = {}
    timeline, runs, top = data.get("timeline"), data.get("runs"), data.get("top")
    heat, blocks, library = data.get("heat"), data.get("blocks"), data.get("library")
    if timeline is not None:
        charts["chart-timeline"] = timeline_chart(timeline)
    if runs:
        charts["chart-runs"] = runs_chart(runs)
    if top:
        charts["chart-top"] = top_chart(top)
    if heat is not None:
        charts["chart-heat"] = heat_chart(heat)
    if blocks is not None:
        if blocks["widths"]:
            charts["chart-widths"] = widths_chart(blocks)
        charts["chart-lengths"] = lengths_chart(blocks)
    if library is not None:
        charts["chart-library"] = library_chart(library)
    return charts
