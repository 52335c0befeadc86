"""--top: the most repeated sequences of a run (a bounded table, ranked at the end), and
the table or JSON they are written as."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, TextIO, TypedDict

from seqdedup.base.errors import visible
from seqdedup.run.markers import span

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from seqdedup.engine.pieces import Piece
    from seqdedup.run.markers import Fields


class FirstSeen(TypedDict, total=False):
    """``--top``: where a sequence was first seen (lines of an input, or records of a
    library sequence)."""

    lines: list[int]
    records: list[int]
    sequence: str
    file: str
    stream: str


class TopRow(TypedDict):
    """One row of ``--top``'s table and its JSON."""

    removed: int
    seen: int
    length: int
    first_seen: FirstSeen
    first_record: str | None


class _TopEntry(TypedDict):
    length: int
    first_seen: FirstSeen | None  # (None until ranked, where it is read lazily)
    source: tuple[Callable[[Piece], Fields], Piece, bool] | None  # (then: read it so)
    first_record: bytes | None
    order: int


class TopSequences:
    """The repeated sequences that cost the most (``--top``): for each, the records it
    removed (its length times its repeats), how often it was seen, its length, where it
    was first seen and its first record. Kept for the sequences the sequences table
    keeps (least recently seen evicted past ``limit``), so exact when that is unlimited.

    The pieces are counted here (:meth:`observe`, every piece), or by the kernel's
    attribution (``counts``: identity -> pieces, read at the end), which then hands over
    only each sequence's first piece (:meth:`first_seen`): no Python per piece.
    """

    def __init__(
        self,
        limit: int | None,
        counts: Callable[[], dict[int, int]] | None = None,
        lazy_sources: bool = False,
    ) -> None:
        """``lazy_sources``: where a sequence was first seen is read only for the rows
        ranked (right where record numbers stay the tracked records' own: no filters)."""
        from collections import OrderedDict

        self._lazy = lazy_sources
        self._limit = limit
        self._counts = counts
        self.counted_elsewhere = self._counts is not None
        self._repeats: OrderedDict[int, int] = OrderedDict()  # identity -> pieces (here)
        self._entries: dict[int, _TopEntry] = {}  # identity -> its first piece's facts
        self._order = 0  # first observation order, for ties

    def observe(
        self,
        piece: Piece,
        fields_of: Callable[[Piece], Fields],
        first_record: bytes | None,
        named: bool = False,
    ) -> None:
        """Count one piece; a sequence seen for the first time also gets where it was
        first seen (``fields_of(piece)``: its source's marker fields, at least) and its
        first record."""
        repeats, identity = self._repeats, piece.identity
        count = repeats.get(identity)
        if count is None:
            self.first_seen(piece, fields_of, first_record, named)
            repeats[identity] = 1
        else:
            repeats[identity] = count + 1
            repeats.move_to_end(identity)
        if self._limit is not None and len(repeats) > self._limit:
            evicted, _ = repeats.popitem(last=False)
            del self._entries[evicted]

    def first_seen(
        self,
        piece: Piece,
        fields_of: Callable[[Piece], Fields],
        first_record: bytes | None,
        named: bool = False,
    ) -> None:
        """A sequence's first piece (again, after it was evicted): where it was first
        seen and its first record."""
        self._order += 1
        lazy = self._lazy
        self._entries[piece.identity] = {
            "length": piece.end - piece.start + 1,
            "first_seen": None if lazy else first_seen_of(fields_of(piece), named),
            "source": (fields_of, piece, named) if lazy else None,
            "first_record": first_record,
            "order": self._order,
        }
        limit = self._limit
        if self._counts is not None and limit is not None and len(self._entries) > 2 * limit:
            held = self._counts()  # drop what the kernel evicted
            self._entries = {i: e for i, e in self._entries.items() if i in held}

    def top(self, count: int) -> list[TopRow]:
        """The ``count`` costliest, most records removed first, then first seen first."""
        return [row for _, row in self.ranked(count)]

    def ranked(self, count: int) -> list[tuple[int, TopRow]]:
        """:meth:`top`'s rows, each with its sequence's key in the sequences table."""
        repeats = self._counts() if self._counts is not None else self._repeats
        ranked = sorted(
            (
                (identity, entry, repeats[identity])
                for identity, entry in self._entries.items()
                if identity in repeats
            ),
            key=lambda item: (-item[1]["length"] * item[2], item[1]["order"]),
        )
        return [
            (
                identity,
                {
                    "removed": entry["length"] * times,
                    "seen": times + 1,
                    "length": entry["length"],
                    "first_seen": self._first_seen(entry),
                    "first_record": (
                        None
                        if entry["first_record"] is None
                        else entry["first_record"].decode("utf-8", "backslashreplace")
                    ),
                },
            )
            for identity, entry, times in ranked[:count]
        ]

    def _first_seen(self, entry: _TopEntry) -> FirstSeen:
        first_seen = entry["first_seen"]
        if first_seen is None:
            assert entry["source"] is not None
            fields_of, piece, named = entry["source"]
            first_seen = first_seen_of(fields_of(piece), named)
            entry["first_seen"], entry["source"] = first_seen, None
        return first_seen


