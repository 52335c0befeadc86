"""The stages of one run, built from its plan.

A run is a pipeline: records are framed (``records``), keyed (``keys``), filtered
(``filters``), decided (``matcher``), attributed (``attribution``), reported
(``report``) and saved (``library.save``). :class:`Stages` builds what the run's plan
(``plan``) names, once: the stages as :class:`Parts`, handed to the path that feeds the
run (``feeding``, ``streamby.path``), and the run's :class:`~seqdedup.run.ledger.Ledger`,
where that path books what it decides. :class:`seqdedup.api.Deduplicator` is the face
over both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from seqdedup.base.engine import SEED
from seqdedup.config.settings import Config
from seqdedup.engine.attribution import Attribution, Attributor, DecisionCount, make_attribution
from seqdedup.engine.choice import chosen_engine
from seqdedup.engine.matcher import LibraryWindows, Matcher, chunk_matcher, rule_matcher
from seqdedup.keys.filters import FilterList
from seqdedup.keys.maker import kernel_makes_keys, key_maker, shell_transform, text_digest
from seqdedup.run.attribution_thread import AttributionThread
from seqdedup.run.ledger import Ledger, RunObserver
from seqdedup.run.markers import Fields, PieceReport, marker_texts
from seqdedup.run.plan import Parts, RunPlan, plan_run
from seqdedup.run.stats import Stats, stats_document
from seqdedup.run.top import top_table

if TYPE_CHECKING:
    from seqdedup.config.groups import (
        FoldOptions,
        KeyOptions,
        LibraryOptions,
        MarkerOptions,
        RuleOptions,
    )
    from seqdedup.engine.matcher import WindowTarget
    from seqdedup.keys.maker import KeyMaker, TextDigest
    from seqdedup.library.load import LoadedLibrary
    from seqdedup.library.save import RunSaver
    from seqdedup.run.fold import Folder


class Stages:
    """Every stage of one run, built from the plan, and the run's ends (the next
    input, the end of input, saving)."""

    def __init__(
        self,
        config: Config,
        on_explain: Callable[[str], None] | None,
        observer: RunObserver | None = None,
        on_fold: Callable[[Fields], None] | None = None,
    ) -> None:
        self.config = config
        self.stats = stats = Stats()
        engine = chosen_engine()  # (once per run: the plan holds it)
        kernel = engine.kernel
        # (each feature's option group, made once: the stages and the paths read them)
        rule, key_options, markers = config.rule_options, config.key_options, config.marker_options
        folding, libraries = config.fold_options, config.library_options
        watched = observer is not None
        self.plan = plan = plan_run(  # (made first: from the configuration and the engine)
            config, engine, on_explain is not None, kernel_makes_keys(key_options), watched
        )
        filters = FilterList(config.filters, engine.literal_mask)
        keys = key_maker(key_options, kernel, SEED, shell_transform(key_options))
        self.engine = engine.name
        # Built in dependency order, each by its own module from its own options and
        # what it needs; the one thing added to stages after they are made: a loaded
        # library's windows (into the matcher, or the stream decider's) and its key
        # region (into attribution).
        matcher = _matcher(rule, key_options, plan, keys.kernel_normalize, markers.inverse, filters)
        # --stream-by: the loaded windows go to the stream decider (fingerprints, starts)
        library_windows = LibraryWindows(matcher)
        # (markers under key options compare a run's text with its occurrence's)
        digest = text_digest(key_options, kernel) if config.marks_variants else None
        attributor, top_counts = make_attributor(rule, matcher, plan, watched)
        target = library_windows if config.stream_split else matcher
        library = _library(config, libraries, keys, target, digest)
        if library is not None:
            attributor.set_library_keys(library.region)
        patterns = [each.pattern for each in filters.rules]
        report = _report(rule, markers, attributor, library, digest, patterns, on_explain, on_fold)
        top = top_table(config.top, rule.max_unique_sequences, bool(filters), top_counts, watched)
        self.saver = saver = _saver(libraries, rule, key_options, plan, library)
        self.folder = _folder(folding, rule, key_options, plan, report, keys, attributor, saver)
        self.parts = Parts(
            rule, key_options, markers, config.stream_options, folding, libraries,
            config.sequence_stats, plan, filters, keys, matcher, attributor, report, top,
            self.folder, saver, library, library_windows,
        )  # fmt: skip
        shown = keys.shown_record if keys.json is not None else None
        self.ledger = Ledger(
            stats, attributor, matcher, report, top, saver, shown, observer, bool(filters)
        )
        if library is not None:
            self.ledger.loaded(len(library.names))

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
        """End of input: the last input's counts, ``--top`` (its first records read
        again from named files where a run did not hold them) and the sequences."""
        self.ledger.finish(self.config.top)
        rows = self.stats.top_sequences
        if rows and any(row["first_record"] is None for row in rows):
            from seqdedup.base.inputs import named_chunks
            from seqdedup.run.top import fill_first_records

            only = self.config.inputs[0] if self.config.inputs else "-"  # (the API's: none)
            fill_first_records(rows, named_chunks, self.config.delimiter, only)

    def save(self, on_committed: Callable[[], None] | None = None) -> None:
        """Land what the run observed in its library (once; nothing without one);
        ``on_committed`` runs right after the commit (signals held across both)."""
        if self.saver is None:
            return
        self.ledger.saved(0)
        document = stats_document(self.stats, self.config)
        configuration = document.pop("configuration")
        assert isinstance(configuration, dict)
        saver, self.saver = self.saver, None
        self.ledger.saved(saver.commit(configuration, document, on_committed))

    def abort(self) -> None:
        """Save nothing to the library."""
        if self.saver is not None:
            self.saver.discard()
            self.saver = None


def _report(
    rule: RuleOptions,
    markers: MarkerOptions,
    attributor: Attribution,
    library: LoadedLibrary | None,
    digest: TextDigest | None,
    patterns: list[str],
    on_explain: Callable[[str], None] | None,
    on_fold: Callable[[Fields], None] | None,
) -> PieceReport:
    """Markers and explanations, from the markers' options (the texts they compare, with
    a loaded library's, where markers show variants)."""
    texts = marker_texts(rule, digest, library.texts if library is not None else None)
    return PieceReport(
        markers,
        rule.window_size,
        attributor.record_number,
        library.locate if library is not None else None,
        on_explain,
        patterns,
        texts,
        on_fold,
    )


