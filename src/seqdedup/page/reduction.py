"""The data of a --budget reduction's report page: each fold and elision a piece, largest
first, with the tokens in and out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from seqdedup.config.settings import Config
from seqdedup.page.data import TOP, page_data
from seqdedup.page.picture import RunPicture
from seqdedup.page.types import Page
from seqdedup.run.stats import Stats
from seqdedup.run.top import TopRow

if TYPE_CHECKING:
    from seqdedup.budget.reduce import Reduction


def reduction_data(
    picture: RunPicture,
    config: Config,
    data: bytes,
    reduction: Reduction,
    bytes_written: int,
    seconds: float,
) -> Page:
    """The page of a ``--budget`` reduction: each fold and elision is a piece (its
    lines, its reference), listed largest first; the tokens in and out."""
    picture(data)
    delimiter = config.delimiter
    total = data.count(delimiter) + (0 if not data or data.endswith(delimiter) else 1)
    picture.end_input(total)
    ranked: list[tuple[int, TopRow]] = []
    removed = 0
    for digest, (first, last) in sorted(reduction.lines.items(), key=lambda item: item[1]):
        identity = int(digest[:15], 16)
        length = last - first + 1
        removed += length
        picture.add(first - 1, length, identity, 0, False)
        ranked.append(
            (
                identity,
                {
                    "removed": length,
                    "seen": 1,
                    "length": length,
                    "first_seen": {"lines": [first, last]},
                    "first_record": None,
                },
            )
        )
    ranked.sort(key=lambda item: -item[1]["removed"])
    stats = Stats(total=total, emitted=total - removed, skipped=removed)
    page = page_data(
        picture,
        stats,
        config,
        ranked[:TOP],
        list(config.inputs),
        bytes_written,
        seconds,
        (reduction.tokens_in, reduction.tokens_out),
    )
    page["top_how"] = (
        f"The {min(TOP, len(ranked))} largest of the {len(ranked):,} stretches folded or "
        "elided to meet the budget; open one for its exact text (its reference is the one "
        "in the reduced text)."
    )
    return page
