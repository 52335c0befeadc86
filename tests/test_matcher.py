from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup import Deduplicator
from seqdedup.base import engine as base_engine
from seqdedup.base.hashes import hash_ints
from seqdedup.engine import histories, matcher
from seqdedup.engine.fingerprints import PRIME, coefficients, fingerprints_py
from seqdedup.engine.matcher import WindowMatcher

from conftest import examples
from oracle import kept, skipped_flags


def run_matcher(keys, window, history, chunks, numpy_threshold=None, monkeypatch=None, library=()):
    if numpy_threshold is not None:
        monkeypatch.setattr(matcher, "NUMPY_MIN_WINDOWS", numpy_threshold)
        monkeypatch.setattr(histories, "NUMPY_MIN_WINDOWS", numpy_threshold)
    m = WindowMatcher(window, history, seed=SEED)
    count = len(library) - window + 1
    if count > 0:  # one library sequence, its windows just before the run
        add_library(m, [hash(k) for k in library])
    return push_all(m, keys, chunks)


SEED = 0x0123456789ABCDEF_FEDCBA9876543210
SENTINEL = 0x5EDD_ED5E_DDED_5EDD  # what stands between library sequences in the region


def add_library(m, hashes):
    """One library sequence (key hashes) in the region, its windows ending before -1."""
    window = m.window_size
    count = len(hashes) - window + 1
    region = [*hashes, SENTINEL]  # its last record at -2, the sentinel at -1
    starts = list(range(-len(region), -len(region) + count))
    m.add_library_windows(m.fingerprints(hashes, count), starts, region)


def push_all(m, keys, chunks):
    """Push the keys' hashes in chunks of the given sizes, then the rest; finish."""
    hashes = [hash(k) for k in keys]
    keep: list[bool] = []
    pos = 0
    for size in chunks:
        keep += m.push(hashes[pos : pos + size])
        pos += size
    keep += m.push(hashes[pos:])
    keep += m.finish()
    return keep


keys_strategy = st.integers(1, 5).flatmap(
    lambda k: st.lists(st.sampled_from("abcde"[:k]), max_size=300)
)


@settings(max_examples=examples(400), deadline=None)
@given(
    keys=keys_strategy,
    window=st.integers(1, 12),
    history=st.one_of(st.none(), st.integers(100, 160)),
    chunks=st.lists(st.integers(0, 40), max_size=30),
    numpy_threshold=st.sampled_from([1, 3, 2048]),
)
def test_matches_oracle(keys, window, history, chunks, numpy_threshold):
    mp = pytest.MonkeyPatch()
    try:
        keep = run_matcher(keys, window, history, chunks, numpy_threshold, mp)
    finally:
        mp.undo()
    assert keep == [not s for s in skipped_flags(keys, window, history)]


@settings(max_examples=examples(60), deadline=None)
@given(
    period=st.lists(st.sampled_from("ab"), min_size=1, max_size=4),
    repeats=st.integers(20, 80),
    window=st.integers(95, 100),
)
def test_history_equal_to_window_edge(period, repeats, window):
    """History barely above the window forces batches of a few windows."""
    keys = (period * repeats)[:300]
    history = 100
    mp = pytest.MonkeyPatch()
    try:
        keep = run_matcher(keys, window, history, [len(keys)], 1, mp)
    finally:
        mp.undo()
    assert keep == [not s for s in skipped_flags(keys, window, history)]


def test_history_forgets_old_windows():
    block = [f"r{i}" for i in range(5)]
    filler = [f"f{i}" for i in range(200)]
    keys = block + filler + block
    assert run_matcher(keys, 5, None, []).count(False) == 5
    assert run_matcher(keys, 5, 100, []).count(False) == 0


@pytest.mark.parametrize("history", [None, 100])
def test_library_windows_are_already_seen(history):
    m = WindowMatcher(2, history)
    m.repeat_sources = {}
    lib = [hash("x"), hash("y"), hash("z")]
    m.add_library_windows(m.fingerprints(lib, 2), [-5, -4], [*lib, SENTINEL, SENTINEL])
    keep = m.push([hash(k) for k in "ayzb"]) + m.finish()
    assert keep == [True, False, False, True]
    assert m.repeat_sources == {1: -4}  # window "y z" came from library start -4


@given(
    st.lists(st.integers(-(2**127), 2**128 - 1), min_size=1, max_size=60),
    st.integers(1, 20),
    st.integers(0, 2**128 - 1),
)
def test_rolled_fingerprints_are_the_polynomial_modulo_the_prime(hashes, window, seed):
    """Each window's fingerprint, rolled from the one before, is per lane
    sum((h & (2**61 - 1)) * B**(W-1-k)) mod p (each lane's low 61 bits); a 1-record
    window's is its key hash."""
    coeffs = coefficients(window, seed)
    count = max(0, len(hashes) - window + 1)
    values = [h % 2**128 for h in hashes]
    want = []
    for j in range(count):
        if window == 1:
            want.append(values[j])
            continue
        lanes = [
            sum(
                (values[j + k] >> (64 * lane) & (2**61 - 1)) * coeffs[lane * window + k]
                for k in range(window)
            )
            % PRIME
            for lane in (0, 1)
        ]
        want.append(lanes[0] | lanes[1] << 64)
    assert fingerprints_py(hashes, count, coeffs) == want


