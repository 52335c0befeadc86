"""seqdedup diff's answer as text and JSON (seqdedup.diff.text): within a budget the
answer fits whenever its shortest form does, shows each change it shows as the whole
answer does, and counts what it leaves out; JSON holds every change."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup.base.tokens import estimate_tokens
from seqdedup.diff.changes import Known
from seqdedup.diff.compare import DiffOptions
from seqdedup.diff.inputs import diff_records
from seqdedup.diff.text import as_json, as_text, header, summary

from conftest import examples

words = st.sampled_from(["alpha", "beta 1", "gamma 22", "ERROR delta", "epsilon", "zeta"])
logs = st.lists(words, min_size=1, max_size=50)


def cost(text: str) -> int:
    return estimate_tokens(text.encode())


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(logs, min_size=1, max_size=2), logs, st.integers(10, 600))
def test_a_budget_is_met_and_what_is_left_out_is_counted(good, bad, budget):
    diff = diff_records(good, bad, options=DiffOptions(min_count=2))
    whole = as_text(diff, "bad.log", ["good.log"])
    text = as_text(diff, "bad.log", ["good.log"], budget, estimate_tokens)
    lines = text.splitlines()
    shortest = (
        summary(diff, "", (), short=True)
        + "\n... 99 changes not shown: --format json has them all\n"
    )
    if cost(shortest) <= budget:
        assert cost(text) <= budget
    if cost(whole) <= budget:
        assert text == whole  # (nothing left out when everything fits)
    heads = [header(change, diff) for change in diff.changes]
    remaining = iter(heads)  # the headers shown are a subsequence of the whole answer's
    shown = [line for line in lines if line in heads]
    assert all(any(head == line for head in remaining) for line in shown)
    missing = len(heads) - len(shown)
    if missing:
        assert lines[-1].startswith(f"... {missing:,} change")
    for line in lines:  # a record line is the whole answer's
        if " | " in line and not line.startswith("..."):
            assert line in whole.splitlines()


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(logs, min_size=1, max_size=2), logs)
def test_json_holds_every_change_with_its_fields(good, bad):
    diff = diff_records(good, bad, options=DiffOptions(min_count=2))
    document = json.loads(as_json(diff, "bad.log", ["good.log"]))
    assert document["changed"] == diff.changed and document["records"] == len(bad)
    assert [c["kind"] for c in document["changes"]] == [c.kind for c in diff.changes]
    for change, shown in zip(diff.changes, document["changes"], strict=True):
        assert shown["first"] == change.first and shown["last"] == change.last
        if not isinstance(change, Known):
            assert [line["text"] for line in shown["records"]] == [r.text for r in change.records]
    known = sum(c["length"] for c in document["changes"] if c["kind"] == "known")
    new = sum(c["length"] + c["again_length"] for c in document["changes"] if c["kind"] == "new")
    assert known + new == len(bad)
