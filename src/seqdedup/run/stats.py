"""Statistics of a run: the counts (Stats), their table and their JSON document."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO, TypedDict

from seqdedup.run.top import TopRow, _console, _top_table

if TYPE_CHECKING:
    from seqdedup.config.settings import Config


class LineCounts(TypedDict):
    """Records read, written and removed (of one input, or one stream)."""

    total: int
    emitted: int
    skipped: int


class CountsRow(TypedDict):
    """Per input (several files) or per stream (``--stream-by``): its name and counts."""

    name: str
    lines: LineCounts


class Stats:
    """Counts of one run. ``total == emitted + skipped`` always.

    A plain slotted class rather than a dataclass: importing dataclasses costs more
    start-up time than a one-line run of the whole tool.
    """

    __slots__ = (
        "emitted",
        "files",
        "interrupted",
        "library_loaded",
        "library_saved",
        "skipped",
        "streams",
        "top_sequences",
        "total",
        "unique_sequences",
    )

    def __init__(
        self,
        total: int = 0,
        emitted: int = 0,
        skipped: int = 0,
        unique_sequences: int = 0,
        library_loaded: int | None = None,  # None: no library in use
        library_saved: int | None = None,
    ) -> None:
        self.total = total
        self.emitted = emitted
        self.skipped = skipped
        self.unique_sequences = unique_sequences
        self.library_loaded = library_loaded
        self.library_saved = library_saved
        self.top_sequences: list[TopRow] | None = None  # with --top
        self.files: list[CountsRow] | None = None  # with several inputs: per input
        self.streams: list[CountsRow] | None = None  # with --stream-by: per stream
        # The signal that asked the run to stop before its input ended (None: it ended).
        self.interrupted: int | None = None

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stats) and self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"Stats({fields})"

    @property
    def redundancy_pct(self) -> float:
        """Share of records skipped, in percent."""
        return 100.0 * self.skipped / self.total if self.total else 0.0


def stats_rows(stats: Stats, config: Config) -> list[tuple[str, str]]:
    """The table rows, in the order the documentation gives."""
    history = "unlimited" if config.max_history is None else f"{config.max_history:,}"
    return (
        [
            ("Total lines processed", f"{stats.total:,}"),
            ("Lines emitted", f"{stats.emitted:,}"),
            ("Lines skipped", f"{stats.skipped:,}"),
            ("Redundancy", f"{stats.redundancy_pct:.1f}%"),
            ("Unique sequences tracked", f"{stats.unique_sequences:,}"),
            ("Window size", f"{config.window_size:,}"),
            ("Max history", history),
        ]
        + ([("Minimum size", f"{config.min_size:,} {config.size_unit}")] if config.min_size else [])
        + ([("Streams", f"{len(stats.streams):,}")] if stats.streams is not None else [])
        + (
            [
                ("Library sequences loaded", f"{stats.library_loaded or 0:,}"),
                ("Library sequences saved", f"{stats.library_saved or 0:,}"),
            ]
            if stats.library_loaded is not None or stats.library_saved is not None
            else []
        )
    )


def stats_document(stats: Stats, config: Config) -> dict[str, object]:
    """The JSON statistics document."""
    from seqdedup.config.settings import key_settings

    return {
        "statistics": {
            "lines": {"total": stats.total, "emitted": stats.emitted, "skipped": stats.skipped},
            "redundancy_pct": round(stats.redundancy_pct, 1),
            "sequences": {"unique_tracked": stats.unique_sequences},
            "library": {"loaded": stats.library_loaded or 0, "saved": stats.library_saved or 0},
            **({"files": stats.files} if stats.files is not None else {}),
            **({"streams": stats.streams} if stats.streams is not None else {}),
        },
        "configuration": {
            "window_size": config.window_size,
            **({"min_size": {config.size_unit: config.min_size}} if config.min_size else {}),
            "max_history": "unlimited" if config.max_history is None else config.max_history,
            "max_unique_sequences": (
                "unlimited" if config.max_unique_sequences is None else config.max_unique_sequences
            ),
            "skip_chars": config.skip_chars,
            "skip_fields": config.skip_fields,
            "delimiter": config.delimiter.decode("utf-8", "backslashreplace"),
            "byte_mode": config.byte_mode,
            "keys": key_settings(config),
            **(
                {
                    "streams": {
                        "by": config.stream_by,
                        "by_json": config.stream_by_json,
                        "idle": config.stream_idle,
                        "max": config.max_streams,
                    }
                }
                if config.stream_split
                else {}
            ),
        },
    }


def write_stats(
    stats: Stats, config: Config, stream: TextIO, fmt: str = "table", color: bool = False
) -> None:
    """Print the statistics to ``stream`` as a table or as one JSON document (the table
    in colour with ``color``)."""
    if fmt == "json":
        import json

        document = stats_document(stats, config)
        if stats.top_sequences is not None:
            document["top_sequences"] = stats.top_sequences
        stream.write(json.dumps(document, indent=2) + "\n")
        stream.flush()
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Deduplication statistics")
    table.add_column("Metric")
    table.add_column("Value", justify="right")
    for name, value in stats_rows(stats, config):
        table.add_row(name, value)
    console = _console(Console, stream, color)
    console.print(table)
    if stats.top_sequences is not None:
        console.print(
            _top_table(stats.top_sequences, console.width if console.is_terminal else None)
        )
