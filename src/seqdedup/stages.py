"""The stages of one run, built from its plan.

A run is a pipeline: records are framed (``records``), keyed (``keys``), filtered
(``filters``), decided (``matcher``), attributed (``attribution``), reported
(``report``) and saved (``library.save``). :class:`Stages` builds what the run's plan
(``plan``) names, once: the stages as :class:`Parts`, handed to the path that feeds the
run (``feeding``, ``streamby.path``), and the run's :class:`~seqdedup.ledger.Ledger`,
where that path books what it decides. :class:`seqdedup.api.Deduplicator` is the face
over both.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from types import ModuleType
from typing import TYPE_CHECKING, NamedTuple

from seqdedup.attribution import (
    Attribution,
    Attributor,
    DecisionCount,
    KernelAttributor,
    SequenceTable,
)
from seqdedup.attribution_thread import AttributionThread
from seqdedup.config import Config, Duration
from seqdedup.engine import SEED
from seqdedup.engine import load as load_kernel
from seqdedup.filters import FilterList
from seqdedup.keys import KeyMaker, ShellTransform, key_maker
from seqdedup.ledger import Ledger
from seqdedup.matcher import LibraryWindows, Matcher, make_matcher
from seqdedup.plan import RunPlan, plan_run
from seqdedup.report import (
    MarkerTexts,
    PieceReport,
    Stats,
    TopSequences,
    marker_texts,
    stats_document,
)
from seqdedup.streamby.decider import SequenceCounts, StreamCount

if TYPE_CHECKING:
    from seqdedup._kernel import Matcher as ChunkMatcher
    from seqdedup.fold import Folder
    from seqdedup.library.load import LoadedLibrary
    from seqdedup.library.save import RunSaver
    from seqdedup.picture import RunPicture


class Parts(NamedTuple):
    """The stages one run is made of, built once from its plan and handed to the path
    that feeds it (immutable: a path books what it decides with the :class:`Ledger`)."""

    config: Config
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


class Stages:
    """Every stage of one run, built from the plan, and the run's ends (the next
    input, the end of input, saving)."""

    def __init__(
        self,
        config: Config,
        on_explain: Callable[[str], None] | None,
        picture: RunPicture | None = None,
    ) -> None:
        self.config = config
        self.stats = stats = Stats()
        filters = FilterList(config.filters)
        engine = load_kernel()
        self.engine = "python" if engine is None else "c"
        keys = key_maker(config, engine, SEED, shell_transform(config))
        kernel_keys = keys.plain or bool(keys.kernel_normalize)
        self.plan = plan = plan_run(
            config, engine is not None, on_explain is not None, kernel_keys, picture is not None
        )
        self.chunks = chunk_matcher(config, engine, plan, keys)
        matcher: Matcher = self.chunks or make_matcher(
            config.window_size, config.max_history, engine, early=plan.settles_early, seed=SEED
        )
        attributor = make_attributor(config, engine, matcher, plan, picture)
        # --stream-by: the loaded windows go to the stream decider (fingerprints, starts)
        library_windows = LibraryWindows(matcher)
        texts = marker_texts(config, engine)
        library = load_library(
            config, keys, library_windows if config.stream_split else matcher, texts
        )
        if library is not None:
            stats.library_loaded = len(library.names)
            attributor.set_library_keys(library.region)
        report = PieceReport(
            config,
            attributor.record_number,
            library.locate if library is not None else None,
            on_explain,
            [rule.pattern for rule in filters.rules],
            texts,
        )
        top = make_top(config, attributor, picture)
        self.saver = saver = make_saver(config, plan, library, matcher)
        # (a --stream-by run folds its stream runs itself: streamby.path)
        self.folder = make_folder(config, report, keys, attributor, saver) if plan.folds else None
        self.parts = Parts(
            config,
            filters,
            keys,
            matcher,
            attributor,
            report,
            top,
            self.folder,
            saver,
            library,
            library_windows,
        )
        shown = keys.shown_record if keys.json is not None else None
        self.ledger = Ledger(stats, attributor, matcher, report, top, saver, shown, picture)

    @property
    def last_record_written(self) -> bool:
        """Whether the output released so far ends with a record (not a marker)."""
        return self.ledger.last_record_written

    def begin_input(self) -> None:
        """Everything of the input that ended is released: start the next one."""
        parts, ledger = self.parts, self.ledger
        ledger.end_input()
        parts.matcher.new_input()
        ledger.note_pieces(parts.attributor.new_input())  # (nothing is open any more)
        parts.report.inputs.begin(ledger.released + 1)
        if self.saver is not None:
            self.saver.new_input(parts.attributor.decided)

    def finish(self) -> None:
        """End of input: the last input's counts, ``--top`` and the sequences."""
        self.ledger.end_input()
        top = self.parts.top
        if top is not None and self.config.top:
            self.stats.top_sequences = top.top(self.config.top)
        self.stats.unique_sequences = self.parts.attributor.identified

    def save(self, on_committed: Callable[[], None] | None = None) -> None:
        """Land what the run observed in its library (once; nothing without one);
        ``on_committed`` runs right after the commit (signals held across both)."""
        if self.saver is None:
            return
        self.stats.library_saved = 0
        document = stats_document(self.stats, self.config)
        configuration = document.pop("configuration")
        assert isinstance(configuration, dict)
        saver, self.saver = self.saver, None
        self.stats.library_saved = saver.commit(configuration, document, on_committed)

    def abort(self) -> None:
        """Save nothing to the library."""
        if self.saver is not None:
            self.saver.discard()
            self.saver = None


