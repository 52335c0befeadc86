"""Each feature's option group (config.groups): a typed view of the Config, with the
Config's defaults and the checks of its own values; a Config made of groups."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup.base.errors import UsageError
from seqdedup.config.groups import (
    BudgetOptions,
    FoldOptions,
    KeyOptions,
    LibraryOptions,
    MarkerOptions,
    RuleOptions,
    StreamOptions,
)
from seqdedup.config.settings import Config

from conftest import examples

GROUPS = {
    RuleOptions: "rule_options",
    KeyOptions: "key_options",
    MarkerOptions: "marker_options",
    FoldOptions: "fold_options",
    StreamOptions: "stream_options",
    LibraryOptions: "library_options",
    BudgetOptions: "budget_options",
}


@pytest.mark.parametrize("group", list(GROUPS))
def test_a_groups_defaults_are_the_configs(group):
    """A group made with no arguments is the default Config's view of it, and every
    field of a group is a Config field of the same name."""
    assert group() == getattr(Config(), GROUPS[group])
    assert set(group._fields) <= set(Config._fields)


def test_every_config_field_but_the_runs_own_is_in_a_group():
    """The groups cover the configuration: what no group holds is the run's own
    (the filters, --top, what the statistics count, --follow's rotation)."""
    grouped = {name for group in GROUPS for name in group._fields}
    assert set(Config._fields) - grouped == {"filters", "top", "sequence_stats", "rotate_wait"}


options_strategy = st.fixed_dictionaries(
    {},
    optional={
        "window_size": st.integers(1, 5),
        "max_history": st.none() | st.integers(100, 200),
        "min_size": st.integers(0, 50),
        "skip_chars": st.integers(0, 3),
        "key_steps": st.sampled_from([(), (("normalize", "all"),)]),
        "annotate": st.booleans(),
        "explain": st.booleans(),
        "stream_by": st.sampled_from([None, r"^(\w+) "]),
        "per_stream": st.booleans(),
        "fold_every": st.sampled_from([None, 5, 10_000]),
        "library_dir": st.sampled_from([None, Path("lib")]),
        "budget": st.sampled_from([None, 100]),
    },
)


@settings(max_examples=examples(200), deadline=None)
@given(options=options_strategy)
def test_a_config_made_of_its_groups_is_the_same_config(options):
    """Config.of(every group of a Config) is that Config; the groups hold what the
    Config holds, field for field."""
    try:
        config = Config(**options)
    except UsageError:
        return  # (a combination the checks refuse: nothing to compare)
    groups = [getattr(config, name) for name in GROUPS.values()]
    remaining = {
        name: getattr(config, name)
        for name in Config._fields
        if not any(name in group._fields for group in groups)
    }
    assert Config.of(*groups, **remaining) == config
    for group in groups:
        assert all(getattr(config, name) == value for name, value in group._asdict().items())


def test_two_groups_may_share_a_field_but_not_give_it_two_values():
    """``explain`` is the markers' and the keys' (why a record is keyed as text): a
    group gives only what it sets."""
    config = Config.of(MarkerOptions(explain=True), KeyOptions(skip_chars=2))
    assert config.explain and config.skip_chars == 2 and config.key_options.explain
    with pytest.raises(TypeError, match="window_size is given twice"):
        Config.of(RuleOptions(window_size=3), window_size=4)


@pytest.mark.parametrize(
    ("group", "message"),
    [
        (RuleOptions(window_size=5, max_history=3), "--max-history (3) must be at least"),
        (RuleOptions(min_size=5, size_unit="lines"), "size_unit is 'bytes' or 'tokens'"),
        (KeyOptions(delimiter=b""), "--delimiter must not be empty"),
        (KeyOptions(hash_transform=" "), "--hash-transform needs a command"),
        (KeyOptions(json_key=("a",), byte_mode=True), "need text mode"),
        (MarkerOptions(annotation_format="{start}"), "--annotation-format requires --annotate"),
        (FoldOptions(fold_format="{count}"), "--fold-format requires --fold"),
        (FoldOptions(fold=True, fold_clock="sun"), "fold_clock is 'wall' or 'records'"),
        (StreamOptions(per_stream=True), "--per-stream requires --stream-by"),
        (StreamOptions(stream_by="x", stream_by_json="a"), "cannot be used together"),
        (BudgetOptions(keep=("x",)), "--keep requires --budget"),
        (BudgetOptions(budget=0), "--budget must be at least 1"),
    ],
)
def test_each_group_checks_its_own_values(group, message):
    """A group's checks, with the command line's messages; through a Config made in
    Python the options are named as keywords."""
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        if isinstance(group, StreamOptions):
            group.validate(byte_mode=False)
        else:
            group.validate()
    with pytest.raises(UsageError) as made:
        Config.of(group)
    assert "--" not in str(made.value)  # (keywords: max_history, not --max-history)


def test_a_group_with_its_defaults_passes_its_checks():
    for group in GROUPS:
        made = group()
        if isinstance(made, StreamOptions):
            made.validate(byte_mode=False)
        elif hasattr(made, "validate"):  # (libraries: their paths are checked when read)
            made.validate()
