"""Window identity (docs/engine.md, "Identity of windows"): a fingerprint only finds a
candidate, the key hashes decide, so no input can make two different windows one.

The oracle here compares records themselves: each record is one character of a string,
and window j repeats iff ``str.find`` finds its characters ending at or before j (within
the history): exact, whatever the hashes do.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup.base.hashes import MASK64, hash_words
from seqdedup.engine.matcher import WindowMatcher

from conftest import ENGINES, examples, kernel_built, seqdedup_command, user_env
from oracle import skipped_flags

SEED = 0x0F1E2D3C4B5A6978_8796A5B4C3D2E1F0


def thue_morse(length: int) -> list[int]:
    """The Thue-Morse sequence: t(2k) = t(k), t(2k+1) = 1 - t(k)."""
    return [bin(k).count("1") & 1 for k in range(length)]


def kept_by_find(text: str, window: int, history: int | None = None) -> list[bool]:
    """Per record (a character of `text`), whether the skip rule keeps it, by substring
    search: window j repeats iff its characters occur ending at or before j, starting
    at most `history` before it."""
    skipped = [False] * len(text)
    for j in range(len(text) - window + 1):
        low = 0 if history is None else max(0, j - history)
        if text.find(text[j : j + window], low, j) != -1:
            skipped[j : j + window] = [True] * window
    return [not s for s in skipped]


def decide(engine: str, keys: list[object], window: int, history: int | None, **options):
    """Keep flags from one engine's matcher, the keys' hashes pushed in a few batches."""
    hashes = [hash(k) & MASK64 | (hash((k, 2)) & MASK64) << 64 for k in keys]
    if engine == "c":
        from seqdedup import _kernel

        m = _kernel.Matcher(window, history, seed=SEED, **options)
        form = lambda part: hash_words(part).tobytes()  # noqa: E731
    else:
        m = WindowMatcher(window, history, seed=SEED, **options)
        form = list
    keep: list[bool] = []
    step = max(1, len(hashes) // 3)
    for at in range(0, len(hashes), step):
        keep += m.push(form(hashes[at : at + step]))
    return keep + m.finish()


# -- the known attack: Thue-Morse over two records ------------------------------------


@pytest.mark.parametrize("window", [512, 1024, 2048, 4096, 8192])
@pytest.mark.parametrize("engine", ENGINES)
def test_thue_morse_windows_stay_distinct_through_the_command(tmp_path, window, engine):
    """T and its complement, over any two records: a polynomial modulo 2**64 gives them
    one fingerprint for every odd base (from W = 1024 on, in both lanes), so different
    windows were skipped. Now exactly what the rule says is written, and the statistics'
    attribution finds every source (no internal error)."""
    bits = thue_morse(4 * window)
    path = tmp_path / "tm.txt"
    path.write_text("".join(("alpha\n", "beta\n")[b] for b in bits))
    want = kept_by_find("".join(map(str, bits)), window)
    env = {**user_env(), "SEQDEDUP_ENGINE": engine}
    run = subprocess.run(
        [*seqdedup_command(), "-w", str(window), "--stats-format", "json", str(path)],
        capture_output=True,
        env=env,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.decode().splitlines()
    assert lines == [("alpha", "beta")[b] for b, k in zip(bits, want, strict=True) if k]
    assert f'"skipped": {want.count(False)}'.encode() in run.stderr


@pytest.mark.skipif(not kernel_built(), reason="the Dask engine's kernel steps")
def test_thue_morse_windows_stay_distinct_on_dask(tmp_path):
    pytest.importorskip("distributed")
    window = 1024
    bits = thue_morse(4 * window)
    path = tmp_path / "tm.txt"
    path.write_text("".join(("alpha\n", "beta\n")[b] for b in bits))
    want = kept_by_find("".join(map(str, bits)), window)
    script = Path(sys.executable).parent / "seqdedup-dask"
    run = subprocess.run(
        [
            str(script),
            "-q",
            "-w",
            str(window),
            "--scheduler",
            "sync",
            "--output-dir",
            str(tmp_path / "out"),
            str(path),
        ],
        capture_output=True,
        env=user_env(),
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    written = (tmp_path / "out" / "tm.txt").read_text().splitlines()
    assert written == [("alpha", "beta")[b] for b, k in zip(bits, want, strict=True) if k]


# -- windows in the hundreds and thousands, two-letter alphabets -----------------------


@st.composite
def long_window_inputs(draw):
    """Blocks of a few random two-letter strings (and Thue-Morse words and their
    complements) of about W records, repeated in random order with a few letters
    flipped: long repeats, near-misses, and the attack's structure."""
    window = draw(st.sampled_from([100, 257, 512, 1000, 1024, 2048, 3000]))
    rng = random.Random(draw(st.integers(0, 2**32)))
    blocks = []
    for _ in range(rng.randint(1, 3)):
        size = rng.randint(window // 2, 2 * window)
        blocks.append("".join(rng.choice("ab") for _ in range(size)))
    morse = "".join("ab"[b] for b in thue_morse(window))
    blocks += [morse, morse.translate(str.maketrans("ab", "ba"))]
    text = "".join(rng.choice(blocks) for _ in range(rng.randint(2, 6)))
    chars = list(text)
    for _ in range(rng.randint(0, 3)):
        at = rng.randrange(len(chars))
        chars[at] = "b" if chars[at] == "a" else "a"
    history = draw(st.sampled_from([None, window, 2 * window + 7, 3 * window]))
    return "".join(chars), window, history


@settings(max_examples=examples(25), deadline=None)
@given(long_window_inputs())
def test_long_windows_match_the_oracle_on_every_engine(case):
    text, window, history = case
    want = kept_by_find(text, window, history)
    for engine in ENGINES:
        assert decide(engine, list(text), window, history) == want, engine


# -- the confirmation step: fingerprints forced equal ---------------------------------

keys_strategy = st.integers(2, 3).flatmap(
    lambda k: st.lists(st.sampled_from("abc"[:k]), max_size=120)
)


@pytest.mark.parametrize("engine", ENGINES)
def test_two_windows_forced_to_share_a_fingerprint_are_both_kept(engine):
    """With every fingerprint made equal (as if an input had found the bases' roots),
    "a b" and "b a" still differ, and the real repeat of "a b" is still found."""
    assert decide(engine, list("abba"), 2, None, force_collisions=True) == [True] * 4
    assert decide(engine, list("abab"), 2, None, force_collisions=True) == [True] * 2 + [False] * 2
    assert decide(engine, list("abba"), 2, 50, force_collisions=True) == [True] * 4


@settings(max_examples=examples(200), deadline=None)
@given(
    keys=keys_strategy,
    window=st.integers(2, 6),
    history=st.sampled_from([None, 6, 40]),
)
def test_a_shared_fingerprint_never_skips_a_record(keys, window, history):
    """Every fingerprint equal: the engines may find fewer repeats than the rule (a
    table holds one window per fingerprint) but never skip a record the rule keeps."""
    history = None if history is None else max(history, window)
    rule = [not s for s in skipped_flags(keys, window, history)]
    for engine in ENGINES:
        keep = decide(engine, keys, window, history, force_collisions=True)
        assert all(k for k, r in zip(keep, rule, strict=True) if r), engine


@settings(max_examples=examples(150), deadline=None)
@given(keys=keys_strategy, window=st.integers(2, 6))
def test_runs_of_repeats_are_confirmed_record_by_record(keys, window):
    """Along a run of repeats the comparison takes one record per window: a copy that
    differs in its last record only is not skipped there (forced fingerprints)."""
    block = keys[: 3 * window] or ["a"] * window
    changed = [*block[:-1], "z"]
    stream = [*block, "y", *changed]
    rule = [not s for s in skipped_flags(stream, window)]
    for engine in ENGINES:
        keep = decide(engine, stream, window, None, force_collisions=True)
        assert all(k for k, r in zip(keep, rule, strict=True) if r), engine
        assert keep[-1]  # the changed record is never skipped


stream_records = st.lists(
    st.tuples(st.sampled_from(["p", "q", "r"]), st.sampled_from("ab")), max_size=90
)


@settings(max_examples=examples(150), deadline=None)
@given(
    records=stream_records,
    window=st.integers(2, 5),
    history=st.sampled_from([None, 8, 30]),
    idle=st.sampled_from([None, 4]),
)
def test_a_shared_fingerprint_never_skips_a_stream_record(records, window, history, idle):
    """--stream-by's matchers (the kernel's and the Python one), every fingerprint
    equal: never a record skipped that the rule per stream keeps."""
    from seqdedup.engine.stream_decider import Entry, StreamDecider

    from oracle import interleaved_skipped

    rule = interleaved_skipped(records, window, history, idle, None)
    keys = [hash(key) & MASK64 | (hash((key, 2)) & MASK64) << 64 for _, key in records]
    decider = StreamDecider(window, history, idle, None, None, False, SEED, True)
    entries = []
    for number, ((name, _), key) in enumerate(zip(records, keys, strict=True), 1):
        entries.append(Entry(b"", number, name))
        decider.push(name, key, entries[-1])
    decider.end_all()
    skipped = {"python": [entry.skip for entry in entries]}
    if kernel_built():
        from array import array

        from seqdedup import _kernel

        m = _kernel.StreamMatcher(window, idle, None, history=history, seed=SEED,
                                  force_collisions=True)  # fmt: skip
        lanes = array("i", ["pqr".index(name) for name, _ in records])
        flags = m.push(hash_words(keys).tobytes(), lanes.tobytes())[0] + m.end_all()[0]
        skipped["c"] = [bool(flag) for flag in flags]
    for engine, flags in skipped.items():
        assert all(not s for s, r in zip(flags, rule, strict=True) if not r), engine


@pytest.mark.parametrize("engine", ENGINES)
def test_dask_keys_stand_for_contents_whatever_the_fingerprints(engine):
    """The Dask engine groups windows by a key that stands for their content: windows
    with equal records get one key, different windows different keys, even when every
    fingerprint is the same (a forced collision) or each one differs."""
    import numpy as np

    from seqdedup.dask.partitions import window_fingerprints, window_keys

    rng = random.Random(7)
    for window in (1, 2, 3, 7):
        text = [rng.choice("ab") for _ in range(300)]
        hashes = hash_words([hash(k) & MASK64 | (hash((k, 2)) & MASK64) << 64 for k in text])
        raw = hashes.tobytes()
        count = len(text) - window + 1
        real = window_fingerprints(engine, raw, count, window, SEED)
        for fps in (real, np.zeros((count, 2), dtype=np.int64)):
            keys = window_keys(engine, raw, fps, window, SEED)
            contents = ["".join(text[i : i + window]) for i in range(count)]
            by_content: dict[str, bytes] = {}
            for content, key in zip(contents, map(bytes, keys), strict=True):
                assert by_content.setdefault(content, key) == key
            assert len(set(by_content.values())) == len(by_content)
