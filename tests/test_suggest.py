"""--suggest-window: what each window size removes, against the rule's oracle, on both
engines; the report and its options through the installed command."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup.config import Config
from seqdedup.hashes import hash_words
from seqdedup.runs import runs_of
from seqdedup.suggest import WIDTHS, suggest

from conftest import examples, seqdedup_command, user_env
from oracle import skipped_flags


def oracle_rows(keys: list[str]) -> tuple[list[dict[str, int]], list[int]]:
    rows, blocks = [], []
    for width in WIDTHS:
        runs = runs_of([not s for s in skipped_flags(keys, width)], False)
        rows.append(
            {"window_size": width, "removed": sum(b - a for a, b in runs), "runs": len(runs)}
        )
        if width == 2:
            blocks = [b - a for a, b in runs]
    return rows, blocks


keys_strategy = st.integers(1, 4).flatmap(
    lambda k: st.lists(st.sampled_from("abcd"[:k]), max_size=300)
)


@settings(max_examples=examples(200), deadline=None)
@given(keys=keys_strategy)
def test_each_width_removes_what_the_rule_removes(engine, keys):
    result = suggest([k.encode() for k in keys], Config(max_history=None))
    rows, blocks = oracle_rows(keys)
    assert result["windows"] == rows
    for bucket, (low, high) in zip(result["repeated_blocks"], ((2, 4), (5, 9)), strict=False):
        inside = [n for n in blocks if low <= n <= high]
        assert (bucket["blocks"], bucket["records"]) == (len(inside), sum(inside))
    assert sum(b["records"] for b in result["repeated_blocks"]) == sum(blocks)


@settings(max_examples=examples(100), deadline=None)
@given(keys=st.lists(st.sampled_from(["a", "b"]), max_size=60))
def test_the_kernels_tally_is_the_rule(keys):
    kernel = pytest.importorskip("seqdedup._kernel")
    hashes = hash_words([hash(k) & (2**128 - 1) for k in keys]).tobytes()
    rows, blocks = oracle_rows(keys)
    tallied = kernel.window_tally(hashes, WIDTHS)
    assert [(r["removed"], r["runs"]) for r in rows] == [(a, b) for a, b, _ in tallied]
    from array import array

    assert list(array("q", tallied[1][2])) == blocks


def run(*args: str, data: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*seqdedup_command(), *args], input=data, capture_output=True, env=user_env(), timeout=60
    )


def test_the_report_and_its_recommendation(tmp_path: Path):
    trace = [f"frame {k}".encode() for k in range(12)]
    data = b"\n".join([b"start", *trace, b"x", *trace, b"y", *trace, b"end"]) + b"\n"
    done = run("--suggest-window", data=data)
    assert done.returncode == 0 and done.stderr == b""
    lines = done.stdout.decode().splitlines()
    assert lines[0] == "40 records read"
    assert lines[-1].startswith("suggested: -w 10 (-w 10 removes 24 records, 100% of what -w 2")
    as_json = json.loads(run("--suggest-window", "--stats-format", "json", data=data).stdout)
    doc = as_json["suggest_window"]
    assert doc["recommended"] == 10 and doc["records"] == 40
    assert [r["removed"] for r in doc["windows"]] == [24, 24, 24, 24, 24, 0, 0]
    sampled = json.loads(
        run("--suggest-window", "--sample", "14", "--stats-format", "json", data=data).stdout
    )
    assert sampled["suggest_window"]["records"] == 14
    none = run("--suggest-window", data=b"a\nb\nc\n").stdout.decode().splitlines()[-1]
    assert none.startswith("suggested: -w 10 (no block of two or more records repeats")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sample", "5"], "--sample requires --suggest-window"),
        (["--suggest-window", "--sample", "0"], "--sample must be at least 1"),
        (["--suggest-window", "--follow", "x.log"], "not with --follow"),
    ],
)
def test_bad_suggest_settings_are_one_line(args, message):
    done = run(*args, data=b"a\n")
    assert done.returncode == 1 and done.stdout == b""
    assert done.stderr.decode().count("\n") == 1 and message in done.stderr.decode()
