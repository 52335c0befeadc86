"""--suggest-window: what each window size removes, against the rule's oracle, on both
engines; the report and its options through the installed command."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup.base.hashes import hash_words
from seqdedup.config.settings import Config
from seqdedup.engine.runs import runs_of
from seqdedup.run.suggest import SIZES, WIDTHS, size_rows, suggest

from conftest import examples, run_in_process
from oracle import skipped_flags, skipped_flags_sized


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


@settings(max_examples=examples(60), deadline=None)
@given(keys=st.lists(st.sampled_from(["a" * 20, "b" * 30, "c", ""]), max_size=40))
def test_each_minimum_size_removes_what_the_rule_removes(engine, keys):
    rows = size_rows([k.encode() for k in keys], Config(max_history=None))
    assert [row["min_bytes"] for row in rows] == list(SIZES)
    for row in rows:
        skipped = skipped_flags_sized([keys], 1, row["min_bytes"], lambda k: len(str(k)) + 1)
        runs = runs_of([not s for s in skipped], False)
        assert (row["removed"], row["runs"]) == (sum(skipped), len(runs))


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
    """(In this process: the report is the point here, not the process.)"""
    return run_in_process(list(args), data)


def test_the_report_and_its_recommendation(tmp_path: Path):
    trace = [f"frame {k}".encode() for k in range(12)]
    data = b"\n".join([b"start", *trace, b"x", *trace, b"y", *trace, b"end"]) + b"\n"
    done = run("--suggest-window", data=data)
    assert done.returncode == 0 and done.stderr == b""
    lines = done.stdout.decode().splitlines()
    assert lines[0] == "40 records read"
    (window,) = [line for line in lines if line.startswith("window: ")]
    assert window.startswith("window: -w 10 (-w 10 removes 24 records, 100% of what -w 2")
    # one line to copy, at the end: with numbers masked the twelve frames are one line;
    # no W is needed: -w auto removes as much (the twelve frames are 98 bytes)
    assert lines[-1] == "suggested: seqdedup -w auto --normalize all"
    (size,) = [line for line in lines if line.startswith("size: ")]
    assert size.startswith("size: -w auto removes 24 records (-w 10: 24)")
    as_json = json.loads(run("--suggest-window", "--stats-format", "json", data=data).stdout)
    doc = as_json["suggest_window"]
    assert doc["recommended"] == 10 and doc["records"] == 40
    assert doc["command"] == "seqdedup -w auto --normalize all" and doc["kept"] == []
    assert [r["removed"] for r in doc["sizes"]] == [24, 24, 0, 0]
    assert doc["recommended_min_bytes"] == 64
    assert [r["removed"] for r in doc["windows"]] == [24, 24, 24, 24, 24, 0, 0]
    sampled = json.loads(
        run("--suggest-window", "--sample", "14", "--stats-format", "json", data=data).stdout
    )
    assert sampled["suggest_window"]["records"] == 14
    none = run("--suggest-window", data=b"a\nb\nc\n").stdout.decode().splitlines()
    assert none[-2] == "keys: as given (no built-in key removes much more)"
    (line,) = [line for line in none if line.startswith("window: ")]
    assert line.startswith("window: -w 10 (no block of two or more records repeats")


def stamped(lines: list[str]) -> bytes:
    """Lines that differ only in the timestamp each starts with."""
    return "".join(
        f"2026-11-26T10:00:{k % 60:02d}.{k:03d}Z {line}\n" for k, line in enumerate(lines)
    ).encode()


def test_keys_are_suggested_with_the_window_they_need():
    block = ["retrying db", "ConnectionError: refused", "backing off"]
    words = [a + b for a in "pqrstuvwxy" for b in "abcd"]  # (no numbers: all differ)
    data = stamped([f"request {word} served" for word in words] + block * 30)
    doc = json.loads(run("--suggest-window", "--stats-format", "json", data=data).stdout)
    result = doc["suggest_window"]
    assert result["windows"][1]["removed"] == 0  # the timestamps: nothing repeats as given
    assert result["recommended_keys"] == "--normalize timestamp"
    keyed = ("--suggest-window", "--stats-format", "json", "--normalize", "timestamp")
    chosen = json.loads(run(*keyed, data=data).stdout)["suggest_window"]
    assert result["with_keys"]["recommended"] == chosen["recommended"]  # its W with them
    removed = {row["keys"]: row["removed"] for row in result["keys"]}
    plain = run("-q", "-w", "2", "-M", "--normalize", "timestamp", data=data).stdout
    assert removed["--normalize timestamp"] == data.count(b"\n") - plain.count(b"\n")
    text = run("--suggest-window", data=data).stdout.decode().splitlines()
    # the three-line block is 88 bytes with its timestamps masked: -w auto takes it whole
    assert chosen["recommended_min_bytes"] == result["with_keys"]["recommended_min_bytes"] == 64
    w = "auto"
    assert text[-2].startswith(f"keys: --normalize timestamp -w {w} (")
    assert text[-1] == f"suggested: seqdedup -w {w} --normalize timestamp"
    given = run("--suggest-window", "--normalize", "timestamp", data=data).stdout.decode()
    assert "keys (" not in given  # the user chose the keys
    # the call's own key options are kept in the command line, and said so
    assert given.splitlines()[-2:] == [
        "kept from the call: --normalize timestamp",
        f"suggested: seqdedup -w {w} --normalize timestamp",
    ]


def test_paths_and_quoted_values_are_masked_by_the_classes_of_a_kind():
    """Lines that differ in a path and a quoted value (no class of ``all`` masks them):
    the last key tried, every class of a line's kind, is the one suggested."""
    block = ["retrying db", "ConnectionError: refused", "backing off"]
    served = [f'GET /srv/{a}{b}/x.html user="{b}{a}"' for a in "pqrstuvwxy" for b in "abcd"]
    data = stamped(served + block * 30)
    doc = json.loads(run("--suggest-window", "--stats-format", "json", data=data).stdout)
    result = doc["suggest_window"]
    removed = {row["keys"]: row["removed"] for row in result["keys"]}
    assert removed["--normalize all,path,quoted"] > removed["--normalize all"]
    assert result["recommended_keys"] == "--normalize all,path,quoted"