def first_seen_of(fields: Fields, named: bool) -> FirstSeen:
    """Where a sequence was first seen, as ``--top`` says it, from its source's fields."""
    if "sequence" in fields:
        return {
            "sequence": fields["sequence"],
            "records": [fields["match_start"], fields["match_end"]],
        }
    first_seen: FirstSeen = {"lines": [fields["match_start"], fields["match_end"]]}
    if named:
        first_seen["file"] = fields["match_file"]
    if "match_stream" in fields:  # --stream-by
        first_seen["stream"] = fields["match_stream"]
    return first_seen


def fill_first_records(
    rows: list[TopRow],
    chunks_of: Callable[[str], Iterable[bytes] | None],
    delimiter: bytes,
    only_input: str,
) -> None:
    """Rows whose sequence was first removed inside a longer run have no first record
    yet: it is read where the sequence was first seen (the record at its first line),
    from ``chunks_of(input name)``, the input read again (None: it cannot be, standard
    input; ``only_input``: the name when the rows name no file). One pass per input, up
    to the last record needed."""
    wanted: dict[str, dict[int, list[TopRow]]] = {}
    for row in rows:
        seen = row["first_seen"]
        if row["first_record"] is None and "lines" in seen:
            lines = wanted.setdefault(seen.get("file", only_input), {})
            lines.setdefault(seen["lines"][0], []).append(row)
    for name, lines in wanted.items():
        chunks = chunks_of(name)
        if chunks is None:
            continue
        for number, record in records_numbered(chunks, delimiter, sorted(lines)):
            for row in lines[number]:
                row["first_record"] = record.decode("utf-8", "backslashreplace")


def records_numbered(
    chunks: Iterable[bytes], delimiter: bytes, numbers: list[int]
) -> Iterator[tuple[int, bytes]]:
    """The records of these (1-based, ascending) numbers, from the chunks of an input.
    A chunk that ends no wanted record is only counted (``bytes.count``, in C); one
    that does is split, and its wanted records picked by number: no Python per record."""
    wanted = iter(numbers)
    target = next(wanted, None)
    number, partial = 0, b""  # (records ended before ``partial``)
    for chunk in chunks:
        if target is None:
            return
        data = partial + chunk
        ended = data.count(delimiter)
        if number + ended < target:
            cut = data.rfind(delimiter)
            partial = data if cut < 0 else data[cut + len(delimiter) :]
            number += ended
            continue
        pieces = data.split(delimiter)
        partial = pieces.pop()
        while target is not None and target <= number + len(pieces):
            yield target, pieces[target - number - 1]
            target = next(wanted, None)
        number += len(pieces)
    if partial and target == number + 1:  # (the last record, without a delimiter)
        yield target, partial


