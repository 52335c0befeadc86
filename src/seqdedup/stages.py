"""The stages of one run, made from its :class:`Config`, and the accounting they share.

A run is a pipeline: records are framed (``records``), keyed (``keys``), filtered
(``filters``), decided (``matcher``), attributed (``attribution``), reported
(``report``) and saved (``library.save``). :class:`Stages` makes each stage once, chooses
between the kernel and the Python engine and between attributing and only counting,
and keeps what every feeding path books: the statistics, the record numbers, the
streams, ``--top`` and the library session. The two feeding paths (``feeding``) hand
their decisions to it; :class:`seqdedup.api.Deduplicator` is the face over both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from seqdedup.attribution import (
    Attributor,
    DecisionCount,
    KernelAttributor,
    RunHeads,
    SequenceTable,
)
from seqdedup.attribution_thread import AttributionThread
from seqdedup.config import Config
from seqdedup.engine import SEED
from seqdedup.engine import load as load_kernel
from seqdedup.filters import FilterList
from seqdedup.keys import KeyMaker, ShellTransform, key_maker
from seqdedup.matcher import Matcher, make_matcher
from seqdedup.plan import RunPlan, plan_run
from seqdedup.report import PieceReport, Stats, TopSequences, stats_document
from seqdedup.runs import runs_of
from seqdedup.streamby.decider import SequenceCounts, StreamCount

if TYPE_CHECKING:
    from seqdedup._kernel import Matcher as ChunkMatcher
    from seqdedup.attribution import Piece
    from seqdedup.fold import Folder
    from seqdedup.library.load import LoadedLibrary
    from seqdedup.library.save import RunSaver


class Decided(NamedTuple):
    """What one step of the record path decided, handed on as one object: tracked
    records ``first`` .. ``first + len(keep) - 1``, whether each is kept, their bytes
    (for ``--top`` and the library; empty when neither reads them), which of them
    first-seen windows cover (with a library saved) and the pieces attribution closed.
    (A NamedTuple: dataclasses would cost every start-up 12 ms of imports.)"""

    first: int
    keep: list[bool]
    records: list[bytes]
    new_material: list[bool] | None
    pieces: list[Piece]


class Stages:
    """Every stage of one run, and the counts they share."""

    def __init__(self, config: Config, on_explain: Callable[[str], None] | None) -> None:
        self.config = config
        self.stats = Stats()
        self.filters = FilterList(config.filters)
        transform = (
            ShellTransform(config.hash_transform, config.transform_timeout)
            if config.hash_transform
            else None
        )
        engine = load_kernel()
        self.engine = "python" if engine is None else "c"
        self.keys = key_maker(config, engine, SEED, transform)
        kernel_keys = self.keys.plain or bool(self.keys.kernel_normalize)
        self.plan = plan = plan_run(config, engine is not None, on_explain is not None, kernel_keys)
        self.chunks = (
            chunk_matcher(config, engine, plan, self.keys) if plan.feeding == "chunk" else None
        )
        self.matcher: Matcher = self.chunks or make_matcher(
            config.window_size, config.max_history, engine, early=plan.settles_early, seed=SEED
        )
        self.attributor = (
            StreamCount(SequenceCounts(config.max_unique_sequences))  # (the stream path's)
            if plan.feeding == "stream"
            else make_attributor(config, engine, self.matcher, plan)
        )
        # --stream-by: the loaded windows go to the stream decider (fingerprints, starts)
        self.library_windows = LibraryWindows(self.matcher)
        self.library = self._load_libraries()
        if self.library is not None:
            self.stats.library_loaded = len(self.library.names)
            self.attributor.set_library_keys(self.library.region)
        self.report = PieceReport(
            config,
            self.attributor.record_number,
            self.library.locate if self.library is not None else None,
            on_explain,
            [rule.pattern for rule in self.filters.rules],
        )
        self.top = make_top(config, self.attributor)
        self.run_heads = RunHeads()  # with --top: each duplicate run's first record
        self.saver: RunSaver | None = None
        if plan.saves:
            assert config.library_dir is not None
            from seqdedup.library.save import RunSaver

            self.saver = RunSaver(
                config.library_dir,
                config.window_size,
                self.library,
                whole_runs=bool(config.read_sequences),
            )
            self.matcher.new_material = []
        # (a --stream-by run folds its stream runs itself: streamby.path)
        self.folder = make_folder(self) if plan.folds else None
        self.released = 0  # records released so far (record numbers are 1-based)
        # Whether the last thing released was the last released record (not a marker);
        # after the end of input this tells whether its final record ends the output.
        self.last_record_written = False
        self._stream_counted = (0, 0, 0)  # the counts at the start of the current stream

    def _load_libraries(self) -> LoadedLibrary | None:
        config = self.config
        if not (config.read_sequences or config.library_dir is not None):
            return None
        from seqdedup.library.load import load_libraries

        target = self.library_windows if config.stream_split else self.matcher
        return load_libraries(config, self.keys, target)

    # -- what every path books --------------------------------------------------------
    def written_last(self, record: bool) -> None:
        """What the output released last is: a record (True) or a marker."""
        self.last_record_written = record

    def count(self, released: int, kept: int) -> None:
        """Statistics for ``released`` more records, ``kept`` of them kept (normal mode)."""
        stats = self.stats
        stats.total += released
        stats.emitted += kept
        stats.skipped += released - kept
        if not isinstance(self.attributor, AttributionThread):  # (that one: at the end)
            stats.unique_sequences = self.attributor.identified
        self.released += released

    def note_pieces(self, pieces: list[Piece]) -> None:
        """``--top``: count each closed piece, with its first record when it starts a
        duplicate run (the same on the kernel's chunk path and the record path)."""
        if self.top is None:
            return
        heads, fields, top = self.run_heads, self.report.source_of, self.top
        # (when the kernel counts, the pieces here are each sequence's first)
        observe = top.first_seen if top.counted_elsewhere else top.observe
        named = self.report.streams.named
        for piece in pieces:
            observe(piece, fields, heads.get(piece.start), named)
        heads.trim()

    def take_new_material(self) -> list[bool] | None:
        """With a library saved: which records decided since the last call first-seen
        windows cover (the matcher notes them as it decides)."""
        if self.saver is None:
            return None
        taken = self.matcher.new_material
        self.matcher.new_material = []
        return taken

    def book(self, decided: Decided) -> None:
        """The record path's decisions, for ``--top`` and the library."""
        if self.top is not None:
            base = decided.first
            heads = [
                (base + a, base + b, decided.records[a]) for a, b in runs_of(decided.keep, False)
            ]
            self.run_heads.add(base, len(decided.keep), heads)
            self.note_pieces(decided.pieces)
        if self.saver is not None:
            assert decided.new_material is not None
            self.saver.observe(
                decided.records, decided.keep, decided.new_material, decided.first, decided.pieces
            )

    def markers(
        self, first: int, keep: list[bool], records: list[bytes], pieces: list[Piece], final: bool
    ) -> list[tuple[int, bytes]]:
        """The record path's markers (``--annotate``) or summary lines (``--fold``) now
        due, each with the tracked record it follows."""
        if self.report.annotation is not None:
            return [(piece.end, self.report.marker(piece)) for piece in pieces]
        if self.folder is None:
            return []
        lines = self.folder.add(first, keep, records, pieces)
        return lines + self.folder.end() if final else lines

    def lines(self, placed: list[tuple[int, bytes]]) -> list[bytes]:
        """Summary lines written on their own (not placed among records)."""
        if placed:
            self.last_record_written = False  # a line ends this output
        return [text for _, text in placed]

    def begin_stream(self) -> None:
        """Everything of the stream that ended is released: start the next one."""
        self._note_stream()
        self.matcher.new_stream()
        self.note_pieces(self.attributor.new_stream())  # (nothing is open any more)
        self.run_heads = RunHeads()
        self.report.streams.begin(self.released + 1)
        if self.saver is not None:
            self.saver.new_stream(self.attributor.decided)

    def _note_stream(self) -> None:
        """With several inputs, the counts of the stream that ended."""
        streams = self.report.streams
        if not streams.named:
            return
        stats = self.stats
        total, emitted, skipped = self._stream_counted
        if stats.files is None:
            stats.files = []
        stats.files.append(
            {
                "name": streams.name(len(stats.files)),
                "lines": {
                    "total": stats.total - total,
                    "emitted": stats.emitted - emitted,
                    "skipped": stats.skipped - skipped,
                },
            }
        )
        self._stream_counted = (stats.total, stats.emitted, stats.skipped)

    def finish(self) -> None:
        """End of input: the last stream's counts, ``--top`` and the sequences."""
        self._note_stream()
        if self.top is not None:
            self.stats.top_sequences = self.top.top(self.config.top)
        self.stats.unique_sequences = self.attributor.identified

    def save(self) -> None:
        """Land what the run observed in its library (once; nothing without one)."""
        if self.saver is None:
            return
        self.stats.library_saved = 0
        document = stats_document(self.stats, self.config)
        configuration = document.pop("configuration")
        assert isinstance(configuration, dict)
        saver, self.saver = self.saver, None
        self.stats.library_saved = saver.commit(configuration, document)

    def abort(self) -> None:
        """Save nothing to the library."""
        if self.saver is not None:
            self.saver.discard()
            self.saver = None


class LibraryWindows:
    """Where a stream run's loaded library windows wait for its decider: what
    ``load_libraries`` needs of a matcher, keeping the windows it is given."""

    def __init__(self, matcher: Matcher) -> None:
        self.window_size = matcher.window_size
        self.fingerprints = matcher.fingerprints  # (the same polynomial per stream)
        self.fps: Any = None
        self.starts: Any = None
        self.region: Any = None

    def add_library_windows(self, fps: Any, starts: Any, region: Any = None) -> None:
        self.fps, self.starts, self.region = fps, starts, region


def make_top(
    config: Config, attributor: Attributor | KernelAttributor | AttributionThread | DecisionCount
) -> TopSequences | None:
    """``--top``'s table (counted by the kernel's attribution when it counts it)."""
    if not config.top:
        return None
    if isinstance(attributor, KernelAttributor) and attributor.counts_top:
        return TopSequences(config.max_unique_sequences, attributor.top_counts)
    return TopSequences(config.max_unique_sequences)


def make_folder(stages: Stages) -> Folder:
    """``--fold``'s summary lines, over the run's report, keys and attribution (and its
    library, which holds each folded sequence under its id)."""
    from seqdedup.fold import Folder

    attributor = stages.attributor
    return Folder(
        stages.config,
        stages.report,
        stages.keys,
        lambda: attributor.open_source,  # type: ignore[union-attr]
        stages.saver.add_sequence if stages.saver is not None else None,
        load_kernel(),
    )


def chunk_matcher(config: Config, engine: Any, plan: RunPlan, keys: KeyMaker) -> ChunkMatcher:
    """The kernel's chunk path (raw bytes in, kept bytes out, no Python object per
    record), for a run the plan feeds so (see :func:`seqdedup.plan.plan_run`)."""
    matcher: ChunkMatcher = engine.Matcher(
        config.window_size,
        config.max_history,
        seed=SEED,
        delimiter=config.delimiter,
        skip_chars=config.skip_chars,
        skip_fields=config.skip_fields,
        byte_mode=config.byte_mode,
        inverse=config.inverse,
        run_heads=plan.run_heads,
        normalize=keys.kernel_normalize,
        filtered=bool(config.filters),
        early=plan.settles_early,
    )
    return matcher


def make_attributor(
    config: Config, engine: object, matcher: Matcher, plan: RunPlan
) -> Attributor | KernelAttributor | AttributionThread | DecisionCount:
    """The attribution the plan names (docs/engine.md: what needs attribution): none
    (only the decisions counted), the kernel's (counted on a thread when only the
    statistics read it), or the Python engine's."""
    if plan.attribution == "count":
        return DecisionCount()  # (nothing reads a piece; a stream run: StreamCount)
    if plan.attribution in ("kernel", "thread"):
        attributor = KernelAttributor(
            engine,
            matcher,
            config.max_candidates,
            config.max_history,
            config.max_unique_sequences,
            SEED,
            plan.pieces_read and not plan.top_only,
            plan.top_only,
        )
        return (
            attributor if plan.attribution == "kernel" else AttributionThread(attributor, matcher)
        )
    return Attributor(
        config.window_size,
        SequenceTable(config.max_unique_sequences),
        matcher.source,
        config.max_candidates,
        config.max_history,
        matcher.fingerprints,
    )
