"""The plan of a run (plan): the table of option combinations and the plan each gets,
docs/engine.md's "What needs attribution" and "The kernel's chunk path" made
executable; and the stages build what the plan names."""

from __future__ import annotations

from types import ModuleType, SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup.config.groups import FilterRule
from seqdedup.config.settings import Config
from seqdedup.engine.attribution import Attributor, DecisionCount, KernelAttributor
from seqdedup.engine.pyengine import PYTHON
from seqdedup.engine.stream_decider import StreamCount
from seqdedup.run.attribution_thread import AttributionThread
from seqdedup.run.plan import plan_run

from conftest import examples, kernel_built

# (the plan reads only whether the engine has a kernel)
KERNEL = SimpleNamespace(name="c", kernel=ModuleType("kernel"))

TRACK = (FilterRule("track", "^ERROR"),)
# options -> (feeding, attribution, settles early, run heads), with the kernel, keys it
# makes itself, no explanations and an unlimited history (a named file's) unless the
# row says otherwise
TABLE = [
    ({}, "chunk", "thread", False, 0),  # statistics only: counted on a second core
    ({"sequence_stats": False}, "chunk", "count", False, 0),  # -q: nothing reads a piece
    ({"max_history": 100}, "chunk", "thread", True, 0),  # (stdin's default history)
    ({"annotate": True}, "chunk", "kernel", False, 0),
    ({"annotate": True, "inverse": True}, "record", "kernel", False, 0),
    ({"annotate": True, "filters": TRACK}, "record", "kernel", False, 0),
    ({"annotate": True, "max_history": 100}, "chunk", "kernel", False, 0),  # markers wait
    # markers under key options compare texts: the record path
    ({"annotate": True, "key_steps": (("normalize", "number"),)}, "record", "kernel", False, 0),
    # (a template that does not show {variants} compares no texts)
    (
        {"annotate": True, "key_steps": (("normalize", "number"),), "annotation_format": "{start}"},
        "chunk",
        "kernel",
        False,
        0,
    ),
    ({"filters": TRACK}, "chunk", "thread", False, 0),  # a chunk's records classified
    ({"fold": True}, "chunk", "kernel", False, 2),
    ({"fold": True, "max_history": 100}, "record", "kernel", True, 2),  # lines of settled
    ({"fold": True, "filters": TRACK}, "record", "kernel", False, 2),
    ({"top": 3}, "chunk", "kernel", False, 1),  # --top alone: the first records
    ({"top": 3, "sequence_stats": False}, "chunk", "kernel", False, 1),
    ({"library_dir": "L"}, "chunk", "kernel", False, 2),  # saving reads each run
    ({"library_dir": "L", "filters": TRACK}, "record", "kernel", False, 2),
    ({"library_dir": "L", "read_sequences": ("R",)}, "record", "kernel", False, 2),
    ({"read_sequences": ("R",)}, "chunk", "thread", False, 0),  # loading: tables only
    # a minimum size (-w auto): its decider on the chunk path where nothing reads a
    # source (it names none); the record path where attribution or tokens are asked for
    ({"min_size": 64, "sequence_stats": False}, "chunk", "count", False, 0),
    ({"min_size": 64, "sequence_stats": False, "max_history": 100}, "chunk", "count", True, 0),
    ({"min_size": 64}, "record", "kernel", False, 0),  # the statistics count sequences
    ({"min_size": 64, "sequence_stats": False, "size_unit": "tokens"}, "record", "count", False, 0),
    ({"min_size": 64, "sequence_stats": False, "top": 3}, "record", "kernel", False, 1),
    ({"min_size": 64, "sequence_stats": False, "filters": TRACK}, "record", "count", False, 0),
    (
        {"min_size": 64, "sequence_stats": False, "read_sequences": ("R",)},
        "record",
        "count",
        False,
        0,
    ),
    ({"stream_by": "^(\\w+) "}, "stream", "count", False, 0),  # counts its own
    ({"stream_by": "^(\\w+) ", "fold": True}, "stream", "count", False, 2),
]


@pytest.mark.parametrize(("options", "feeding", "attribution", "settles", "heads"), TABLE)
def test_the_plan_of_each_combination(options, feeding, attribution, settles, heads):
    config = Config(**{"max_history": None, **options})
    plan = plan_run(config, engine=KERNEL, explaining=False, kernel_keys=True)
    assert (plan.feeding, plan.attribution, plan.settles_early, plan.run_heads) == (
        feeding,
        attribution,
        settles,
        heads,
    )
    assert plan.saves == ("library_dir" in options)
    assert plan.folds == (config.fold and not config.stream_split)


