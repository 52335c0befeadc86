"""A run planned once: which feeding path, which attribution, whether records settle
early, what the kernel hands over per run, whether the run saves a library and folds.

:func:`plan_run` decides all of it from the :class:`Config` and three facts about the
run's parts (whether the kernel is there, whether explanations are asked for, whether
the kernel makes the keys itself); :class:`seqdedup.run.stages.Stages` builds what the plan
names. docs/engine.md ("What needs attribution", "The kernel's chunk path") says why;
``tests/test_plan.py`` holds the table of option combinations and their plans.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, NamedTuple

from seqdedup.base.cengine import CEngine
from seqdedup.base.engine import Engine
from seqdedup.config.settings import Config
from seqdedup.engine.choice import compiled

if TYPE_CHECKING:
    from seqdedup.config.groups import (
        FoldOptions,
        KeyOptions,
        LibraryOptions,
        MarkerOptions,
        RuleOptions,
        StreamOptions,
    )
    from seqdedup.engine.attribution import Attribution
    from seqdedup.engine.matcher import LibraryWindows, Matcher
    from seqdedup.keys.filters import FilterList
    from seqdedup.keys.maker import KeyMaker
    from seqdedup.library.load import LoadedLibrary
    from seqdedup.library.save import RunSaver
    from seqdedup.run.fold import Folder
    from seqdedup.run.markers import PieceReport
    from seqdedup.run.top import TopSequences

# "chunk": the kernel's chunk path; "record": records through Python stages; "stream":
# --stream-by's path
Feeding = Literal["chunk", "record", "stream"]
# "count": only the decisions counted; "thread": the kernel's, counted on a second core;
# "kernel"; "python"
AttributionKind = Literal["count", "thread", "kernel", "python"]


class RunPlan(NamedTuple):
    """What one run is made of (see the module docstring)."""

    engine: Engine  # the run's engine, chosen once for it
    feeding: Feeding
    attribution: AttributionKind
    settles_early: bool  # records written once certain, before their window completes
    run_heads: int  # what the chunk path hands over per run: 0 nothing, 1 its first
    # record (--top), 2 its records (--fold, saving)
    pieces_read: bool  # something reads each piece (markers, lines, --top, saving)
    top_only: bool  # --top is all that reads pieces: the kernel counts the rest
    fold_only: bool  # the fold is all that reads pieces: only each run's first
    saves: bool  # a library is saved
    folds: bool  # summary lines by the run's folder (--stream-by folds its own)
    ordered: bool  # markers or explanations: nothing is released past an open piece
    reported: bool  # --stream-by: each run's source and count read as it is written
    stream_decider: Literal["kernel", "python"] | None  # --stream-by's decider

    @property
    def compiled(self) -> CEngine:
        """The C engine, for a stage the plan builds only with it."""
        found = compiled(self.engine)
        if found is None:
            raise AssertionError("the plan builds this stage only with the kernel")
        return found


def plan_run(
    config: Config,
    engine: Engine,
    explaining: bool,
    kernel_keys: bool,
    picturing: bool = False,
) -> RunPlan:
    """The plan of a run of ``config`` on ``engine`` (the chunk path, the kernel's
    attribution and stream matcher only with the compiled one); ``explaining``,
    explanations are asked for; ``kernel_keys``, the kernel makes the keys itself (no
    transform, JSON keys or masks it cannot do); ``picturing``, a report page reads every
    piece (and ranks the sequences as ``--top`` does)."""
    compiled = engine.kernel is not None
    filtering = bool(config.filters)
    settles = config.max_history is not None and not config.annotate and not explaining
    # What reads each piece: markers, explanations, a library saved, --top (or a report
    # page's picture, which takes the kernel's pieces packed, beside --top's ranking),
    # fold lines (only each run's first piece)
    reading = config.annotate or explaining or config.library_dir is not None
    ranking = bool(config.top or picturing)
    pieces_read = reading or ranking or config.fold
    top_only = ranking and not (reading or config.fold)
    ordered = config.annotate or explaining
    reported = ordered or bool(config.top) or picturing or config.fold
    sized_chunks = _sized_on_chunks(config, pieces_read, filtering)
    return RunPlan(
        engine=engine,
        feeding=_feeding(
            config, compiled, explaining, kernel_keys, settles, filtering, sized_chunks
        ),
        attribution=_attribution(config, compiled, pieces_read),
        settles_early=settles,
        run_heads=(
            2
            if config.fold or config.library_dir is not None
            else 1
            if config.top or picturing
            else 0
        ),
        pieces_read=pieces_read,
        top_only=top_only,
        fold_only=config.fold and not (reading or ranking),
        saves=config.library_dir is not None,
        folds=config.fold and not config.stream_split,
        ordered=ordered,
        reported=reported,
        stream_decider=(
            _stream_decider(config, compiled, reported, explaining or picturing)
            if config.stream_split
            else None
        ),
    )


def _sized_on_chunks(config: Config, pieces_read: bool, filtering: bool) -> bool:
    """Whether a minimum size (in bytes) may take the kernel's chunk path, its decider
    attached to the chunk matcher: nothing reads a piece or counts the sequences (the
    decider names no source attribution could follow), no library is read, no filters,
    no ``--inverse``."""
    return not (
        pieces_read
        or config.sequence_stats
        or config.size_unit != "bytes"
        or config.read_sequences
        or config.inverse
        or filtering
    )


def _stream_decider(
    config: Config, compiled: bool, reported: bool, explaining: bool
) -> Literal["kernel", "python"]:
    """The kernel's stream matcher where it serves: nothing read per run, or markers and
    ``--top`` and fold lines made from the runs it hands over (with an unlimited
    history: each record's stream is kept for the sources they name); the Python
    decider for explanations, a report page, filters, ``--inverse``, texts compared,
    libraries, per-stream histories and a minimum size."""
    libraries = config.library_dir is not None or bool(config.read_sequences)
    # (a minimum size: the Python decider's stretches, on either engine)
    if not compiled or libraries or config.per_stream or config.min_size:
        return "python"
    if reported and (
        explaining
        or config.filters
        or config.inverse
        or config.marks_variants
        or config.max_history is not None
    ):
        return "python"
    return "kernel"


def _feeding(
    config: Config,
    compiled: bool,
    explaining: bool,
    kernel_keys: bool,
    settles: bool,
    filtering: bool,
    sized_chunks: bool,
) -> Feeding:
    """The kernel's chunk path serves every run that needs nothing per record from
    Python: no transform, JSON keys, masks or explanations, nor library saving with
    filters or libraries read (`-r`), nor markers with --inverse, filters or key options
    (a marker compares its run's text with its occurrence's), nor summary
    lines with filters or records settled early (a --normalize pass it does itself;
    markers and summary lines it places by the runs; filters classify each chunk's
    records in one pass); a minimum size where ``sized_chunks`` (nothing reads a source:
    its decider is attached to the chunk matcher)."""
    if config.stream_split:
        return "stream"
    if (
        not compiled
        or (config.min_size and not sized_chunks)
        or (config.fold and (filtering or settles))
        or not kernel_keys
        or (config.annotate and (config.inverse or filtering))
        or config.marks_variants
        or explaining
        or (config.library_dir is not None and (filtering or bool(config.read_sequences)))
    ):
        return "record"
    return "chunk"


def _attribution(config: Config, compiled: bool, pieces_read: bool) -> AttributionKind:
    """Attribution only where something reads it, in the kernel when it runs; counted
    on a thread when only the statistics read it (the number of sequences)."""
    if config.stream_split or not (pieces_read or config.sequence_stats):
        return "count"  # (a --stream-by run counts its own)
    if not compiled:
        return "python"
    # (under a minimum size the kernel's matcher is fed in step with the decider)
    return "kernel" if pieces_read or config.min_size else "thread"


class Parts(NamedTuple):
    """The stages one run is made of, built once from its plan and handed to the path
    that feeds it (immutable: a path books what it decides with the :class:`Ledger`),
    with the option groups the paths read (never the whole configuration)."""

    rule: RuleOptions
    key_options: KeyOptions
    markers: MarkerOptions
    streams: StreamOptions
    fold_options: FoldOptions
    libraries: LibraryOptions
    sequence_stats: bool  # the statistics count the distinct sequences
    plan: RunPlan
    filters: FilterList
    keys: KeyMaker
    matcher: Matcher
    attributor: Attribution
    report: PieceReport
    top: TopSequences | None
    folder: Folder | None
    saver: RunSaver | None
    library: LoadedLibrary | None
    library_windows: LibraryWindows
