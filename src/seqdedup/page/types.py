"""The report page's data as typed documents: what ``page.data`` (a run), ``page.library``
(a library) and ``page.reduction`` (a ``--budget`` reduction) make, ``page.charts`` draws
and ``page.html`` renders. Places on the timeline are floats: milliseconds since 1970 on
a time axis, 1-based record numbers otherwise."""

from __future__ import annotations

from typing import Literal, TypedDict

from seqdedup.library.admin import LibraryContents, LibrarySequence, RunRow

__all__ = ["LibraryContents", "LibrarySequence", "RunRow"]  # (a library's, made by it)

Axis = Literal["time", "record"]
Spec = dict[str, object]  # a Vega-Lite specification (JSON, written as it is)

# Records read, written and removed in one column of the timeline, and the share removed
Bucket = TypedDict(
    "Bucket",
    {"from": float, "to": float, "read": int, "written": int, "removed": int, "share": float},
)
# A folded stretch drawn over the timeline: where, how much, its main sequence
Band = TypedDict(
    "Band",
    {
        "from": float,
        "to": float,
        "first": float,
        "last": float,
        "removed": int,
        "copies": int,
        "sequence": str,
    },
)
# Records removed in one stream's (or input's) row and column of the heat map
HeatCell = TypedDict("HeatCell", {"row": str, "from": float, "to": float, "removed": int})


class Timeline(TypedDict):
    axis: Axis
    buckets: list[Bucket]
    bands: list[Band]
    bands_left_out: int


class Heat(TypedDict):
    kind: Literal["stream", "input"]
    axis: Axis
    rows: list[str]
    cells: list[HeatCell]


class WidthShare(TypedDict):
    """What one W removes of the sample (``--suggest-window``'s row), as a share."""

    window_size: int
    removed: int
    runs: int
    share: float  # percent of the sample
    used: bool  # the run's own W


class LengthCount(TypedDict):
    lengths: str  # "2-4", ..., "100+"
    blocks: int


class Blocks(TypedDict):
    sample: int | None  # records sampled (None: a library's page)
    window_size: int | None
    widths: list[WidthShare]
    histogram: list[LengthCount]


class SequenceRow(TypedDict, total=False):
    """One of the sequences that removed the most records, as the page lists it."""

    removed: int
    seen: int
    length: int
    first_place: str
    first: float | None
    last: float | None
    first_shown: str
    last_shown: str
    sample: str
    kind: str  # the kind of line of the sample (seqdedup.keys.kind)
    text: str | None
    text_missing: str
    more_records: int
    reference: str | None


class LibraryShare(TypedDict):
    """A run that read libraries: what it removed as their repeats, what was new."""

    kept: int
    removed_by_library: int
    removed_by_run: int
    sequences_new: int
    sequences_known: int
    top_new: list[SequenceRow]


class Figure(TypedDict):
    field: str
    label: str
    value: float
    shown: str


class Page(TypedDict, total=False):
    """Everything one page shows (``inputs`` only on a run's)."""

    kind: Literal["run", "library"]
    version: str
    title: str
    heading: str
    subtitle: str
    headline: dict[str, float]
    figures: list[Figure]
    inputs: list[str]
    configuration: dict[str, object] | None
    configuration_text: str
    timeline: Timeline | None
    timeline_how: str
    runs: list[RunRow] | None
    top: list[SequenceRow]
    top_how: str
    heat: Heat | None
    blocks: Blocks | None
    library: LibraryShare | None
    notes: list[str]
