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


def attribution_pieces(
    keys: Sequence[object], window: int, max_candidates: int | None = None
) -> list[tuple[int, int, int]]:
    """The pieces ``(start, end, source)`` (0-based, inclusive) each duplicate run is
    reported as, with unlimited history and no library. O(n^3 W).

    A piece starting at record p follows these candidate sources: every earlier
    occurrence i of window p (i + W <= p), when window p is a repeat; and, for each
    other repeat window j covering p, its earliest occurrence, aligned to p. It
    extends as far as the best of them matches inside the run, and takes the earliest
    of those that match that far; the next piece starts where it ended.
    """
    n = len(keys)
    skipped = skipped_flags(keys, window)

    def occurrences(j: int) -> list[int]:
        return [i for i in range(j - window + 1) if keys[i : i + window] == keys[j : j + window]]

    pieces = []
    p = 0
    while p < n:
        if not skipped[p]:
            p += 1
            continue
        run_end = p
        while run_end < n and skipped[run_end]:
            run_end += 1
        while p < run_end:
            candidates: set[int] = set()
            for j in range(max(p - window + 1, 0), min(p, n - window) + 1):
                found = occurrences(j)
                if found:
                    candidates.update(found if j == p else [found[0] + p - j])
            chosen = sorted(candidates)[:max_candidates]

            lengths = {c: _match(keys, c, p, run_end) for c in chosen}
            best = max(lengths.values())
            pieces.append((p, p + best - 1, min(c for c in chosen if lengths[c] == best)))
            p += best
    return pieces


def _match(keys: Sequence[object], source: int, start: int, stop: int) -> int:
    """How many records from ``start`` (before ``stop``) equal those from ``source``."""
    matched = 0
    while start + matched < stop and keys[source + matched] == keys[start + matched]:
        matched += 1
    return matched