def _library(
    config: Config,
    libraries: LibraryOptions,
    keys: KeyMaker,
    target: WindowTarget,
    digest: TextDigest | None,
) -> LoadedLibrary | None:
    """The libraries read (``-r``, and ``-l``'s own), their windows given to ``target``;
    each used only when its keys were made as this run's (``key_settings``)."""
    if not libraries.any:
        return None
    from seqdedup.config.settings import key_settings
    from seqdedup.library.load import load_libraries

    made = key_settings(config)
    return load_libraries(libraries, made, config.delimiter, keys, target, digest)


def _matcher(
    rule: RuleOptions,
    key_options: KeyOptions,
    plan: RunPlan,
    normalize: int,
    inverse: bool,
    filters: FilterList,
) -> Matcher:
    """The rule's matcher: the kernel's chunk path making the keys itself (``normalize``:
    its one pass), or the matcher records are pushed to."""
    if plan.feeding == "chunk":
        compiled = plan.compiled
        return chunk_matcher(rule, key_options, compiled, plan, normalize, inverse, bool(filters))
    return rule_matcher(
        rule,
        plan.engine,
        sources=plan.attribution != "count",
        settles_early=plan.settles_early,
        saves=plan.saves,
    )


def _saver(
    libraries: LibraryOptions,
    rule: RuleOptions,
    key_options: KeyOptions,
    plan: RunPlan,
    library: LoadedLibrary | None,
) -> RunSaver | None:
    """The library session of a run that saves one (``-l``)."""
    if not plan.saves:
        return None
    from seqdedup.library.save import run_saver

    delimiter, plain = key_options.delimiter, not key_options.keyed
    return run_saver(libraries, rule, delimiter, library, plan.engine, plain_keys=plain)


def _folder(
    folding: FoldOptions,
    rule: RuleOptions,
    key_options: KeyOptions,
    plan: RunPlan,
    report: PieceReport,
    keys: KeyMaker,
    attributor: Attribution,
    saver: RunSaver | None,
) -> Folder | None:
    """--fold's lines (a --stream-by run folds its stream runs itself)."""
    if not plan.folds:
        return None
    from seqdedup.run.fold import run_folder

    return run_folder(folding, rule, key_options, report, keys, attributor, saver, plan.engine)


TopCounts = Callable[[], dict[int, int]]


def make_attributor(
    rule: RuleOptions,
    matcher: Matcher,
    plan: RunPlan,
    watched: bool = False,
) -> tuple[Attribution, TopCounts | None]:
    """The attribution the plan names (docs/engine.md: what needs attribution): none
    (only the decisions counted), the kernel's (counted on a thread when only the
    statistics read it; ``watched``: every piece kept packed for the ledger to hand a
    report page's picture), or the Python engine's; and where the
    kernel counts ``--top`` itself (only --top reads pieces), its counts."""
    if plan.feeding == "stream":
        from seqdedup.engine.stream_decider import SequenceCounts, StreamCount

        return StreamCount(SequenceCounts(rule.max_unique_sequences)), None  # (its own)
    if plan.attribution == "count":
        return DecisionCount(), None  # (nothing reads a piece; a stream run: StreamCount)
    attributor = make_attribution(
        plan.engine,
        _window_matcher(matcher),
        rule,
        report=plan.pieces_read and not plan.top_only,
        top=plan.top_only,
        watched=watched,
        run_firsts=plan.fold_only,
    )
    if isinstance(attributor, Attributor):  # (the plan: "python")
        return attributor, None
    if plan.attribution == "thread":
        assert isinstance(matcher, plan.compiled.chunk_matcher)  # (a thread beside the kernel's)
        return AttributionThread(attributor, matcher), None
    return attributor, attributor.top_counts if attributor.counts_top else None


def _window_matcher(matcher: Matcher) -> Matcher:
    """The matcher attribution follows: under a minimum size, the window matcher beside
    the sized one."""
    from seqdedup.engine.sized import SizedMatcher

    return cast("Matcher", matcher.inner) if isinstance(matcher, SizedMatcher) else matcher