def shell_transform(config: Config) -> ShellTransform | None:
    """The run's ``--hash-transform`` command, when it has one."""
    if not config.hash_transform:
        return None
    return ShellTransform(config.hash_transform, config.transform_timeout)


def load_library(
    config: Config,
    keys: KeyMaker,
    target: Matcher | LibraryWindows,
    texts: MarkerTexts | None,
) -> LoadedLibrary | None:
    """The libraries the run reads (``-r``, ``-l``), their windows given to ``target``
    (and their records' text digests to ``texts``, for markers)."""
    if not (config.read_sequences or config.library_dir is not None):
        return None
    from seqdedup.library.load import load_libraries

    library = load_libraries(config, keys, target, texts.digest if texts else None)
    if library is not None and texts is not None:
        texts.library = library.texts
    return library


def make_saver(
    config: Config, plan: RunPlan, library: LoadedLibrary | None, matcher: Matcher
) -> RunSaver | None:
    """The library session of a run that saves one (``-l``)."""
    if not plan.saves:
        return None
    assert config.library_dir is not None
    from seqdedup.library.save import RunSaver

    matcher.new_material = []  # (the matcher notes first-seen windows from now on)
    return RunSaver(
        config.library_dir,
        config.window_size,
        library,
        whole_runs=bool(config.read_sequences),
        delimiter=config.delimiter,
        kernel=load_kernel(),
    )


def make_top(
    config: Config, attributor: Attribution, picture: RunPicture | None
) -> TopSequences | None:
    """``--top``'s table (counted by the kernel's attribution when it counts it), also
    for a report page (whose ``picture`` reads its ranking at the end)."""
    if not (config.top or picture is not None):
        return None
    top = _top_table(config, attributor)
    if picture is not None:
        picture.ranking = top
    return top


def _top_table(config: Config, attributor: Attribution) -> TopSequences:
    # (with filters a source's record number is read while attribution holds it)
    lazy = not config.filters
    if isinstance(attributor, KernelAttributor) and attributor.counts_top:
        return TopSequences(config.max_unique_sequences, attributor.top_counts, lazy)
    return TopSequences(config.max_unique_sequences, lazy_sources=lazy)


def make_folder(
    config: Config,
    report: PieceReport,
    keys: KeyMaker,
    attributor: Attribution,
    saver: RunSaver | None,
) -> Folder:
    """``--fold``'s summary lines, over the run's report, keys and attribution (and its
    library, which holds each folded sequence under its id)."""
    from seqdedup.fold import Folder, TimedFolder

    assert isinstance(attributor, Attributor | KernelAttributor)  # (the plan's: folds)
    kind = TimedFolder if isinstance(config.fold_every, Duration) else Folder
    return kind(
        config,
        report,
        keys,
        lambda: attributor.open_source,
        saver.add_sequence if saver is not None else None,
        load_kernel(),
    )


def chunk_matcher(
    config: Config, engine: ModuleType | None, plan: RunPlan, keys: KeyMaker
) -> ChunkMatcher | None:
    """The kernel's chunk path (raw bytes in, kept bytes out, no Python object per
    record), for a run the plan feeds so (see :func:`seqdedup.plan.plan_run`; only
    with the kernel); None for any other run."""
    if engine is None or plan.feeding != "chunk":
        return None
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
    config: Config,
    engine: ModuleType | None,
    matcher: Matcher,
    plan: RunPlan,
    picture: RunPicture | None = None,
) -> Attribution:
    """The attribution the plan names (docs/engine.md: what needs attribution): none
    (only the decisions counted), the kernel's (counted on a thread when only the
    statistics read it; every piece handed packed to a report page's ``picture``), or
    the Python engine's (whose pieces the ledger hands the picture)."""
    if plan.feeding == "stream":
        return StreamCount(SequenceCounts(config.max_unique_sequences))  # (its own decider's)
    if plan.attribution == "count":
        return DecisionCount()  # (nothing reads a piece; a stream run: StreamCount)
    if plan.attribution in ("kernel", "thread"):
        assert engine is not None  # (the plan: the kernel's attribution with the kernel)
        attributor = KernelAttributor(
            engine,
            matcher,
            config.max_candidates,
            config.max_history,
            config.max_unique_sequences,
            SEED,
            plan.pieces_read and not plan.top_only,
            plan.top_only,
            watched=picture is not None,
        )
        if picture is not None:
            numbers = attributor.record_number if config.filters else None
            attributor.watch(partial(picture.add_packed, record_number=numbers))
        if plan.attribution == "kernel":
            return attributor
        assert isinstance(matcher, engine.Matcher)  # (the plan: a thread beside the kernel's)
        return AttributionThread(attributor, matcher)
    return Attributor(
        config.window_size,
        SequenceTable(config.max_unique_sequences),
        matcher.source,
        config.max_candidates,
        config.max_history,
        matcher.fingerprints,
    )