def test_coefficients_are_powers_of_a_secret_base_per_lane():
    """The powers B**(W-1) .. 1 modulo p of one base per lane, each drawn from its lane's
    64 bits of the seed: another seed, other bases (what keeps an input from aiming at
    the polynomials' roots), and the kernel rolls from one window to the next."""
    seed = 0x1111_2222_3333_4444_5555_6666_7777_8888
    values = coefficients(64, seed)
    assert len(values) == 128
    assert all(0 < v < PRIME for v in values)
    for lane in (values[:64], values[64:]):
        assert len(set(lane)) == 64
        base = lane[-2]
        assert 2 <= base <= PRIME - 2
        assert lane[-1] == 1
        assert all(lane[k] == lane[k + 1] * base % PRIME for k in range(63))
    assert values[:64][-2] != values[64:][-2]  # two bases
    assert coefficients(3, seed) == values[61:64] + values[125:128]
    high_only = coefficients(3, seed ^ 1 << 64)  # lane 2's secret alone changed
    assert high_only[:3] == values[61:64] and high_only[3:] != values[125:128]


def test_windows_equal_in_one_lane_stay_distinct():
    """A window's identity is 128 bits: keys whose low 64 bits are all equal (a forced
    collision of 64-bit hashes) still differ by their high lane, both in the dict path
    and in the numpy table of large batches."""
    for size, history, distinct in itertools.product(
        (50, 5000), (None, 60), (lambda k: 7 | k << 64, lambda k: k | 7 << 64)
    ):
        keys = [distinct(k) for k in range(size)]  # one lane the same in every key
        for window in (1, 3):
            m = WindowMatcher(window, history)
            assert m.push(keys) + m.finish() == [True] * size
            m.new_input()
            assert m.push(keys[-window:]) + m.finish() == [False] * window


def test_fewer_records_than_window_are_all_kept():
    m = WindowMatcher(5, None)
    assert m.push([1, 2, 1, 2]) == []
    assert m.finish() == [True] * 4


def test_history_table_stays_bounded():
    m = WindowMatcher(1, 100)
    for start in range(0, 50_000, 1000):
        m.push(list(range(start, start + 1000)))
    assert m.remembered_windows <= 2 * 100 + 1024


@settings(max_examples=examples(150), deadline=None)
@given(
    keys=keys_strategy,
    window=st.integers(1, 8),
    history=st.one_of(st.none(), st.integers(100, 130)),
    chunks=st.lists(st.integers(0, 40), max_size=20),
    library=st.lists(st.sampled_from("abcde"), max_size=12),
)
def test_python_engine_without_numpy(keys, window, history, chunks, library):
    """The core install has no numpy: every large-batch path falls back to dicts."""
    mp = pytest.MonkeyPatch()
    try:
        mp.setattr(base_engine, "_numpy", False)
        keep = run_matcher(keys, window, history, chunks, 1, mp, library)
        m = WindowMatcher(window, history)
        assert isinstance(m.fingerprints([1] * window, 1), list)
    finally:
        mp.undo()
    assert keep == [not s for s in skipped_flags(keys, window, history, [library])]


def new_material_oracle(keys, window, history):
    """Per record: whether a window that is not a repeat covers it."""
    n = len(keys)
    covered = [False] * n
    for j in range(n - window + 1):
        current = keys[j : j + window]
        repeat = any(
            keys[i : i + window] == current
            for i in range(j - window + 1)
            if history is None or j - i <= history
        )
        if not repeat:
            for r in range(j, j + window):
                covered[r] = True
    return covered


@settings(max_examples=examples(200), deadline=None)
@given(
    keys=keys_strategy,
    window=st.integers(1, 6),
    history=st.one_of(st.none(), st.integers(100, 130)),
    chunks=st.lists(st.integers(0, 40), max_size=20),
    sources=st.booleans(),
)
def test_new_material_flags_with_or_without_sources(keys, window, history, chunks, sources):
    """What a library saves as new material, with attribution's sources kept or not."""
    m = WindowMatcher(window, history)
    m.new_material = []
    if not sources:
        m.repeat_sources = None
    keep = push_all(m, keys, chunks)
    assert keep == [not s for s in skipped_flags(keys, window, history)]
    assert m.new_material == new_material_oracle(keys, window, history)


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(
        st.one_of(
            st.integers(0, 2**128 - 1),
            st.sampled_from([2**128 - 1, 2**61 - 1, (2**61 - 1) << 64, 2**64 - 1, 0]),
        ),
        min_size=64,
        max_size=300,
    ),
    st.integers(2, 64),
    st.integers(0, 2**128 - 1),
)
def test_numpy_fingerprints_are_the_rolled_ones(hashes, window, seed):
    """Large batches of the Python engine sum each window's W products with numpy (in
    31-bit halves): the same fingerprints as the rolling definition, extremes included."""
    pytest.importorskip("numpy")
    from seqdedup.engine.fingerprints import fingerprints_np

    coeffs = coefficients(window, seed)
    count = len(hashes) - window + 1
    assert hash_ints(fingerprints_np(hashes, count, coeffs)) == fingerprints_py(
        hashes, count, coeffs
    )


def test_the_python_engine_runs_without_numpy(monkeypatch):
    """The core install has no numpy: every path of the Python engine (a large batch,
    settling early, a limited history, a library window) then runs without it."""
    import builtins

    from seqdedup.base import engine

    real_import = builtins.__import__

    def no_numpy(name, *args, **kwargs):
        if name == "numpy" or name.startswith("numpy."):
            raise ImportError("no numpy here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_numpy)
    monkeypatch.setattr(engine, "_numpy", False)
    monkeypatch.setenv("SEQDEDUP_ENGINE", "python")
    records = [f"r{i % 97}".encode() for i in range(3_000)]
    for options in ({}, {"max_history": 500}, {"annotate": True}):
        dedup = Deduplicator(window_size=3, **options)
        got = dedup.feed(records) + dedup.flush()
        want = kept(records, 3, options.get("max_history"))
        assert [r for r in got if not r.startswith(b"[")] == want, options
