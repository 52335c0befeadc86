"""A slow, obviously correct implementation of the skip rule (docs/engine.md).

Window j (W consecutive tracked records from tracked record j) is a repeat when an
equal window i ended before j started (i + W <= j) and i is remembered (j - i <= history,
None meaning unlimited), or when it equals W consecutive records of a library sequence.
A tracked record is skipped when it lies inside at least one repeat.
"""

from __future__ import annotations

from collections.abc import Sequence


def skipped_flags(
    keys: Sequence[object],
    window: int,
    history: int | None = None,
    library: Sequence[Sequence[object]] = (),
) -> list[bool]:
    """For each key (tracked records only), whether the rule skips it. O(n^2 W)."""
    n = len(keys)
    known = {tuple(seq[k : k + window]) for seq in library for k in range(len(seq) - window + 1)}
    skipped = [False] * n
    for j in range(n - window + 1):
        current = list(keys[j : j + window])
        repeat = tuple(current) in known or any(
            list(keys[i : i + window]) == current
            for i in range(j - window + 1)
            if history is None or j - i <= history
        )
        if repeat:
            for r in range(j, j + window):
                skipped[r] = True
    return skipped


def kept(keys: Sequence[object], window: int, history: int | None = None) -> list[object]:
    """The records the rule keeps, in order."""
    flags = skipped_flags(keys, window, history)
    return [k for k, s in zip(keys, flags, strict=False) if not s]


def reference_output(
    records: Sequence[str],
    window: int,
    history: int | None = None,
    rules: Sequence[tuple[str, str]] = (),
    skip_chars: int = 0,
    transform: object = None,
) -> list[str]:
    """What seqdedup writes for text records, filters and keys included.

    rules: (kind, regex) in order; the first that matches (re.search) decides; no match
    means tracked unless a track rule exists. The key is the record after skip_chars
    characters, then transform(key) if given. Pass-through records are always written
    and take no part in matching.
    """
    import re

    has_track = any(kind == "track" for kind, _ in rules)

    def tracked(record: str) -> bool:
        for kind, pattern in rules:
            if re.search(pattern, record):
                return kind == "track"
        return not has_track

    flags = [tracked(r) for r in records]
    keys = [r[skip_chars:] for r, f in zip(records, flags, strict=False) if f]
    if transform is not None:
        keys = [transform(k) for k in keys]  # type: ignore[operator]
    skip = iter(skipped_flags(keys, window, history))
    return [r for r, f in zip(records, flags, strict=False) if not (f and next(skip))]