HEAD_SEARCH = 64  # records of a run looked at for one that is not blank (chunks.c's)


def shown_head(records: Sequence[bytes]) -> bytes:
    """What --top shows of a run: its first record that is not blank (of its first
    HEAD_SEARCH), else its first (the kernel's chunk path chooses the same)."""
    for record in records[:HEAD_SEARCH]:
        if record.strip(b" \t\r\n\v\f"):
            return record
    return records[0]


def write_top(rows: list[TopRow], stream: TextIO, fmt: str = "table", color: bool = False) -> None:
    """The ``--top`` report alone (with ``--quiet``): a table, or one JSON document."""
    if fmt == "json":
        import json

        stream.write(json.dumps({"top_sequences": rows}, indent=2) + "\n")
        stream.flush()
        return
    from rich.console import Console

    console = _console(Console, stream, color)
    console.print(_top_table(rows, console.width if console.is_terminal else None))


def _console(console_type: type[Console], stream: TextIO, color: bool) -> Console:
    """A rich console on ``stream``: styled exactly when ``color`` says so (without,
    no escape at all, bold included; a terminal's width still counts)."""
    import os

    width = None
    if not color:
        try:
            width = os.get_terminal_size(stream.fileno()).columns
        except (AttributeError, ValueError, OSError):
            width = 1 << 16  # (not a terminal: a pipe or a file gets every column whole)
    return console_type(
        file=stream,
        highlight=False,
        markup=False,
        emoji=False,
        force_terminal=color,
        no_color=not color,
        width=width,
    )


def _top_table(rows: list[TopRow], width: int | None) -> Table:
    """The report as a table no wider than ``width`` (the first record shortened to
    fit a terminal); None: as wide as its cells (a pipe, a file)."""
    from rich.table import Table
    from rich.text import Text

    cells = []
    for row in rows:
        seen = row["first_seen"]
        where = (
            f"library {seen['sequence'][:12]} {seen['records'][0]}-{seen['records'][1]}"
            if "sequence" in seen
            else span(*seen["lines"])
            + (f" of {seen['file']}" if "file" in seen else "")
            + (f" (stream {seen['stream']})" if "stream" in seen else "")
        )
        numbers = [f"{row[key]:,}" for key in ("removed", "seen", "length")]
        cells.append([*numbers, visible(where), visible(row["first_record"] or "")])
    names = ["Removed", "Seen", "Length", "First seen", "First record"]
    widths = [max([len(name), *(len(cell[k]) for cell in cells)]) for k, name in enumerate(names)]
    if width is not None:
        room = max(12, width - sum(widths[:4]) - 3 * len(names) - 1)  # borders and padding
        widths[4] = min(widths[4], room)
    table = Table(title="Top repeated sequences", expand=False)
    for k, name in enumerate(names):
        table.add_column(name, justify="right" if k < 3 else "left", no_wrap=True, width=widths[k])
    for cell in cells:
        text = cell[4]
        if len(text) > widths[4]:
            text = text[: widths[4] - 1] + "…"
        # Text, never markup: a record's brackets and :codes: are shown as they are.
        table.add_row(*(Text(part) for part in (*cell[:4], text)))
    return table


def top_table(
    top: int,
    sequences: int | None,
    filtered: bool,
    top_counts: Callable[[], dict[int, int]] | None,
    picturing: bool,
) -> TopSequences | None:
    """``--top N``'s table of at most ``sequences`` sequences (counted by the kernel's
    attribution where ``top_counts`` is given), also for a report page (whose picture
    the ledger hands its ranking)."""
    if not (top or picturing):
        return None
    # (with filters a source's record number is read while attribution holds it)
    return TopSequences(sequences, top_counts, lazy_sources=not filtered)
