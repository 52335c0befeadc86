"""What ``seqdedup diff`` answers, as typed objects: the changes in BAD's order, each a
small record the text, JSON, page and MCP forms are all made from."""

from __future__ import annotations

from typing import Literal, NamedTuple

Per = Literal["input", "hour"]


class Line(NamedTuple):
    """A record of BAD (``number`` from 1, as ``grep -n`` counts) or of GOOD (number 0)."""

    number: int
    text: str


class New(NamedTuple):
    """A stretch of BAD whose records' keys GOOD never shows (``first`` .. ``last``,
    line numbers of BAD; with streams, of one stream, others' records between).
    ``records``: those shown, verbatim; ``repeated``: records of the stretch that repeat
    new material shown before (the engine's rule at window W); ``again``: later stretches
    that repeat this one entirely, ``again_last`` the last line of the last one and
    ``again_length`` their records."""

    first: int
    last: int
    length: int
    records: tuple[Line, ...]
    repeated: int
    again: int = 0
    again_last: int = 0
    again_length: int = 0
    kind: Literal["new"] = "new"


class Values(NamedTuple):
    """Records of BAD whose keys GOOD never shows, of a kind GOOD shows (``shape``: the
    kind, a word that takes values as ``<...>``): ``length`` records between lines
    ``first`` and ``last`` of BAD, the ``values`` they bring (the first VALUES_LISTED,
    ``distinct`` in all), their first ``records`` and a record of GOOD of that kind
    (``good``)."""

    shape: str
    first: int
    last: int
    length: int
    values: tuple[str, ...]
    distinct: int
    records: tuple[Line, ...]
    good: Line
    kind: Literal["values"] = "values"


class Rate(NamedTuple):
    """A sequence GOOD knows whose rate changed by the factor or more: ``more`` or
    ``less`` often, or ``gone`` (BAD never shows it). Counts on both sides and per unit
    (``per``: an input, or an hour where both sides have timestamps); ``first`` ..
    ``last``: the lines of BAD it occurs between (0 when gone), ``since``/``until`` their
    timestamps where the records have them. ``records``: the sequence (BAD's first
    occurrence, or GOOD's text when gone), ``length`` its records."""

    kind: Literal["more", "less", "gone"]
    records: tuple[Line, ...]
    length: int
    good: int
    good_rate: float
    bad: int
    bad_rate: float
    per: Per
    first: int
    last: int
    since: str = ""
    until: str = ""


class Broken(NamedTuple):
    """A sequence that in GOOD always ran whole (``length`` records, ``whole`` times) and
    in BAD broke ``times`` times, first at lines ``first`` .. ``last`` (``records``: BAD's
    records there, with the line before and after), ``how``: ``"cut short"`` (it stops
    after ``done`` records), ``"started part way"``, ``"partly"`` or ``"reordered"``.
    ``expected``: the sequence as GOOD ran it, ``expected_at`` each record's place in it
    (from 1); ``last_break``: the line of the last break. A sequence of more than
    LONG_SEQUENCE records shows its first and last EDGE records and those within EDGE
    of where BAD left it or came into it, on both sides (``left_out``: BAD's records of
    the break not shown, between its first and last EDGE, the first EDGE ending at line
    ``left_out_after``)."""

    how: Literal["cut short", "started part way", "partly", "reordered"]
    done: int
    length: int
    whole: int
    times: int
    first: int
    last: int
    last_break: int
    records: tuple[Line, ...]
    expected: tuple[Line, ...]
    since: str = ""
    expected_at: tuple[int, ...] = ()
    left_out: int = 0
    left_out_after: int = 0
    kind: Literal["broken"] = "broken"


LONG_SEQUENCE = 12  # records of a broken sequence shown whole, on either side
EDGE = 3  # records shown at each end of a longer one, and around each place it broke


class Known(NamedTuple):
    """Lines ``first`` .. ``last`` of BAD held only what GOOD knows (``length`` records
    of them: with streams, other streams' records may lie between)."""

    first: int
    last: int
    length: int
    kind: Literal["known"] = "known"


Change = New | Values | Rate | Broken | Known


class Diff(NamedTuple):
    """The answer: the changes in BAD's order (gone sequences last, in GOOD's order);
    ``records`` of BAD, ``good_inputs`` (files, or a library's runs), the unit of the
    rates, and the factor and least count that made a rate change."""

    changes: list[Change]
    records: int
    good_inputs: int
    per: Per
    factor: float
    min_count: int
    bad_empty: bool = False  # BAD holds no record, or only blank ones: the worst change
    line_ends: str = ""  # "GOOD CRLF, BAD LF" when they differ (compared without the CR)
    lined_up: float = 1.0  # the share of BAD's records whose key GOOD shows
    apart: str = ""  # why so few line up, where under a tenth do (seqdedup.diff.sanity)

    @property
    def changed(self) -> bool:
        """Something other than known records, or nothing at all where GOOD had records
        (the command's exit status 1)."""
        return self.bad_empty or any(change.kind != "known" for change in self.changes)

    def number_of(self, kind: str) -> int:
        return sum(1 for change in self.changes if change.kind == kind)
