"""Where a record lies on the report page's timeline: its time (from the timestamp
samples) or its number, the bucket of a record, and a piece's records by bucket."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from itertools import pairwise
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from collections.abc import Sequence

    from seqdedup.page.picture import RunPicture


TIMED_SHARE = 0.5  # of the sampled records, at least this share have a timestamp: a time axis
CLOCK_SLACK = 3600.0  # seconds: clocks further apart than this are not one timeline


def clocks_apart(at: Sequence[int], times: Sequence[float], input_ends: Sequence[int]) -> str:
    """Why the samples' times make no one timeline ('' when they do): two inputs whose
    time ranges lie more than an hour apart (their clocks disagree, or they were written
    at other times: one timeline would squeeze each into a sliver), or times that go
    back by more than an hour twice in input order (streams with clocks of their own,
    a time of day without a date over several days)."""
    ranges: dict[int, tuple[float, float]] = {}
    for index, time in zip(at, times, strict=True):
        source = bisect_right(input_ends, index)
        low, high = ranges.get(source, (time, time))
        ranges[source] = (min(low, time), max(high, time))
    spans = sorted(ranges.values())
    for (_, high), (low, _) in pairwise(spans):
        if low - high > CLOCK_SLACK:
            return "the inputs' times lie more than an hour apart"
    backwards = sum(1 for a, b in pairwise(times) if a - b > CLOCK_SLACK)
    if backwards >= 2:
        return "the records' times go back by more than an hour again and again"
    return ""


class Axis:
    """Where a record lies on the timeline: its time (from the timestamp samples), or
    its number; and the bucket of a record index."""

    def __init__(self, picture: RunPicture, total: int, buckets: int) -> None:
        self.total = max(total, 1)
        at, times = picture.sample_at, picture.sample_time
        tried = max(picture.samples_tried, 1)
        found = picture.samples_found
        self.timed = len(at) >= 2 and found >= TIMED_SHARE * tried and max(times) > min(times)
        # (several clocks: the input order, and the page says why)
        self.apart = clocks_apart(at, times, picture.input_ends) if self.timed else ""
        self.timed = self.timed and not self.apart
        self._at, self._times = at, times
        if self.timed:
            self.low, self.high = min(times), max(times)
        else:
            self.low, self.high = 0.0, float(self.total)
        self.buckets = buckets if self.timed else max(1, min(buckets, self.total))
        self.width = (self.high - self.low) / self.buckets
        # (a record axis: bucket b holds the records from bounds[b] to bounds[b + 1])
        self.bounds = [int(b * self.total / self.buckets) for b in range(self.buckets + 1)]

    def position(self, index: int) -> float:
        """A record's place on the axis: the time of the latest sample at or before it
        (the first sample's before the first), else its index."""
        if not self.timed:
            return float(index)
        sample = bisect_right(self._at, index) - 1
        return self._times[max(sample, 0)]

    def bucket(self, index: int) -> int:
        if not self.timed:
            return min(self.buckets - 1, max(0, bisect_right(self.bounds, index) - 1))
        return self.bucket_of(self.position(index))

    def bucket_of(self, place: float) -> int:
        return min(self.buckets - 1, max(0, int((place - self.low) / self.width)))

    def segments(self, start: int, stop: int) -> list[tuple[int, int]]:
        """Records ``start`` .. ``stop - 1`` by bucket: (bucket, how many), in order. On
        a time axis a record's place is its latest sample's time, so the bucket can
        change only at a sampled record."""
        first, last = self.bucket(start), self.bucket(stop - 1)
        if first == last:
            return [(first, stop - start)]
        # (only the bounds or samples inside the stretch: found by bisection, not a scan)
        marks = self._at if self.timed else self.bounds
        cuts = marks[bisect_right(marks, start) : bisect_left(marks, stop)]
        out: list[tuple[int, int]] = []
        at = start
        for cut in [*cuts, stop]:
            if cut > at:
                bucket = self.bucket(at)
                if out and out[-1][0] == bucket:
                    out[-1] = (bucket, out[-1][1] + cut - at)
                else:
                    out.append((bucket, cut - at))
                at = cut
        return out

    def read_per_bucket(self) -> list[int]:
        """Records read per bucket (on a time axis: each stretch between two samples
        counts in the bucket of its first sample's time)."""
        read = [0] * self.buckets
        if not self.timed:
            bounds = self.bounds
            return [bounds[b + 1] - bounds[b] for b in range(self.buckets)]
        at = [0, *self._at[1:], self.total]
        for i, time in enumerate(self._times):
            read[self.bucket_of(time)] += at[i + 1] - at[i]
        return read

    @property
    def kind(self) -> Literal["time", "record"]:
        return "time" if self.timed else "record"

    def label(self, index: int) -> float:
        """A record's place as the page shows it: milliseconds since 1970 (a time
        axis), else its 1-based number."""
        return self.position(index) * 1000.0 if self.timed else float(index + 1)

    def edge(self, bucket: int) -> float:
        if not self.timed:
            return float(self.bounds[bucket] + 1)
        return (self.low + bucket * self.width) * 1000.0


def spread(axis: Axis, start: int, length: int, span: int) -> list[tuple[int, int]]:
    """The ``length`` records a piece removed by bucket: one by one where they lie
    together (``span == length``: no filters, no streams); a stream run's, which lie
    among other streams' over ``span`` records, spread evenly over them (shares rounded
    so that they add up to the run's records)."""
    parts = axis.segments(start, start + span)
    if span == length:
        return parts
    out, done, given = [], 0, 0
    for bucket, count in parts:
        done += count
        share = round(length * done / span) - given
        out.append((bucket, share))
        given += share
    return out