def test_stream_by_is_honoured_per_window():
    pods = []
    for k in range(30):
        pods += [f"[a] step {k % 3}", f"[b] other {k}", f"[b] step {k % 3}"]
    data = ("\n".join(pods) + "\n").encode()
    args = ("--stream-by", r"^\[(\w)\] ")
    doc = json.loads(run("--suggest-window", "--stats-format", "json", *args, data=data).stdout)
    for row in doc["suggest_window"]["windows"]:
        width = str(row["window_size"])
        kept = run("-q", "-M", "-w", width, *args, data=data).stdout.count(b"\n")
        assert row["removed"] == data.count(b"\n") - kept, width


def test_options_it_does_not_use_are_refused_on_the_command_line(tmp_path):
    for option in (["-w", "5"], ["--fold"], ["--annotate"], ["--top", "3"]):
        done = run("--suggest-window", *option, data=b"a\n")
        assert done.returncode == 1 and done.stdout == b""
        assert done.stderr.startswith(b"seqdedup: --suggest-window tries every window size")
    (tmp_path / "s.toml").write_text("window-size = 4\nfold = true\n")
    profile = run("--config", str(tmp_path / "s.toml"), "--suggest-window", data=b"a\n")
    assert profile.returncode == 0  # (a settings file that sets them is no error)


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


@pytest.mark.parametrize(
    ("given", "named"),
    [(["-w", "3"], "-w"), (["-w", "0"], "-w"), (["--top", "2"], "--top"), (["--fold"], "--fold")],
)
def test_an_option_suggest_window_does_not_use_is_one_line_naming_it(given, named):
    """--suggest-window makes no run: an option only a run reads is refused by name, and
    before its value is judged (``-w 0`` is "not used", not "must be at least 1")."""
    done = run_in_process(["--suggest-window", *given], b"a\nb\n")
    assert (done.returncode, done.stdout) == (1, b"")
    assert done.stderr.decode() == (
        f"seqdedup: --suggest-window tries every window size and makes no run: {named} "
        "is not used (leave it out)\n"
    )
