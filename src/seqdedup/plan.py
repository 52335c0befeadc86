"""A run planned once: which feeding path, which attribution, whether records settle
early, what the kernel hands over per run, whether the run saves a library and folds.

:func:`plan_run` decides all of it from the :class:`Config` and three facts about the
run's parts (whether the kernel is there, whether explanations are asked for, whether
the kernel makes the keys itself); :class:`seqdedup.stages.Stages` builds what the plan
names. docs/engine.md ("What needs attribution", "The kernel's chunk path") says why;
``tests/test_plan.py`` holds the table of option combinations and their plans.
"""

from __future__ import annotations

from typing import NamedTuple

from seqdedup.config import Config


class RunPlan(NamedTuple):
    """What one run is made of (see the module docstring)."""

    feeding: str  # "chunk": the kernel's chunk path; "record": records through Python
    # stages; "stream": --stream-by's path
    attribution: str  # "count": only the decisions counted; "thread": the kernel's,
    # counted on a second core; "kernel"; "python"
    settles_early: bool  # records written once certain, before their window completes
    run_heads: int  # what the chunk path hands over per run: 0 nothing, 1 its first
    # record (--top), 2 its records (--fold, saving)
    pieces_read: bool  # something reads each piece (markers, lines, --top, saving)
    top_only: bool  # --top is all that reads pieces: the kernel counts the rest
    saves: bool  # a library is saved
    folds: bool  # summary lines by the run's folder (--stream-by folds its own)


def plan_run(
    config: Config, kernel: bool, explaining: bool, kernel_keys: bool, picturing: bool = False
) -> RunPlan:
    """The plan of a run of ``config``: ``kernel``, the compiled kernel runs;
    ``explaining``, explanations are asked for; ``kernel_keys``, the kernel makes the
    keys itself (no transform, JSON keys or masks it cannot do); ``picturing``, a
    report page reads every piece (and ranks the sequences as ``--top`` does)."""
    filtering = bool(config.filters)
    settles = config.max_history is not None and not config.annotate and not explaining
    pieces_read = (
        config.annotate
        or config.fold
        or explaining
        or bool(config.top)
        or picturing
        or config.library_dir is not None
    )
    # (a report page's picture takes the kernel's pieces packed, beside --top's ranking)
    top_only = bool(config.top or picturing) and not (
        config.annotate or config.fold or explaining or config.library_dir is not None
    )
    return RunPlan(
        feeding=_feeding(config, kernel, explaining, kernel_keys, settles, filtering),
        attribution=_attribution(config, kernel, pieces_read),
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
        saves=config.library_dir is not None,
        folds=config.fold and not config.stream_split,
    )


def _feeding(
    config: Config,
    kernel: bool,
    explaining: bool,
    kernel_keys: bool,
    settles: bool,
    filtering: bool,
) -> str:
    """The kernel's chunk path serves every run that needs nothing per record from
    Python: no transform, JSON keys, masks or explanations, nor library saving with
    filters or libraries read (`-r`), nor markers with --inverse, filters or key options
    (a marker compares its run's text with its occurrence's), nor summary
    lines with filters or records settled early (a --normalize pass it does itself;
    markers and summary lines it places by the runs; filters classify each chunk's
    records in one pass)."""
    if config.stream_split:
        return "stream"
    if (
        not kernel
        or (config.fold and (filtering or settles))
        or not kernel_keys
        or (config.annotate and (config.inverse or filtering))
        or config.marks_variants
        or explaining
        or (config.library_dir is not None and (filtering or bool(config.read_sequences)))
    ):
        return "record"
    return "chunk"


def _attribution(config: Config, kernel: bool, pieces_read: bool) -> str:
    """Attribution only where something reads it, in the kernel when it runs; counted
    on a thread when only the statistics read it (the number of sequences)."""
    if config.stream_split or not (pieces_read or config.sequence_stats):
        return "count"  # (a --stream-by run counts its own)
    if not kernel:
        return "python"
    return "kernel" if pieces_read else "thread"
