"""A run assembled: its stages and the paths that feed them (the API's
:class:`~seqdedup.api.Deduplicator` is a face over this), and a trial run that counts
what a configuration removes (``--suggest-window`` and the hints ask it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from seqdedup.run.feeding import BytePath, ChunkPath, RecordPath
from seqdedup.run.stages import Stages

if TYPE_CHECKING:
    from seqdedup.config.settings import Config
    from seqdedup.run.stream_kernelpath import KernelStreamPath
    from seqdedup.run.stream_path import StreamPath


def count_removed(config: Config, records: list[bytes]) -> int:
    """How many of ``records`` a run of ``config`` removes (a trial: see
    :meth:`Config.quiet`)."""
    stages = Stages(config, None)
    _, path, _ = feeding_paths(stages)
    path.feed(records)
    path.end_records()
    stages.finish()
    return stages.stats.skipped


def feeding_paths(
    stages: Stages,
) -> tuple[StreamPath | KernelStreamPath | None, RecordPath, BytePath]:
    """The paths that feed a run, each given its parts and ledger: the stream path
    (``--stream-by``, else None), the path records take, and the one raw bytes take
    (the kernel's chunk path where the plan says so)."""
    streams = None
    plan = stages.plan
    if plan.feeding == "stream":
        from seqdedup.run.stream_kernelpath import stream_path

        streams = stream_path(stages.parts, stages.ledger)
    records = streams or RecordPath(stages.parts, stages.ledger, plan.ordered)
    if plan.feeding != "chunk":
        return streams, records, records
    chunks = stages.parts.matcher
    if stages.parts.rule.min_size:  # (its decider attached to a chunk matcher)
        from seqdedup.engine.sized import SizedMatcher  # (only such a run loads it)

        assert isinstance(chunks, SizedMatcher) and chunks.chunks is not None
        chunks = chunks.chunks
    assert isinstance(chunks, plan.compiled.chunk_matcher)  # (the plan's chunk path)
    return streams, records, ChunkPath(stages.parts, stages.ledger, chunks)
