from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup import Deduplicator, UsageError, deduplicate
from seqdedup.config.groups import FilterRule
from seqdedup.config.settings import Config
from seqdedup.engine.choice import chosen_engine, engine_named
from seqdedup.keys import filters as filters_module
from seqdedup.keys.filters import TRACKED, UNMATCHED, FilterList, load_pattern_file
from seqdedup.run.stages import Stages

from conftest import examples, kernel_built
from oracle import reference_output

# Records like "E1", "ts3", "I2": a kind prefix and a small alphabet of bodies.
records_strategy = st.lists(
    st.tuples(st.sampled_from(["E", "ts", "I"]), st.sampled_from("123")).map("".join),
    max_size=150,
)
rules_strategy = st.lists(
    st.tuples(st.sampled_from(["track", "bypass"]), st.sampled_from(["^E", "^ts", "2", "^I"])),
    max_size=3,
)


@settings(max_examples=examples(300), deadline=None)
@given(
    records=records_strategy,
    rules=rules_strategy,
    window=st.integers(1, 6),
    history=st.sampled_from([None, 100]),
    skip=st.integers(0, 2),
)
def test_filters_and_skip_chars_match_oracle(records, rules, window, history, skip):
    filters = tuple(FilterRule(kind, pattern) for kind, pattern in rules)
    out = list(
        deduplicate(
            records,
            window_size=window,
            max_history=history,
            filters=filters,
            skip_chars=skip,
            batch_size=5,
        )
    )
    assert out == reference_output(records, window, history, rules, skip)


def test_bypassed_lines_neither_extend_nor_break_a_window():
    records = ["E1", "E2", "ts1", "E3", "I1", "E1", "ts2", "E2", "ts3", "E3"]
    out = list(deduplicate(records, window_size=3, filters=(FilterRule("bypass", "^ts"),)))
    # Tracked: E1 E2 E3 I1 E1 E2 E3; the second "E1 E2 E3" repeats, the ts lines stay.
    assert out == ["E1", "E2", "ts1", "E3", "I1", "ts2", "ts3"]


def test_first_matching_pattern_decides_in_order():
    lines = [b"ERROR disk", b"ERROR net", b"INFO"]
    both = [FilterRule("bypass", "disk"), FilterRule("track", "^ERROR")]
    assert FilterList(both).classify(lines) == [0, TRACKED, UNMATCHED]
    reversed_order = [FilterRule("track", "^ERROR"), FilterRule("bypass", "disk")]
    assert FilterList(reversed_order).classify(lines) == [TRACKED, TRACKED, UNMATCHED]
    assert FilterList([FilterRule("bypass", "disk")]).classify(lines) == [0, TRACKED, TRACKED]


def test_invalid_utf8_is_matched_and_kept_unchanged():
    records = [b"\xffERROR", b"x", b"\xffERROR", b"x"]
    d = Deduplicator(window_size=1, filters=(FilterRule("track", "ERROR"),))
    assert d.feed(records) + d.flush() == [b"\xffERROR", b"x", b"x"]


def test_pattern_file_comments_blanks_and_order(tmp_path):
    path = tmp_path / "p.txt"
    path.write_text("# comment\n\n^ts\n  # indented comment\nDEBUG\n")
    rules = load_pattern_file(path, "bypass")
    assert [r.pattern for r in rules] == ["^ts", "DEBUG"]
    assert rules[1].origin.endswith("p.txt line 5")


def test_bad_patterns_name_file_and_line(tmp_path):
    path = tmp_path / "p.txt"
    path.write_text("ok\n(broken\n")
    with pytest.raises(
        UsageError, match=r"--track-file: invalid regex '\(broken' in .*p.txt line 2"
    ):
        FilterList(load_pattern_file(path, "track"))
    with pytest.raises(UsageError, match="--bypass-file"):
        load_pattern_file(tmp_path / "missing.txt", "bypass")


def test_explanations_for_filters():
    lines: list[str] = []
    d = Deduplicator(
        window_size=2,
        on_explain=lines.append,
        filters=(FilterRule("bypass", "^ts"), FilterRule("track", "^E")),
    )
    d.feed([b"E1", b"ts", b"I", b"E2"])
    d.flush()
    assert lines == [
        "EXPLAIN: Line 2 bypassed (matched bypass pattern '^ts')",
        "EXPLAIN: Line 3 passed through (no track pattern matched)",
    ]


PATTERNS = [
    "ERROR",
    "^ERROR",
    "^",
    "",
    "err.r",
    r"\s+x",
    r"\S",
    r"^\S+ ",  # \s and \S: spelled for ASCII text in the bytes twin (\x1c is a space)
    r"[\s:]\d",
    r"[]\s]",
    r"[^\S]",  # (no twin: \S inside a class)
    r"(?a)\s",
    r"\\s",
    r"\w+:",
    "(?i)error",
    "^E|x$",
    "é",
    r"\d{2}",
    "a\\.b",
    "[\x1c]",
    "^ts ",
    "R\nE",  # a literal holding the separator the scan joins records with
    "^\nE",
    "RR",
]


