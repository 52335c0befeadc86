"""A run that nothing reads attribution from (the command line's -q with no markers,
explanations, --top or library) skips attribution: the same output, exactly the rule."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup import Config, Deduplicator
from seqdedup.api import process_inputs
from seqdedup.config.groups import FilterRule
from seqdedup.engine.attribution import Attributor, DecisionCount, KernelAttributor
from seqdedup.run.attribution_thread import AttributionThread

from conftest import examples
from oracle import skipped_flags_streams

streams_strategy = st.integers(1, 4).flatmap(
    lambda k: st.lists(st.lists(st.sampled_from("abcd"[:k]), max_size=60), min_size=1, max_size=4)
)


def run(streams, **options):
    sources = [io.BytesIO(b"".join(k.encode() + b"\n" for k in keys)) for keys in streams]
    sink = io.BytesIO()
    stats = process_inputs(sources, sink, Config(**options))
    return sink.getvalue(), stats


@pytest.mark.usefixtures("engine")
@settings(max_examples=examples(150), deadline=None)
@given(
    streams=streams_strategy,
    window=st.integers(1, 4),
    history=st.sampled_from([None, 100]),
    inverse=st.booleans(),
)
def test_the_same_output_as_the_rule_without_attribution(streams, window, history, inverse):
    options = {"window_size": window, "max_history": history, "inverse": inverse}
    out, stats = run(streams, sequence_stats=False, **options)
    attributed, full_stats = run(streams, **options)
    assert out == attributed
    flags = skipped_flags_streams(streams, window, history)
    records = [k for keys in streams for k in keys]
    want = [r for r, skip in zip(records, flags, strict=True) if skip == inverse]
    assert out == b"".join(r.encode() + b"\n" for r in want)
    assert (stats.total, stats.emitted, stats.skipped) == (
        full_stats.total,
        full_stats.emitted,
        full_stats.skipped,
    )
    assert stats.unique_sequences == 0  # not counted: nobody asked


@pytest.mark.usefixtures("engine")
def test_with_filters_the_record_path_is_unattributed_too():
    records = [b"a", b"x1", b"b", b"a", b"x2", b"b", b"c"]
    options = {"window_size": 2, "filters": (FilterRule("bypass", "^x"),)}
    quiet = Deduplicator(sequence_stats=False, **options)
    assert isinstance(quiet._stages.parts.attributor, DecisionCount)
    assert quiet.feed(records) + quiet.flush() == [b"a", b"x1", b"b", b"x2", b"c"]


@pytest.mark.parametrize("options", [{"annotate": True}, {"explain": True}, {"top": 3}])
def test_anything_that_reads_attribution_keeps_it(options):
    def attribution(d: Deduplicator) -> object:
        return d._stages.parts.attributor

    attributors = (Attributor, KernelAttributor)  # the Python engine's, the kernel's
    assert isinstance(attribution(Deduplicator(sequence_stats=False, **options)), attributors)
    assert isinstance(attribution(Deduplicator(sequence_stats=False)), DecisionCount)
    # the statistics read it (with the kernel, counted on a thread of its own)
    assert isinstance(attribution(Deduplicator()), (*attributors, AttributionThread))


def test_saving_a_library_keeps_it(tmp_path):
    saving = Deduplicator(sequence_stats=False, library_dir=tmp_path / "L")
    assert isinstance(saving._stages.parts.attributor, Attributor | KernelAttributor)
    saving.abort()


def test_the_command_line_skips_it_only_with_q(run_cli):
    data = b"a\nb\na\nb\nc\n"
    quiet = run_cli(["-q", "-w", "2"], data)
    shown = run_cli(["-w", "2", "--stats-format", "json"], data)
    assert quiet.stdout == shown.stdout == b"a\nb\nc\n"
    assert b'"unique_tracked": 1' in shown.stderr


@pytest.mark.parametrize("window", [1, 3])
def test_a_loaded_library_skips_the_same_without_attribution(run_cli, tmp_path, window):
    import random

    rng = random.Random(window)
    first = b"".join(rng.choice([b"a\n", b"b\n", b"c\n"]) for _ in range(300))
    second = b"".join(rng.choice([b"a\n", b"b\n", b"c\n", b"d\n"]) for _ in range(300))
    library = tmp_path / "L"
    run_cli(["-q", "-w", str(window), "-l", str(library)], first)
    quiet = run_cli(["-q", "-w", str(window), "-r", str(library)], second)
    shown = run_cli(["-w", str(window), "-r", str(library)], second)
    assert (quiet.returncode, shown.returncode) == (0, 0)
    assert quiet.stdout == shown.stdout