def test_what_the_parts_of_a_run_change():
    """Without the kernel nothing takes the chunk path and attribution is Python's;
    explanations and keys the kernel cannot make take the record path; explanations
    read pieces and keep records from settling early."""
    plain = Config(max_history=None)
    assert plan_run(plain, PYTHON, False, True)[1:3] == ("record", "python")
    quiet = Config(max_history=None, sequence_stats=False)
    assert plan_run(quiet, PYTHON, False, True)[1:3] == ("record", "count")
    assert plan_run(plain, KERNEL, False, False)[1:3] == ("record", "thread")  # a transform
    explained = plan_run(Config(max_history=100), KERNEL, True, True)
    assert (explained.feeding, explained.attribution, explained.settles_early) == (
        "record",
        "kernel",
        False,
    )
    top = plan_run(Config(top=3), KERNEL, False, True)
    assert top.top_only and not plan_run(Config(top=3, fold=True), KERNEL, False, True).top_only


KINDS = {
    "count": DecisionCount,
    "thread": AttributionThread,
    "kernel": KernelAttributor,
    "python": Attributor,
}


@pytest.mark.skipif(not kernel_built(), reason="the kernel's parts")
@pytest.mark.parametrize(("options", "feeding", "attribution", "settles", "heads"), TABLE)
def test_the_stages_build_what_the_plan_names(
    tmp_path, monkeypatch, options, feeding, attribution, settles, heads
):
    from seqdedup.run.stages import Stages

    monkeypatch.setenv("SEQDEDUP_ENGINE", "c")
    if "library_dir" in options:
        options = {**options, "library_dir": tmp_path / "L"}
    # (no library to read here; the row above has it. A copy: the row's own dict is the
    # plan test's too, whichever runs first)
    options = {name: value for name, value in options.items() if name != "read_sequences"}
    stages = Stages(Config(**{"max_history": None, **options}), None)
    plan = stages.plan
    from seqdedup.run.assembled import feeding_paths
    from seqdedup.run.feeding import ChunkPath

    streams, _, byte_path = feeding_paths(stages)
    assert isinstance(byte_path, ChunkPath) == (plan.feeding == "chunk")
    assert (streams is not None) == (plan.feeding == "stream")
    assert isinstance(stages.parts.attributor, KINDS[plan.attribution])
    # (a --stream-by run's counter is built here too, for its path to count into)
    assert isinstance(stages.parts.attributor, StreamCount) == (plan.feeding == "stream")
    assert (stages.saver is not None) == plan.saves
    assert (stages.folder is not None) == plan.folds
    stages.abort()


STREAM = "^(\\w+) "


@pytest.mark.parametrize(
    ("options", "explaining", "kernel", "decider", "reported"),
    [
        ({}, False, KERNEL, "kernel", False),  # nothing read per run: the kernel's matcher
        ({}, False, PYTHON, "python", False),
        ({"annotate": True}, False, KERNEL, "python", True),  # (a limited history)
        # markers and --top from the kernel's runs (an unlimited history: a named file)
        ({"annotate": True, "max_history": None}, False, KERNEL, "kernel", True),
        ({"top": 3, "max_history": None}, False, KERNEL, "kernel", True),
        ({"annotate": True, "max_history": None, "inverse": True}, False, KERNEL, "python", True),
        ({"fold": True, "max_history": None}, False, KERNEL, "kernel", True),
        ({"max_history": None}, True, KERNEL, "python", True),  # explanations
        ({}, True, KERNEL, "python", True),  # explanations
        ({"top": 3}, False, KERNEL, "python", True),
        ({"fold": True}, False, KERNEL, "python", True),
        ({"read_sequences": ("R",)}, False, KERNEL, "python", False),  # libraries
        ({"per_stream": True}, False, KERNEL, "python", False),
    ],
)
def test_the_stream_decider_of_each_combination(options, explaining, kernel, decider, reported):
    plan = plan_run(Config(stream_by=STREAM, **options), kernel, explaining, True)
    assert (plan.feeding, plan.stream_decider, plan.reported) == ("stream", decider, reported)
    assert plan.engine.name == ("c" if kernel is KERNEL else "python")
    if not options.get("per_stream"):  # (only with --stream-by)
        assert plan_run(Config(**options), kernel, explaining, True).stream_decider is None


STEPS = [("normalize", "timestamp"), ("normalize", "ip,number"), ("mask", r"id=\d+")]


@settings(max_examples=examples(200), deadline=None)
@given(
    steps=st.lists(st.sampled_from(STEPS), max_size=3),
    transform=st.booleans(),
    json=st.sampled_from(["", "key", "ignore"]),
    stream_json=st.booleans(),
)
def test_the_plan_knows_from_the_options_whether_the_kernel_makes_the_keys(
    steps, transform, json, stream_json
):
    """kernel_makes_keys (the plan's question, before any key maker is built) is what the
    run's key maker answers: plain, or one normalising pass the kernel does itself."""
    from seqdedup.keys.maker import kernel_makes_keys, key_maker

    config = Config(
        key_steps=tuple(steps),
        hash_transform="cat" if transform else None,
        json_key=("a",) if json == "key" else (),
        json_ignore=("b",) if json == "ignore" else (),
        stream_by_json="s" if stream_json else None,
    )
    keys = key_maker(config.key_options, None, 0, (lambda keys: keys) if transform else None)
    assert kernel_makes_keys(config.key_options) == (keys.plain or bool(keys.kernel_normalize))