@settings(max_examples=examples(300), deadline=None)
@given(
    records=st.lists(
        st.text(alphabet=st.sampled_from("ERORrx é:\x1c\t\n1234a.bts"), max_size=12).map(
            lambda t: t.encode("utf-8", "surrogateescape")
        ),
        max_size=30,
    ),
    rules=st.lists(
        st.tuples(st.sampled_from(["track", "bypass"]), st.sampled_from(PATTERNS)),
        min_size=1,
        max_size=4,
    ),
    invalid=st.booleans(),
    scan_from=st.sampled_from([1, 2048]),
)
def test_fast_paths_agree_with_plain_regex_search(records, rules, invalid, scan_from):
    """Literal, anchored-literal and bytes twins decide exactly as re.search on text."""
    import re

    if invalid:
        records = [*records, b"\xff\xfe"]  # not UTF-8: the whole batch goes the text way
    has_track = any(kind == "track" for kind, _ in rules)
    expected = []
    for record in records:
        text = record.decode("utf-8", "surrogateescape")
        verdict = UNMATCHED if has_track else TRACKED
        for index, (kind, pattern) in enumerate(rules):
            if re.search(pattern, text):
                verdict = TRACKED if kind == "track" else index
                break
        expected.append(verdict)
    filters = FilterList([FilterRule(kind, pattern) for kind, pattern in rules])
    scanned = FilterList(filters.rules, chosen_engine().literal_mask)  # (as a run makes it)
    with pytest.MonkeyPatch.context() as patch:  # 1: whole-batch scanning for literals
        patch.setattr(filters_module, "SCAN_MIN_RECORDS", scan_from)
        assert filters.classify(records) == expected
        assert scanned.classify(records) == expected
    if kernel_built():  # the kernel's filtered chunk path: literals found in any bytes
        from array import array

        region = b"\n".join(records)
        bounds, at = array("q"), 0
        for record in records:
            bounds.extend((at, at + len(record)))
            at += len(record) + 1
        kernels = FilterList(filters.rules, engine_named("c").literal_mask)
        mask = kernels.tracked_mask(region, bounds.tobytes(), b"\n")
        assert list(mask) == [int(verdict == TRACKED) for verdict in expected]


# Every test here runs once per engine (compiled kernel and pure Python).
pytestmark = pytest.mark.usefixtures("engine")


@pytest.mark.parametrize(
    "pattern", [r"^\S+ ", r"a\s+b", r"[\s,]+", r"[]\s]x", r"[^]\s]", r"\\s", r"(?i)\S\s"]
)
def test_a_bytes_twin_with_spaces_finds_what_the_text_pattern_finds(pattern):
    """\\s in text matches \\x1c-\\x1f too (str.isspace): the twin spells it so, and
    finds what the pattern finds on every ASCII text around every character."""
    import re

    from seqdedup.keys.filters import byte_twin

    text_pattern = re.compile(pattern)
    twin = byte_twin(text_pattern)
    assert twin is not None
    for code in range(128):
        for text in (chr(code), f"a{chr(code)}b", f"{chr(code)}{chr(code)} x", f"]{chr(code)}x"):
            found, twin_found = text_pattern.search(text), twin.search(text.encode())
            assert (found and found.span()) == (twin_found and twin_found.span()), text


def test_no_bytes_twin_where_spaces_cannot_be_spelled():
    import re

    from seqdedup.keys.filters import byte_twin

    assert byte_twin(re.compile(r"[^\S]")) is None  # \S inside a class
    assert byte_twin(re.compile(r"(?x) \s # [")) is None  # verbose: comments


@pytest.mark.one_engine  # (it runs both engines itself, the kernel importable)
@pytest.mark.skipif(not kernel_built(), reason="the compiled kernel is not installed")
@pytest.mark.parametrize("rule", [FilterRule("bypass", "^ts"), FilterRule("track", "ERROR")])
def test_the_python_engine_scans_literals_without_the_kernel(monkeypatch, rule):
    """With SEQDEDUP_ENGINE=python a batch scanned for a literal called the kernel's
    ``literal_mask`` anyway (the per-engine tests never ran the Python scan where the
    kernel was built); now the engine the run uses scans (a run's filters take its
    engine's scan: the Python engine has none), with the same decisions."""
    pytest.importorskip("numpy")

    records = [b"ts %d ERROR x" % i if i % 7 == 0 else b"line %d" % (i % 50) for i in range(3000)]
    assert len(records) >= filters_module.SCAN_MIN_RECORDS
    calls = []
    compiled = engine_named("c")
    original = compiled.literal_mask
    assert original is not None

    def counted(*args):
        calls.append(1)
        return original(*args)

    monkeypatch.setattr(compiled, "literal_mask", counted)
    want = [r.startswith(b"ts") if rule.kind == "bypass" else b"ERROR" in r for r in records]
    for engine, called in (("python", False), ("c", True)):
        monkeypatch.setenv("SEQDEDUP_ENGINE", engine)
        calls.clear()
        decisions = Stages(Config(filters=(rule,)), None).parts.filters.classify(records)
        matched = [d != (UNMATCHED if rule.kind == "track" else TRACKED) for d in decisions]
        assert matched == want and bool(calls) is called, engine
