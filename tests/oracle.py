"""A slow, obviously correct implementation of the skip rule (docs/engine.md).

Window j (W consecutive tracked records from tracked record j) is a repeat when an
equal window i ended before j started (i + W <= j) and i is remembered (j - i <= history,
None meaning unlimited), or when it equals W consecutive records of a library sequence.
A tracked record is skipped when it lies inside at least one repeat.

Several streams (input files) are one run: their records are numbered one after the
other, and a window is W consecutive records of one stream (none spans two).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence


def skipped_flags(
    keys: Sequence[object],
    window: int,
    history: int | None = None,
    library: Sequence[Sequence[object]] = (),
) -> list[bool]:
    """For each key (tracked records only), whether the rule skips it. O(n^2 + nW)."""
    return skipped_flags_streams([keys], window, history, library)


def started_between(starts: list[int], start: int, length: int, history: int | None) -> bool:
    """Whether an equal stretch of ``length`` records, one of ``starts`` (ascending),
    ended before ``start`` and began at most ``history`` records before it: a start in
    [start - history, start - length], found by bisection."""
    at = bisect_left(starts, 0 if history is None else start - history)
    return at < len(starts) and starts[at] <= start - length


def window_starts(streams: Sequence[Sequence[object]], window: int) -> list[int]:
    """Where the windows start, records numbered across the streams: W records of one."""
    starts: list[int] = []
    first = 0
    for stream in streams:
        starts += range(first, first + len(stream) - window + 1)
        first += len(stream)
    return starts


def skipped_flags_streams(
    streams: Sequence[Sequence[object]],
    window: int,
    history: int | None = None,
    library: Sequence[Sequence[object]] = (),
) -> list[bool]:
    """For each key of the streams, in order, whether the rule skips it."""
    keys = [key for stream in streams for key in stream]
    known = {tuple(seq[k : k + window]) for seq in library for k in range(len(seq) - window + 1)}
    skipped = [False] * len(keys)
    starts = window_starts(streams, window)
    equal: dict[tuple[object, ...], list[int]] = {}  # each content's windows, by start
    for i in starts:
        equal.setdefault(tuple(keys[i : i + window]), []).append(i)
    for j in starts:
        current = tuple(keys[j : j + window])
        repeat = current in known or started_between(equal[current], j, window, history)
        if repeat:
            for r in range(j, j + window):
                skipped[r] = True
    return skipped


SIZE_CAP = 4096  # a stretch of this many records is large enough whatever its size


def large_enough(
    window: int, min_size: int, size_of: Callable[[object], int], cap: int = SIZE_CAP
) -> Callable[[Sequence[object]], bool]:
    """Whether a stretch of these keys is large enough: ``window`` records and
    ``min_size`` of size, or ``max(window, cap)`` records."""
    big = max(window, cap)

    def large(content: Sequence[object]) -> bool:
        n = len(content)
        return n >= window and (n >= big or sum(map(size_of, content)) >= min_size)

    return large


def skipped_flags_sized(
    streams: Sequence[Sequence[object]],
    window: int,
    min_size: int,
    size_of: Callable[[object], int],
    history: int | None = None,
    library: Sequence[Sequence[object]] = (),
    cap: int = SIZE_CAP,
    longest: int | None = None,
) -> list[bool]:
    """The rule with a minimum size, literally: a record is skipped when it lies inside
    a stretch of one stream with at least ``window`` records and ``min_size`` of size
    (or ``max(window, cap)`` records) that equals a stretch which ended before it
    started (and started at most ``history`` records before it), or a stretch of a
    library sequence. ``size_of(key)``: a record's size. O(n^3).

    ``longest``: look only at stretches of at most max(window, cap) records, for long
    inputs (the same answer: each record of a longer large stretch lies in one of its
    sub-stretches of that many records, large too, and repeated with it)."""
    keys = [key for stream in streams for key in stream]
    bounds: list[tuple[int, int]] = []  # each stream's [first, stop)
    first = 0
    for stream in streams:
        bounds.append((first, first + len(stream)))
        first += len(stream)
    big = max(window, cap)
    large = large_enough(window, min_size, size_of, cap)
    known = {
        tuple(seq[s:e])
        for seq in library
        for s in range(len(seq))
        for e in range(s + 1, len(seq) + 1)
        if large(seq[s:e])
    }
    span = len(keys) if longest is None else big
    starts_of: dict[tuple[object, ...], list[int]] = {}
    for lo, hi in bounds:
        for s in range(lo, hi):
            for e in range(s + 1, min(hi, s + span) + 1):
                starts_of.setdefault(tuple(keys[s:e]), []).append(s)
    skipped = [False] * len(keys)
    for lo, hi in bounds:
        for s in range(lo, hi):
            for e in range(s + 1, min(hi, s + span) + 1):
                content = tuple(keys[s:e])
                if not large(content):
                    continue
                repeat = content in known or started_between(starts_of[content], s, e - s, history)
                if repeat:
                    for r in range(s, e):
                        skipped[r] = True
    return skipped


def new_material_sized(
    streams: Sequence[Sequence[object]],
    window: int,
    min_size: int,
    size_of: Callable[[object], int],
    history: int | None = None,
    library: Sequence[Sequence[object]] = (),
    cap: int = SIZE_CAP,
) -> list[bool]:
    """What a run under a minimum size saves, literally: the records of every minimal
    large stretch (no shorter one with the same end, or the same start, is large) that
    repeats nothing the rule compares it with (an equal stretch that ended before it
    started, within ``history``, or a library's). O(n^3)."""
    keys = [key for stream in streams for key in stream]
    large = large_enough(window, min_size, size_of, cap)
    known = {tuple(q[s:e]) for q in library for s in range(len(q)) for e in range(s, len(q) + 1)}
    stretches = []  # (start, end exclusive) of every stretch inside one stream
    first = 0
    for stream in streams:
        stop = first + len(stream)
        stretches += [(s, e) for s in range(first, stop) for e in range(s + 1, stop + 1)]
        first = stop
    new = [False] * len(keys)
    for s, e in stretches:
        content = keys[s:e]
        if not large(content) or (large(content[1:]) and large(content[:-1])):
            continue  # not minimal at its end, nor at its start
        seen = tuple(content) in known or any(
            keys[s2:e2] == content and e2 <= s and (history is None or s - s2 <= history)
            for s2, e2 in stretches
        )
        if not seen:
            for r in range(s, e):
                new[r] = True
    return new


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
    reported as, with unlimited history and no library. O(n^3 W)."""
    return attribution_pieces_streams([keys], window, max_candidates)


def attribution_pieces_streams(
    streams: Sequence[Sequence[object]], window: int, max_candidates: int | None = None
) -> list[tuple[int, int, int]]:
    """The same over several streams, records numbered across them. A duplicate run
    ends with its stream, and a source is followed only inside its own stream.

    A piece starting at record p follows these candidate sources: every earlier
    occurrence i of window p (i + W <= p), when window p is a repeat; and, for each
    other repeat window j covering p, its earliest occurrence, aligned to p. It
    extends as far as the best of them matches inside the run, and takes the earliest
    of those that match that far; the next piece starts where it ended.
    """
    keys = [key for stream in streams for key in stream]
    end_of: list[int] = []  # per record, where its stream ends
    for stream in streams:
        end_of += [len(end_of) + len(stream)] * len(stream)
    skipped = skipped_flags_streams(streams, window)
    starts = window_starts(streams, window)
    start_set = set(starts)

    def occurrences(j: int) -> list[int]:
        return [
            i for i in starts if i + window <= j and keys[i : i + window] == keys[j : j + window]
        ]

    pieces = []
    for p, run_end in duplicate_runs(skipped, end_of):
        while p < run_end:
            candidates: set[int] = set()
            for j in range(max(p - window + 1, 0), p + 1):
                found = occurrences(j) if j in start_set else []
                if found:
                    candidates.update(found if j == p else [found[0] + p - j])
            chosen = sorted(candidates)[:max_candidates]

            lengths = {c: _match(keys, c, p, min(run_end, p + end_of[c] - c)) for c in chosen}
            best = max(lengths.values())
            pieces.append((p, p + best - 1, min(c for c in chosen if lengths[c] == best)))
            p += best
    return pieces


def duplicate_runs(skipped: Sequence[bool], end_of: Sequence[int]) -> list[tuple[int, int]]:
    """The maximal stretches ``(start, stop)`` of skipped records inside one stream
    (``end_of``: where each record's stream ends)."""
    runs = []
    i = 0
    while i < len(skipped):
        if not skipped[i]:
            i += 1
            continue
        start = i
        while i < end_of[start] and skipped[i]:
            i += 1
        runs.append((start, i))
    return runs


def _match(keys: Sequence[object], source: int, start: int, stop: int) -> int:
    """How many records from ``start`` (before ``stop``) equal those from ``source``."""
    matched = 0
    while start + matched < stop and keys[source + matched] == keys[start + matched]:
        matched += 1
    return matched


def smallest_period(keys: Sequence[object]) -> int:
    """The smallest p >= 1 with keys[i] == keys[i - p] for every i >= p (literal)."""
    return next(
        p
        for p in range(1, len(keys) + 1)
        if all(keys[i] == keys[i - p] for i in range(p, len(keys)))
    )


def fold_parts(
    streams: Sequence[Sequence[object]], window: int, every: int | None = None
) -> list[dict[str, object]]:
    """The summary lines ``--fold`` writes (unlimited history, no library), literally:
    each run of skipped records of one stream, cut into parts of ``every`` records;
    its sequence is the smallest period of its first piece (of the piece so far while
    it goes on past the part), its copies those of the sequence repeated from the
    run's start that lie in the part. Indices are 0-based over all
    streams; ``source`` is None where the line names the earliest source the run still
    matches when it is written (which depends on how input was cut)."""
    keys = [key for stream in streams for key in stream]
    end_of: list[int] = []
    for stream in streams:
        end_of += [len(end_of) + len(stream)] * len(stream)
    skipped = skipped_flags_streams(streams, window)
    first_piece = {
        start: (end, source) for start, end, source in attribution_pieces_streams(streams, window)
    }
    parts: list[dict[str, object]] = []
    folded: dict[tuple[object, ...], int] = {}
    for a, b in duplicate_runs(skipped, end_of):
        piece_end, source = first_piece[a]
        step = b - a if every is None else every
        for part, s in enumerate(range(a, b, step), start=1):
            t = min(s + step, b)
            # The line is written once record t is taken: the first piece is complete
            # by then if it ends before t; else the line describes the piece so far.
            extent = piece_end - a + 1 if piece_end < t else t - a
            length = smallest_period(keys[a : a + extent])
            unit = tuple(keys[a : a + length])
            repeated = 0
            while a + repeated < t and keys[a + repeated] == unit[repeated % length]:
                repeated += 1
            copies = max(0, a + repeated - s) // length
            folded[unit] = folded.get(unit, 0) + copies
            parts.append(
                {
                    "start": s,
                    "end": t - 1,
                    "removed": t - s,
                    "copies": copies,
                    "extra": t - s - copies * length,
                    "length": length,
                    "source": source if piece_end < t else None,
                    "count": folded[unit] + 1,
                    "part": part,
                    "continues": t < b,
                    "unit": unit,
                }
            )
    return parts


def interleaved_skipped(
    named_keys: Sequence[tuple[str | None, object]],
    window: int,
    history: int | None = None,
    idle: int | None = None,
    max_streams: int | None = None,
    library: Sequence[Sequence[object]] = (),
    per_stream: bool = False,
) -> list[bool]:
    """``--stream-by``: for each tracked record (its stream name, None for one that
    continues the stream before it, and its key), whether the rule skips it. With
    ``per_stream`` a window repeats only an earlier window of its own stream (or the
    library's).

    Records are dealt to their streams; a stream without a record for more than
    ``idle`` records, or the least recently active one when a new stream would be one
    too many, ends, and its next record starts it afresh. A window is W consecutive
    records of one stream's stretch; it is a repeat when an equal window ended before
    it started (input order) and, with a history, within ``history`` records of its own
    end; or when it equals W consecutive keys of a ``library`` sequence. O(n^2 W)."""
    keys = [key for _, key in named_keys]
    names, current = [], "(unnamed)"
    for name, _ in named_keys:
        current = current if name is None else name
        names.append(current if per_stream else "")  # (one history: one name for all)
    windows = [
        ((names[stretch[0]], *(keys[p] for p in stretch[k : k + window])), stretch[k : k + window])
        for stretch in stream_stretches(named_keys, idle, max_streams)
        for k in range(len(stretch) - window + 1)
    ]
    known = {tuple(seq[k : k + window]) for seq in library for k in range(len(seq) - window + 1)}
    skipped = [False] * len(keys)
    for content, where in windows:
        if content[1:] in known or any(
            other == content
            and earlier[-1] < where[0]
            and (history is None or where[-1] - earlier[-1] <= history)
            for other, earlier in windows
        ):
            for position in where:
                skipped[position] = True
    return skipped


def stream_stretches(
    named_keys: Sequence[tuple[str | None, object]],
    idle: int | None = None,
    max_streams: int | None = None,
) -> list[list[int]]:
    """The positions of each stream's stretches (a stream that ends and starts again
    has two), in the order they start."""
    last: dict[str, int] = {}  # active streams: their last record
    stretch_of: dict[str, list[int]] = {}
    stretches: list[list[int]] = []
    current = "(unnamed)"
    for position, (name, _) in enumerate(named_keys):
        current = current if name is None else name
        if idle is not None:
            for other in [n for n, at in last.items() if position - at > idle]:
                del last[other]
        if current not in last:
            if max_streams is not None and len(last) >= max_streams:
                del last[min(last, key=last.__getitem__)]
            stretch_of[current] = []
            stretches.append(stretch_of[current])
        last[current] = position
        stretch_of[current].append(position)
    return stretches


def interleaved_skipped_sized(
    named_keys: Sequence[tuple[str | None, object]],
    window: int,
    min_size: int,
    size_of: Callable[[object], int],
    history: int | None = None,
    idle: int | None = None,
    max_streams: int | None = None,
    library: Sequence[Sequence[object]] = (),
    per_stream: bool = False,
    shortest: bool = False,
) -> list[bool]:
    """``--stream-by`` under a minimum size, literally: a record is skipped when it lies
    inside a stretch of its stream's stretch (consecutive records of one stream) with
    at least ``window`` records and ``min_size`` of size that equals a stretch of any
    stream (its own with ``per_stream``) which ended before it started, in input order,
    within ``history`` records of its own end; or a stretch of a ``library`` sequence.

    With a history, the stretches looked at are the shortest large-enough ones (none of
    them large without its first record, or without its last): across streams a longer
    stretch's parts lie otherwise apart than it does. ``shortest``: those only, without
    a history too (the same answer: held by the tests). Stretches are short here: no
    bound of records applies."""
    keys = [key for _, key in named_keys]
    names, current = [], "(unnamed)"
    for name, _ in named_keys:
        current = current if name is None else name
        names.append(current if per_stream else "")
    large = large_enough(window, min_size, size_of)

    def looked_at(content: Sequence[object]) -> bool:
        if not large(content):
            return False
        return (history is None and not shortest) or not (
            large(content[1:]) and large(content[:-1])
        )

    by_content: dict[tuple[object, ...], list[tuple[str, list[int]]]] = {}
    for lane in stream_stretches(named_keys, idle, max_streams):
        for i in range(len(lane)):
            for j in range(i + 1, len(lane) + 1):
                content = tuple(keys[p] for p in lane[i:j])
                if looked_at(content):
                    by_content.setdefault(content, []).append((names[lane[0]], lane[i:j]))
    known = {tuple(q[i:j]) for q in library for i in range(len(q)) for j in range(i, len(q) + 1)}
    skipped = [False] * len(keys)
    for content, found in by_content.items():
        for name, where in found:
            if content in known or any(
                other_name == name
                and earlier[-1] < where[0]
                and (history is None or where[-1] - earlier[-1] <= history)
                for other_name, earlier in found
            ):
                for position in where:
                    skipped[position] = True
    return skipped


def interleaved_runs(
    named_keys: Sequence[tuple[str | None, object]],
    skipped: Sequence[bool],
    idle: int | None = None,
    max_streams: int | None = None,
) -> list[tuple[tuple[object, ...], int]]:
    """The duplicate runs (maximal stretches of skipped records of one stream's
    stretch): their content and last position, in the order of their last records."""
    runs: list[tuple[tuple[object, ...], int]] = []
    for stretch in stream_stretches(named_keys, idle, max_streams):
        run: list[object] = []
        for at, position in enumerate([*stretch, None]):
            if position is not None and skipped[position]:
                run.append(named_keys[position][1])
            elif run:
                runs.append((tuple(run), stretch[at - 1]))
                run = []
    return sorted(runs, key=lambda item: item[1])


def interleaved_fold_parts(
    named_keys: Sequence[tuple[str | None, object]],
    window: int,
    skipped: Sequence[bool],
    every: int | None = None,
    idle: int | None = None,
    max_streams: int | None = None,
) -> list[dict[str, object]]:
    """The summary lines ``--fold`` writes with ``--stream-by`` (unlimited history, no
    library), in output order, literally: each duplicate run of a stream's stretch is
    one piece, cut into parts of ``every`` records; a part's sequence is the smallest
    period of the run (of the run up to the part's end while it goes on), its copies
    those of the sequence repeated from the run's start that lie in the part; its
    source is the window of equal content that ended first, the run's first window's.
    Positions are 0-based; a line stands right after its part's last record."""
    keys = [key for _, key in named_keys]
    stretches = stream_stretches(named_keys, idle, max_streams)
    stream_of: list[str] = []  # each record's stream: a continuation line's is the last
    current = "(unnamed)"
    for name, _ in named_keys:
        current = current if name is None else name
        stream_of.append(current)
    windows: dict[tuple[object, ...], list[int]] = {}  # content -> the first, last position
    parts: list[dict[str, object]] = []
    for stretch in stretches:
        for at in range(len(stretch) - window + 1):
            positions = stretch[at : at + window]
            content = tuple(keys[p] for p in positions)
            first = windows.get(content)
            if first is None or positions[-1] < first[1]:
                windows[content] = [positions[0], positions[-1]]
    for stretch in stretches:
        run: list[int] = []
        for position in [*stretch, None]:
            if position is not None and skipped[position]:
                run.append(position)
                continue
            if not run:
                continue
            n = len(run)
            step = n if every is None else every
            content = tuple(keys[p] for p in run[:window])
            source = windows[content]
            for part, s in enumerate(range(0, n, step), start=1):
                t = min(s + step, n)
                run_keys = [keys[p] for p in run]
                length = smallest_period(run_keys[: n if t == n else t])
                unit = run_keys[:length]
                repeated = 0
                while repeated < t and run_keys[repeated] == unit[repeated % length]:
                    repeated += 1
                copies = max(0, repeated - s) // length
                parts.append(
                    {
                        "start": run[s],
                        "end": run[t - 1],
                        "removed": t - s,
                        "copies": copies,
                        "extra": t - s - copies * length,
                        "length": length,
                        "part": part,
                        "continues": t < n,
                        "stream": stream_of[run[0]],
                        "match_start": source[0],
                        "match_end": source[1],
                        "unit": tuple(unit),
                    }
                )
            run = []
    parts.sort(key=lambda part: part["end"])  # type: ignore[arg-type,return-value]
    folded: dict[tuple[object, ...], int] = {}
    for part in parts:  # a line's count: copies folded so far, in output order
        unit = part.pop("unit")  # type: ignore[assignment]
        folded[unit] = folded.get(unit, 0) + part["copies"]  # type: ignore[operator]
        part["count"] = folded[unit] + 1
    return parts
