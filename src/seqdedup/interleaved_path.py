"""The feeding path of a ``--stream-by`` run: records in, each named by its stream and
decided by :class:`seqdedup.interleaved.StreamDecider`, written in input order.

A record is written as soon as it and every record before it are decided; it waits
only for later records of its own stream (W - 1 of them), or for its stream to end
(idle, evicted, end of input). With markers or explanations, nothing past a duplicate
run that is still open is written, so that its marker stands right after it.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from seqdedup.attribution import DecisionCount
from seqdedup.config import (
    DEFAULT_STREAM_ANNOTATION,
    DEFAULT_STREAM_FILES_ANNOTATION,
)
from seqdedup.engine import hash_ints
from seqdedup.errors import visible
from seqdedup.filters import TRACKED, UNMATCHED
from seqdedup.interleaved import UNNAMED, Entry, Run, StreamDecider, StreamNamer
from seqdedup.paths import RecordPath
from seqdedup.report import explain_bypassed, explain_unmatched
from seqdedup.timelimit import PatternTimeout

if TYPE_CHECKING:
    from seqdedup.stages import Stages

STREAM_ROWS = 10_000  # per-stream statistics rows kept; older streams are summed as one


class StreamCount(DecisionCount):
    """The attributor's place in :class:`Stages` for a stream run: the sequences its
    duplicate runs identified."""

    def __init__(self, decider: StreamDecider) -> None:
        super().__init__()
        self._decider = decider

    @property
    def identified(self) -> int:
        return self._decider.identified


class StreamPath(RecordPath):
    """Records (or raw bytes, split by :class:`RecordPath`) of interleaved streams."""

    def __init__(self, stages: Stages, ordered: bool) -> None:
        super().__init__(stages, ordered)
        config = stages.config
        self._namer = StreamNamer(config)
        self._reported = config.annotate or stages.report.explain is not None
        self._decider = StreamDecider(
            config.window_size,
            config.max_history,
            config.stream_idle,
            config.max_streams,
            config.max_unique_sequences,
            self._reported,
        )
        stages.attributor = StreamCount(self._decider)
        self._queue: deque[Entry] = deque()  # fed, not yet written, in input order
        self._current = UNNAMED  # the stream of the last record (for continuation lines)
        self._rows: OrderedDict[str, list[int]] = OrderedDict()  # name -> [total, skipped]
        self._other = [0, 0, 0]  # streams beyond STREAM_ROWS: count, total, skipped
        streams = stages.report.streams
        self._annotation = (
            config.annotation_format
            or (DEFAULT_STREAM_FILES_ANNOTATION if streams.named else DEFAULT_STREAM_ANNOTATION)
            if config.annotate
            else None
        )

    def feed(self, records: Iterable[bytes]) -> list[bytes]:
        stages = self._stages
        batch = records if isinstance(records, list) else list(records)
        names, keyed = self._namer.split(batch)
        decisions = None
        try:
            if stages.filters:
                decisions = stages.filters.classify(batch)
                keyed = [k for k, d in zip(keyed, decisions, strict=True) if d == TRACKED]
            hashes = iter(hash_ints(stages.keys.hashes(keyed)))
        except PatternTimeout as exc:
            number = stages.released + len(self._queue) + 1 + exc.index
            raise exc.at(stages.report.streams.line(number).lower()) from None
        number = stages.released + len(self._queue) + 1
        queue, push, current = self._queue, self._decider.push, self._current
        for offset, record in enumerate(batch):
            name = names[offset]
            if name is None:
                name = current
            else:
                current = name
            entry = Entry(record, number + offset, name)
            queue.append(entry)
            if decisions is None or decisions[offset] == TRACKED:
                push(name, next(hashes), entry)
            else:
                entry.decided = True
                entry.tracked_as = decisions[offset]
        self._current = current
        return self._write_decided()

    def end_records(self) -> list[bytes]:
        """End of an input: every stream ends (no window spans two inputs)."""
        self._decider.end_all()
        self._current = UNNAMED
        out = self._write_decided()
        self._stages.stats.streams = self.stream_rows()
        return out

    def idle(self) -> list[bytes]:
        """The live input is idle: every stream's pending records are decided as at end
        of input; the streams go on (a window never spans the pause)."""
        self._decider.end_all()
        return self._write_decided()

    def idle_bytes(self) -> bytes:
        return self._joined(self.idle(), final=False)

    def _write_decided(self) -> list[bytes]:
        """Write what is decided, up to the first record that is not (or, with markers
        or explanations, that lies in a run still open)."""
        stages = self._stages
        inverse, ordered = stages.config.inverse, self._ordered
        queue, out = self._queue, []
        released = kept = 0
        last_written = stages.last_record_written
        while queue:
            entry = queue[0]
            if not entry.decided or (ordered and entry.run is not None and not entry.run.closed):
                break
            queue.popleft()
            released += 1
            kept += not entry.skip
            self._count(entry.stream, entry.skip)
            if entry.skip == inverse:
                out.append(entry.record)
                last_written = True
            if entry.marker is not None and self._reported:
                self._decider.count(entry.marker)
                fields = self._fields(entry.marker)
                if self._annotation is not None:
                    marker = self._annotation.format_map(fields)
                    out.append(marker.encode("utf-8", "surrogateescape"))
                    last_written = False
                if stages.report.explain is not None:
                    stages.report.explain(explain_stream_run(fields, stages.report.streams.named))
            elif entry.tracked_as not in (-1, TRACKED) and stages.report.explain is not None:
                self._explain_passed(entry)
        stages.count(released, kept)
        stages.last_record_written = last_written
        return out

    def _explain_passed(self, entry: Entry) -> None:
        report = self._stages.report
        assert report.explain is not None
        line = report.streams.line(entry.number)
        if entry.tracked_as == UNMATCHED:
            report.explain(explain_unmatched(line))
        else:
            patterns = [rule.pattern for rule in self._stages.filters.rules]
            report.explain(explain_bypassed(line, patterns[entry.tracked_as]))

    def _fields(self, run: Run) -> dict[str, Any]:
        """A run's marker and explanation fields: its first and last record, the earliest
        occurrence of its first window (first and last record), the streams."""
        streams = self._stages.report.streams
        file, start = streams.locate(run.first.number)
        end = start + run.last.number - run.first.number
        assert run.source is not None
        _, match_first, match_last, match_stream = run.source
        match_file, match_start = streams.locate(match_first)
        return {
            "start": start,
            "end": end,
            "file": file,
            "stream": visible(run.first.stream),
            "match_start": match_start,
            "match_end": match_start + match_last - match_first,
            "match_file": match_file,
            "match_stream": visible(match_stream),
            "count": run.count,
            "window_size": self._stages.config.window_size,
        }

    def _count(self, name: str, skipped: bool) -> None:
        rows = self._rows
        row = rows.get(name)
        if row is None:
            if len(rows) >= STREAM_ROWS:
                _, (total, dropped) = rows.popitem(last=False)
                other = self._other
                other[0] += 1
                other[1] += total
                other[2] += dropped
            row = rows[name] = [0, 0]
        else:
            rows.move_to_end(name)
        row[0] += 1
        row[1] += skipped

    def stream_rows(self) -> list[dict[str, Any]]:
        """Per stream: its name and its records (total, emitted, skipped)."""
        rows = [
            {"name": name, "lines": {"total": t, "emitted": t - s, "skipped": s}}
            for name, (t, s) in self._rows.items()
        ]
        streams, total, skipped = self._other
        if streams:
            rows.append(
                {
                    "name": f"({streams:,} other streams)",
                    "lines": {"total": total, "emitted": total - skipped, "skipped": skipped},
                }
            )
        return rows


def explain_stream_run(fields: dict[str, Any], named: bool) -> str:
    """``EXPLAIN: Lines a-b of stream S skipped (duplicate of lines c-d of stream T, seen
    nx)``, with the input files when there are several."""
    where = f" of {fields['file']}" if named else ""
    source_where = f" of {fields['match_file']}" if named else ""
    start, end = fields["start"], fields["end"]
    lines = f"Line {start}" if start == end else f"Lines {start}-{end}"
    source = f"lines {fields['match_start']}-{fields['match_end']}"
    return (
        f"EXPLAIN: {lines}{where} (stream {fields['stream']}) skipped (duplicate of "
        f"{source}{source_where} (stream {fields['match_stream']}), seen {fields['count']}x)"
    )
