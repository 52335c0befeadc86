"""The data of a library's report page (seqdedup-library report): its sequences, their
counts and texts."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from seqdedup.keys.kind import kind_of
from seqdedup.page.data import (
    SAMPLE_SHOWN,
    TEXT_RECORDS,
    TOP,
    figures,
    length_histogram,
    sequence_text,
    shown,
    shown_name,
)
from seqdedup.page.types import LibrarySequence, Page, SequenceRow

if TYPE_CHECKING:
    pass


def library_data(directory: Path) -> Page:
    """Everything the page shows of a library: its size, its runs, the repeated
    sequences that removed the most records (with their text and id), and the lengths
    of its repeated sequences."""

    from seqdedup.base.version import __version__
    from seqdedup.library.admin import describe_library, library_contents

    info = describe_library(directory)
    contents = library_contents(directory, TOP)
    sequences = info["sequences"]
    headline: dict[str, float] = {
        "sequences_repeat": sequences["repeat"],
        "sequences_new": sequences["new"],
        "records": info["records"],
        "runs": info["runs"],
        "bytes_on_disk": info["disk_bytes"],
    }
    top = [_library_row(row) for row in contents["top"]]
    histogram = length_histogram(contents["lengths"])
    name = shown_name(str(directory))
    return {
        "kind": "library",
        "version": __version__,
        "title": f"seqdedup library: {name}",
        "heading": f"Library {name}",
        "subtitle": (
            f"{sequences['repeat']:,} repeated sequences and {sequences['new']:,} stretches of "
            f"first-seen material from {info['runs']:,} runs; last run {info['last_run'] or '-'}"
        ),
        "headline": headline,
        "figures": figures(headline),
        "configuration": None,
        "configuration_text": "",
        "timeline": None,
        "timeline_how": "",
        "runs": contents["runs"],
        "top": top,
        "top_how": (
            f"The {len(top)} repeated sequences that removed the most records (length times "
            "sightings); open one for its records (seqdedup-library show DIR ID prints one)."
        ),
        "heat": None,
        "blocks": {"sample": None, "window_size": None, "widths": [], "histogram": histogram},
        "library": None,
        "notes": [],
    }


def _library_row(row: LibrarySequence) -> SequenceRow:
    """A library's sequence as the top sequences list shows it (its id for reference)."""
    return {
        "removed": row["length"] * row["count"],
        "seen": row["count"],
        "length": row["length"],
        "first_place": f"library sequence {row['id'][:12]}",
        "first_shown": "",
        "last_shown": "",
        "sample": shown(row["records"][0], SAMPLE_SHOWN) if row["records"] else "",
        "kind": shown(kind_of(row["records"][0]), SAMPLE_SHOWN) if row["records"] else "",
        "text": sequence_text(row["records"]),
        "text_missing": "",
        "more_records": max(0, row["length"] - TEXT_RECORDS),
        "reference": row["id"][:12],
    }
