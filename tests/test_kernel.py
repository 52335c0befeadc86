"""The compiled kernel against the oracle, the Python engine and published test vectors."""

from __future__ import annotations

import io
import itertools
import os
import sqlite3
from array import array
from contextlib import closing

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from seqdedup import __version__
from seqdedup.api import Deduplicator, process_stream
from seqdedup.base import hashes as hash_forms
from seqdedup.config.groups import FilterRule
from seqdedup.config.normalize import CLASSES
from seqdedup.config.settings import Config
from seqdedup.engine.choice import engine_name
from seqdedup.engine.fingerprints import coefficients, fingerprints_py
from seqdedup.engine.matcher import WindowMatcher
from seqdedup.library.store import encode_records

from conftest import examples, kernel_built, user_env
from oracle import skipped_flags

if not kernel_built():
    if os.environ.get("SEQDEDUP_NO_EXTENSION"):
        pytest.skip("installed without the compiled kernel", allow_module_level=True)
    raise AssertionError(
        "the compiled kernel was not built: install with a C compiler, or set "
        "SEQDEDUP_NO_EXTENSION=1 to test the pure-Python engine alone"
    )

from seqdedup import _kernel

SEED = 0x0123456789ABCDEF_FEDCBA9876543210
# -- the record hash: SipHash-2-4-128 -------------------------------------------------


def siphash128(data: bytes, key: bytes) -> bytes:
    """SipHash-2-4 with its 128-bit output, from the paper, slowly and plainly: the
    reference the kernel's record hash is checked against (16 bytes, lo word first)."""
    mask = (1 << 64) - 1

    def rotl(x: int, r: int) -> int:
        return (x << r | x >> (64 - r)) & mask

    k0, k1 = int.from_bytes(key[:8], "little"), int.from_bytes(key[8:], "little")
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D ^ 0xEE]
    v += [k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]

    def rounds(n: int) -> None:
        for _ in range(n):
            v[0] = (v[0] + v[1]) & mask
            v[1] = rotl(v[1], 13) ^ v[0]
            v[0] = rotl(v[0], 32)
            v[2] = (v[2] + v[3]) & mask
            v[3] = rotl(v[3], 16) ^ v[2]
            v[0] = (v[0] + v[3]) & mask
            v[3] = rotl(v[3], 21) ^ v[0]
            v[2] = (v[2] + v[1]) & mask
            v[1] = rotl(v[1], 17) ^ v[2]
            v[2] = rotl(v[2], 32)

    whole = len(data) - len(data) % 8
    words = [int.from_bytes(data[i : i + 8], "little") for i in range(0, whole, 8)]
    words.append(int.from_bytes(data[whole:], "little") | (len(data) & 0xFF) << 56)
    for m in words:
        v[3] ^= m
        rounds(2)
        v[0] ^= m
    v[2] ^= 0xEE
    rounds(4)
    lo = v[0] ^ v[1] ^ v[2] ^ v[3]
    v[1] ^= 0xDD
    rounds(4)
    hi = v[0] ^ v[1] ^ v[2] ^ v[3]
    return lo.to_bytes(8, "little") + hi.to_bytes(8, "little")


# The reference implementation's vectors (key 00..0f, message 00..(n-1)): the 128-bit
# output for n = 0..3, and the 64-bit variant's for n = 0 and 15 (the paper's example).
SIP128_VECTORS = [
    "a3817f04ba25a8e66df67214c7550293",
    "da87c1d86b99af44347659119b22fc45",
    "8177228da4a45dc7fca38bdef60affe4",
    "9c70b60c5267a94e5f33b6b02985ed51",
]
REFERENCE_KEY = bytes(range(16))


@pytest.mark.parametrize("length", range(len(SIP128_VECTORS)))
def test_the_record_hash_is_siphash_2_4_128_by_its_published_vectors(length):
    message = bytes(range(length))
    seed = int.from_bytes(REFERENCE_KEY, "little")
    assert _kernel.hash_records([message], seed).hex() == SIP128_VECTORS[length]
    assert siphash128(message, REFERENCE_KEY).hex() == SIP128_VECTORS[length]


@settings(max_examples=examples(300), deadline=None)
@given(records=st.lists(st.binary(max_size=200), max_size=6), seed=st.integers(0, 2**128 - 1))
def test_hash_records_is_siphash_of_each_key_keyed_with_the_seed(records, seed):
    """A key hash is SipHash-2-4-128 keyed with the run's 128-bit seed (k0: its low 64
    bits), as the plain reference above computes it."""
    key = seed.to_bytes(16, "little")
    assert _kernel.hash_records(records, seed) == b"".join(siphash128(r, key) for r in records)


@settings(max_examples=examples(200), deadline=None)
@given(
    records=st.lists(
        st.text("ab 0123456789:-T.xf", max_size=120).map(str.encode), min_size=1, max_size=5
    ),
    seed=st.integers(0, 2**128 - 1),
)
def test_a_normalised_key_hashed_in_pieces_is_siphash_of_the_whole(records, seed):
    """--normalize feeds the hash in pieces (the key is never held whole): the result
    is the hash of the normalised key, however it was cut."""
    classes = 0
    for bit in CLASSES.values():
        classes |= bit
    key = seed.to_bytes(16, "little")
    normalised = [_kernel.normalize(r, classes) for r in records]
    got = _kernel.hash_records(records, seed, 0, False, classes)
    assert got == b"".join(siphash128(n, key) for n in normalised)


def test_a_seed_outside_128_bits_is_refused():
    for bad in (-1, 2**128):
        with pytest.raises(ValueError):
            _kernel.hash_records([b"a"], bad)
        with pytest.raises(ValueError):
            _kernel.Matcher(2, seed=bad)
    with pytest.raises(TypeError):
        _kernel.Matcher(2, seed=1.5)


@settings(max_examples=examples(300), deadline=None)
@given(records=st.lists(st.binary(max_size=20), max_size=8), skip=st.integers(0, 4), cut=st.data())
def test_hash_encoded_equals_hash_records_and_refuses_damaged_rows(records, skip, cut):
    encoded = encode_records(records)
    assert _kernel.hash_encoded(encoded, 3, skip) == _kernel.hash_records(records, 3, skip)
    shorter = cut.draw(st.integers(0, len(encoded) - 1))
    with pytest.raises(ValueError):
        _kernel.hash_encoded(encoded[:shorter], 3)
    with pytest.raises(ValueError):
        _kernel.hash_encoded(encoded + b"x", 3)


# -- skip-chars ------------------------------------------------------------------------

utf8ish = st.lists(
    st.one_of(
        st.text(max_size=3).map(lambda t: t.encode("utf-8", "surrogatepass")),
        st.binary(max_size=3),
        st.sampled_from([b"\xe2\x82", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf"]),
    ),
    max_size=6,
).map(b"".join)


@settings(max_examples=examples(500), deadline=None)
@given(record=utf8ish, skip=st.integers(0, 12))
def test_key_offset_counts_characters_as_python_decodes_them(record, skip):
    text = record.decode("utf-8", "surrogateescape")
    want = text[skip:].encode("utf-8", "surrogateescape")
    assert record[_kernel._key_offset(record, skip) :] == want
    assert _kernel._key_offset(record, skip, True) == min(skip, len(record))


# -- the matcher, record by record ----------------------------------------------------

keys_strategy = st.integers(1, 5).flatmap(
    lambda k: st.lists(st.sampled_from("abcde"[:k]), max_size=300)
)


def drive(m, hashes, chunks, sources=None):
    """Push in the given chunks; after each call, read the sources of every window
    covering the records it decided (what attribution may ask for)."""
    form = pack if isinstance(m, _kernel.Matcher) else list  # each engine's own input
    keep: list[bool] = []

    def take(flags):
        if sources is not None:
            window = m.window_size
            for w in range(max(0, len(keep) - window + 1), len(keep) + len(flags)):
                sources[w] = m.source(w)
        keep.extend(flags)

    pos = 0
    for size in chunks:
        take(m.push(form(hashes[pos : pos + size])))
        pos += size
    take(m.push(form(hashes[pos:])))
    take(m.finish())
    return keep


def pack(values):
    """128-bit key hashes or fingerprints (ints) in the kernel's form: 16 bytes each."""
    return hash_forms.hash_words(list(values)).tobytes()


def pack_starts(values):
    return array("q", values).tobytes()


@settings(max_examples=examples(400), deadline=None)
@given(
    keys=keys_strategy,
    window=st.integers(1, 12),
    history=st.one_of(st.none(), st.integers(100, 160)),
    chunks=st.lists(st.integers(0, 40), max_size=30),
    library=st.lists(st.lists(st.sampled_from("abcde"), max_size=15), max_size=3),
    compact=st.booleans(),
)
def test_kernel_matcher_equals_python_matcher_and_oracle(
    keys, window, history, chunks, library, compact
):
    """Decisions, repeat sources and new-material flags, library windows included; with
    ``compact`` the kernel drops the key hashes of repeats from its log after every push
    (unlimited history), so comparisons read the kept records from the archive."""
    hashes = [hash(k) for k in keys]
    engines = [
        _kernel.Matcher(window, history, seed=SEED, compact_min=1 if compact else 1 << 16),
        WindowMatcher(window, history, seed=SEED),
    ]
    results = []
    for m in engines:
        m.new_material = []
        region = [hash(None)]
        fps, starts = [], []
        for sequence in library:
            first = len(region)
            region += [hash(k) for k in sequence] + [hash(None)]
            count = len(sequence) - window + 1
            if count > 0:
                seq_hashes = [hash(k) for k in sequence]
                fps += fingerprints_py(seq_hashes, count, coefficients(window, SEED))
                starts += range(first, first + count)
        if fps:
            is_kernel = isinstance(m, _kernel.Matcher)
            starts = [s - len(region) for s in starts]
            m.add_library_windows(
                pack(fps) if is_kernel else fps,
                pack_starts(starts) if is_kernel else starts,
                pack(region) if is_kernel else region,
            )
        sources: dict[int, int | None] = {}
        keep = drive(m, hashes, chunks, sources)
        results.append((keep, sources, m.new_material, m.decided))
    assert results[0] == results[1]
    assert results[0][0] == [not s for s in skipped_flags(keys, window, history, library)]


blocks_strategy = st.lists(
    st.lists(st.sampled_from("abcdef"), min_size=1, max_size=9), min_size=1, max_size=5
)


@settings(max_examples=examples(300), deadline=None)
@given(
    blocks=blocks_strategy,
    order=st.lists(st.integers(0, 4), min_size=1, max_size=60),
    window=st.integers(2, 10),
    chunks=st.lists(st.integers(0, 25), max_size=20),
)
def test_the_compacted_key_log_compares_as_the_whole_one(blocks, order, window, chunks):
    """Blocks that come back in storms (what the key log is compacted for): with the
    log compacted after every push, decisions, sources and new-material flags are those
    of the whole log and of the rule; the archive then holds many spans, and runs read
    their sources from any of them."""
    keys = [key for k in order for key in blocks[k % len(blocks)]]
    hashes = [hash(k) for k in keys]
    results = []
    for compact_min in (1, 3, 1 << 30):
        m = _kernel.Matcher(window, None, seed=SEED, compact_min=compact_min)
        m.new_material = []
        sources: dict[int, int | None] = {}
        keep = drive(m, hashes, chunks, sources)
        results.append((keep, sources, m.new_material))
    assert results[0] == results[1] == results[2]
    assert results[0][0] == [not s for s in skipped_flags(keys, window)]


@given(
    st.lists(st.integers(0, 2**128 - 1), min_size=1, max_size=60),
    st.integers(1, 20),
    st.integers(0, 2**128 - 1),
)
def test_kernel_fingerprints_are_the_python_definition(hashes, window, seed):
    count = len(hashes) - window + 1
    if count > 0:
        raw = _kernel.Matcher(window, seed=seed).fingerprints(pack(hashes), count)
        want = fingerprints_py(hashes, count, coefficients(window, seed))
        assert hash_forms.hash_ints(raw) == want


@pytest.mark.parametrize("history", [None, 50])
@pytest.mark.parametrize("window", [1, 4])
def test_windows_equal_in_one_lane_stay_distinct(window, history):
    """A window's identity is 128 bits end to end: records whose 64-bit hashes are forced
    equal (every low lane the same, or every high lane) are still told apart by the other
    lane, through table growth, in both history modes and as library windows; a 64-bit
    identity would skip everything after the first window."""
    n = 20_000
    for distinct in (lambda k: 7 | k << 64, lambda k: k | 7 << 64):
        keys = [distinct(k) for k in range(n)]
        m = _kernel.Matcher(window, history)
        assert m.push(pack(keys)) + m.finish() == [True] * n
        m.new_input()
        again = keys[n - 40 :]  # still remembered with either history
        assert m.push(pack(again)) + m.finish() == [False] * 40
        library = _kernel.Matcher(window, history)
        lib_keys = [distinct(k) for k in range(n, n + 10)]
        count = 10 - window + 1
        fps = library.fingerprints(pack(lib_keys), count)
        region = pack([*lib_keys, 0])  # the last library record at -2
        library.add_library_windows(fps, pack_starts(range(-count - window, -window)), region)
        assert (
            library.push(pack(keys[:50] + lib_keys)) + library.finish()
            == [True] * 50 + [False] * 10
        )


def test_history_table_stays_bounded():
    m = _kernel.Matcher(1, 100)
    for start in range(0, 200_000, 1000):
        m.push(pack(range(start, start + 1000)))
    assert m.remembered_windows <= 2 * 100
    assert m._table_bytes <= 2 * 4 * 8 * 512


def test_bad_arguments_are_errors_not_crashes():
    with pytest.raises(ValueError):
        _kernel.Matcher(0)
    with pytest.raises(ValueError):
        _kernel.Matcher(5, 4)
    with pytest.raises(ValueError):
        _kernel.Matcher(2, None, delimiter=b"")
    m = _kernel.Matcher(3)
    with pytest.raises(ValueError):
        m.push(b"1234567")  # not whole int64s
    with pytest.raises(ValueError):
        m.fingerprints(pack([1, 2]), 1)  # a window needs 3
    with pytest.raises(RuntimeError):
        m.feed_chunk(b"a\n")  # made without a delimiter
    with pytest.raises(ValueError, match="region"):
        m.add_library_windows(pack([1]), pack_starts([-9]))  # no region to confirm them
    m.push(pack([1]))
    with pytest.raises(RuntimeError):
        m.add_library_windows(pack([1]), pack_starts([-9]))  # after a push
    c = _kernel.Matcher(1, None, delimiter=b"\n")
    c.finish_chunks()
    with pytest.raises(RuntimeError):
        c.feed_chunk(b"a\n")


# -- whole runs: the chunk path and every option, both engines --------------------------

records_strategy = st.lists(
    st.one_of(st.sampled_from(["a", "b", "c", "", "ab"]), st.just("é"), st.just("x" * 70)),
    max_size=120,
)


class Chunked(io.RawIOBase):
    def __init__(self, data: bytes, cuts: list[int]):
        edges = sorted({0, len(data), *(c for c in cuts if c < len(data))})
        self.parts = [data[a:b] for a, b in itertools.pairwise(edges)]

    def read(self, size=-1):
        return self.parts.pop(0) if self.parts else b""


def engines_agree(
    records, window, history, delimiter, trailing, cuts, inverse, ending=b"", **options
):
    """Run the records (joined by the delimiter, then `ending`) through both engines in
    the same cuts; check that the output bytes and explanations are equal; return both
    statistics."""
    data = delimiter.join(r.encode() for r in records) + (delimiter if trailing else b"")
    data += ending
    options.update(window_size=window, max_history=history, delimiter=delimiter, inverse=inverse)
    c_out, c_stats, c_explained = run_engine("c", data, cuts, **options)
    py_out, py_stats, py_explained = run_engine("python", data, cuts, **options)
    assert c_out == py_out
    assert c_explained == py_explained
    return c_stats, py_stats


def run_engine(engine, data, cuts, **options):
    before = os.environ.get("SEQDEDUP_ENGINE")
    os.environ["SEQDEDUP_ENGINE"] = engine
    try:
        sink = io.BytesIO()
        explained: list[str] = []
        on_explain = explained.append if options.pop("explain", False) else None
        stats = process_stream(Chunked(data, cuts), sink, on_explain=on_explain, **options)
        return sink.getvalue(), stats, explained
    finally:
        if before is None:
            os.environ.pop("SEQDEDUP_ENGINE")
        else:
            os.environ["SEQDEDUP_ENGINE"] = before


@settings(max_examples=examples(300), deadline=None)
@given(
    records=records_strategy,
    window=st.integers(1, 6),
    history=st.sampled_from([None, 100]),
    delimiter=st.sampled_from([b"\n", b"\0", b"||", b"aa", b"\r\n", b"aba"]),
    trailing=st.booleans(),
    cuts=st.lists(st.integers(0, 600), max_size=12),
    inverse=st.booleans(),
    skip=st.sampled_from([0, 1, 3]),
    byte_mode=st.booleans(),
    extra=st.sampled_from(["", "annotate", "explain", "bypass", "fold", "stream", "fold+stream"]),
    ending=st.sampled_from([b"", b"", b"\n", b"\r\n"]),
)
def test_both_engines_give_identical_runs(
    records, window, history, delimiter, trailing, cuts, inverse, skip, byte_mode, extra, ending
):
    """Output bytes, explanations and statistics, over delimiters, a final delimiter or
    not, a newline ending the input (a delimiter of its own in text mode), filters,
    --stream-by and --fold (whose lines name sequences by their content)."""
    options = dict(skip_chars=skip, byte_mode=byte_mode)
    if extra == "annotate":
        options["annotate"] = True
    elif extra == "explain":
        options["explain"] = True
    elif extra == "bypass" and not byte_mode:
        from seqdedup.config.groups import FilterRule

        options["filters"] = (FilterRule("bypass", "^b"),)
    if "fold" in extra and not inverse:
        options["fold"] = True
    if "stream" in extra and not byte_mode:
        options["stream_by"] = "^(a|b)"  # streams a and b; other records go on the last one
    c_stats, py_stats = engines_agree(
        records, window, history, delimiter, trailing, cuts, inverse, ending, **options
    )
    assert c_stats == py_stats


@settings(max_examples=examples(300), deadline=None)
@given(
    records=st.lists(
        st.sampled_from([b"", b"a", b"ab", b"ba", b"aab", b"xab|ab", b"|"]), max_size=40
    ),
    delimiter=st.sampled_from([b"\n", b"|", b"ab"]),
    literal=st.sampled_from([b"", b"a", b"ab", b"b|a", b"aa"]),
    anchored=st.booleans(),
    open_=st.data(),
)
def test_literal_mask_is_contains_or_startswith_per_record(
    records, delimiter, literal, anchored, open_
):
    """The kernel's literal scan marks exactly the open records that contain the
    literal (start with it, anchored), whatever lies between them."""
    region, pairs = b"", array("q")
    for record in records:
        pairs.extend((len(region), len(region) + len(record)))
        region += record + delimiter
    wanted = open_.draw(st.lists(st.booleans(), min_size=len(records), max_size=len(records)))
    got = _kernel.literal_mask(region, pairs.tobytes(), literal, anchored, bytes(wanted))
    test = bytes.startswith if anchored else bytes.__contains__
    assert list(got) == [int(w and test(r, literal)) for r, w in zip(records, wanted, strict=True)]
    with pytest.raises(ValueError):
        _kernel.literal_mask(region, pairs.tobytes() + b"x", literal, anchored, bytes(wanted))
    if records:
        bad = array("q", pairs)
        bad[-1] = len(region) + 1  # past the region
        with pytest.raises(ValueError):
            _kernel.literal_mask(region, bad.tobytes(), literal, anchored, bytes(wanted))


FILTER_SETS = [
    (FilterRule("bypass", "^b"),),  # an anchored literal: one scan of the region
    (FilterRule("track", "a|c"),),  # a regular expression: record by record
    (FilterRule("bypass", "é"), FilterRule("track", "^a")),  # non-ASCII: decoded records
    (FilterRule("track", "x"), FilterRule("bypass", "a")),  # literals and a track rule
    (FilterRule("bypass", r"[^\S]"), FilterRule("bypass", "^$")),  # no bytes twin; empties
    (FilterRule("bypass", r"\s"),),  # a bytes twin with \s spelled for text
]


@settings(max_examples=examples(250), deadline=None)
@given(
    records=st.lists(
        st.one_of(st.sampled_from(["a", "b", "c", "", "ab", "b a", "cx"]), st.just("é a")),
        max_size=120,
    ),
    window=st.integers(1, 5),
    history=st.sampled_from([None, 100]),
    delimiter=st.sampled_from([b"\n", b"\0", b"||", b"\r\n"]),
    trailing=st.booleans(),
    cuts=st.lists(st.integers(0, 600), max_size=12),
    inverse=st.booleans(),
    filters=st.sampled_from(FILTER_SETS),
    top=st.booleans(),
)
def test_the_filtered_chunk_path_equals_the_record_path(
    records, window, history, delimiter, trailing, cuts, inverse, filters, top
):
    """With filters the kernel splits each chunk, the filters classify its records in
    one region and the kernel decides and writes them: the same bytes, counts and
    --top rows as the Python engine, which takes them record by record."""
    c_stats, py_stats = engines_agree(
        records,
        window,
        history,
        delimiter,
        trailing,
        cuts,
        inverse,
        filters=filters,
        top=5 if top else 0,
    )
    assert c_stats == py_stats
    assert c_stats.top_sequences == py_stats.top_sequences


@settings(max_examples=examples(60), deadline=None)
@given(
    first=records_strategy,
    second=records_strategy,
    window=st.integers(1, 4),
    cuts=st.lists(st.integers(0, 600), max_size=6),
    marks=st.sampled_from(["annotate", "fold", "none"]),
    history=st.sampled_from([None, 100]),
)
# A run of two pieces with different sources: the second is saved from inside its run
@example(list("abcqxyzrabcxyzs"), [], 3, [], "none", None)
@example(list("abcqxyzrabcxyzs"), list("xyzabc"), 3, [5, 7], "annotate", 100)
def test_both_engines_save_and_load_identical_libraries(
    tmp_path_factory, first, second, window, cuts, marks, history
):
    """The kernel saves from its chunk path (the stretches of new material and the runs'
    records it hands over), the Python engine from the record path: the same rows."""
    saved = []
    options = {"annotate": marks == "annotate", "fold": marks == "fold", "max_history": history}
    for engine in ("c", "python"):
        library = tmp_path_factory.mktemp(f"lib-{engine}")
        outputs = []
        for records in (first, second):
            data = b"\n".join(r.encode() for r in records) + b"\n"
            out, stats, _ = run_engine(
                engine, data, cuts, window_size=window, library_dir=library, **options
            )
            outputs.append((out, stats))
        with closing(sqlite3.connect(library / "seqdedup.sqlite")) as db:
            rows = sorted(db.execute("SELECT digest, records, length, kind, count FROM sequences"))
        saved.append((outputs, rows))
    assert saved[0] == saved[1]


def test_records_longer_than_a_chunk_and_split_delimiters():
    data = b"x" * 5000 + b"--" + b"y" + b"--" + b"x" * 5000 + b"--" + b"y" + b"--"
    cuts = list(range(1, len(data), 7))
    out, stats, _ = run_engine("c", data, cuts, window_size=2, delimiter=b"--")
    assert out == b"x" * 5000 + b"--y--"
    assert (stats.total, stats.skipped) == (4, 2)


def test_feed_and_feed_bytes_cannot_be_mixed():
    d = Deduplicator(window_size=2)
    d.feed_bytes(b"a\n")
    with pytest.raises(RuntimeError):
        d.feed([b"b"])
    d = Deduplicator(window_size=3)
    d.feed([b"a", b"b"])
    with pytest.raises(RuntimeError):
        d.flush_bytes()  # the records fed never went through the chunk path


def test_the_kernel_keeps_push_and_the_chunk_path_apart():
    m = _kernel.Matcher(3, None, delimiter=b"\n")
    m.push(pack([1, 2, 3, 4]))
    for call in (lambda: m.feed_chunk(b"a\n"), m.finish_chunks):
        with pytest.raises(RuntimeError):
            call()
    c = _kernel.Matcher(3, None, delimiter=b"\n")
    c.feed_chunk(b"a\nb\n")
    for call in (lambda: c.push(pack([1])), c.finish):
        with pytest.raises(RuntimeError):
            call()


def test_engine_is_named(run_cli):
    env = {k: v for k, v in user_env().items() if k != "SEQDEDUP_ENGINE"}
    p = run_cli(["--version"], env=env)
    assert p.stdout.decode().strip() == f"seqdedup {__version__} (engine: c)"
    p = run_cli(["--version"], env={**env, "SEQDEDUP_ENGINE": "python"})
    assert p.stdout.decode().strip() == f"seqdedup {__version__} (engine: python)"
    assert Deduplicator(Config()).engine == engine_name()


def test_large_table_keeps_every_first_start_through_growth():
    """Past the size where the table is mapped and given back as it doubles."""
    m = _kernel.Matcher(1)
    n = 300_000
    keys = [(k * 0x9E3779B97F4A7C15 + 1) % 2**63 for k in range(n)]
    assert m.push(pack(keys)) == [True] * n
    assert m._table_bytes >= 1 << 20
    again = list(reversed(keys[: n // 2]))
    assert m.push(pack(again)) == [False] * len(again)
    assert [m.source(n + k) for k in range(0, len(again), 997)] == [
        n // 2 - 1 - k for k in range(0, len(again), 997)
    ]


# -- the raw module API under hostile use (issue: an audit of the C kernel) ------------
class TestRawApi:
    def test_a_failed_or_missing_init_leaves_an_unusable_object(self):
        k = _kernel
        m = k.Matcher.__new__(k.Matcher)
        for call in (
            lambda: m.push(b"\0" * 16),
            m.finish,
            lambda: m.source(0),
            m.new_input,
            lambda: m.feed_chunk(b"a\n"),
            lambda: m.fingerprints(b"", 0),
        ):
            with pytest.raises(RuntimeError, match="not initialised"):
                call()
        bad = k.Matcher.__new__(k.Matcher)
        with pytest.raises(ValueError):
            bad.__init__(3, 1)  # history below the window: nothing stored
        with pytest.raises(RuntimeError, match="not initialised"):
            bad.push(b"\0" * 16)  # no division by a zero stride
        bad.__init__(3, 100)  # a later __init__ that succeeds makes it usable
        assert bad.push(pack([1, 2, 3, 1, 2, 3])) == [True, True, True, False]
        with pytest.raises(RuntimeError, match="already initialised"):
            bad.__init__(3)

    def test_a_call_that_fails_half_way_breaks_the_object(self):
        k = _kernel
        m = k.Matcher(2, None, delimiter=b"\n")
        m.feed_chunk(b"a\nb\n")
        with pytest.raises(TypeError):
            m.feed_chunk(12)  # refused before any change: still usable
        m.feed_chunk(b"a\n")
        m.new_material = [1]
        m.new_material = None
        lib = k.Matcher(2)
        with pytest.raises(ValueError, match="at most -W - 1"):  # the second start is bad
            lib.add_library_windows(pack([5, 6]), array("q", [-3, 0]), pack([1, 2, 3]))
        with pytest.raises(RuntimeError, match="unusable after an earlier error"):
            lib.push(pack([1, 2]))

    @pytest.mark.parametrize("value", [-1, 2**64])
    def test_negative_or_huge_skip_chars_are_refused(self, value):
        k = _kernel
        with pytest.raises((ValueError, OverflowError)):
            k.Matcher(2, skip_chars=value)
        with pytest.raises(ValueError):
            k.hash_records([b"a"], 0, value)
        with pytest.raises(ValueError):
            k.hash_encoded(b"\0\0\0\0", 0, value)
        with pytest.raises(ValueError):
            k._key_offset(b"abc", value)
        with pytest.raises(ValueError):
            k.normalize(b"abc", -1)

    def test_hashes_must_be_16_byte_values_of_8_byte_integers(self):
        k = _kernel
        m = k.Matcher(1)
        bad_forms = (array("d", [1.0, 2.0]), array("i", [1, 2, 3, 4]), array("q", [7]), b"\0" * 8)
        for bad in bad_forms:
            with pytest.raises(ValueError, match="16-byte values"):
                m.push(bad)
        assert m.push(array("q", [7, 9])) == [True]
        assert m.push(array("Q", [7, 9])) == [False]
        assert m.push(b"\x07" + b"\0" * 7 + b"\x09" + b"\0" * 7) == [False]
        assert m.push(array("q", [7, 8])) == [True]  # the same low lane, another key

    def test_the_new_material_list_takes_part_in_garbage_collection(self):
        import gc
        import weakref

        k = _kernel

        class Holder(list):
            pass

        m = k.Matcher(1)
        cycle = Holder()
        cycle.append(m)  # list -> matcher -> list
        m.new_material = cycle
        alive = weakref.ref(cycle)
        del m, cycle
        gc.collect()
        assert alive() is None
        assert gc.is_tracked(k.Matcher(1))

    def test_two_json_paths_choosing_the_same_value_never_overflow(self):
        k = _kernel
        record = b'{"a": "' + b"x" * 5000 + b'"}'
        keys = k.json_keys([record], [(b"a", (b"a",))] * 64)
        assert keys == [None]  # longer than the record: left to Python, not overflowed

    def test_a_heap_type_in_a_multi_phase_module(self):
        k = _kernel
        assert k.GIL_MINSIZE == 2048
        assert k.Matcher.__flags__ & (1 << 9)  # Py_TPFLAGS_HEAPTYPE

    def test_the_types_are_immutable_and_test_helpers_are_private(self):
        """As CPython's own heap types: nothing assigns to a kernel type; what only the
        tests call has an underscore name."""
        k = _kernel
        for kind in (k.Matcher, k.Attributor, k.StreamMatcher):
            assert kind.__flags__ & (1 << 8)  # Py_TPFLAGS_IMMUTABLETYPE
            with pytest.raises(TypeError):
                kind.push = None
        for name in ("key_offset",):
            assert not hasattr(k, name) and hasattr(k, "_" + name)
        assert not hasattr(k.Matcher(2), "table_bytes")
        assert k.Matcher(2)._table_bytes >= 0

    def test_the_new_material_list_is_not_swapped_during_a_call(self):
        """A chunk decided without the GIL: another thread may not replace the list the
        call would append to (nor take the stretches) until the call is over; it is told
        the matcher is in use, and the call's own result is whole."""
        import threading

        k = _kernel
        data = b"".join(b"line %d\n" % (i % 5000) for i in range(400_000))
        refused = []
        for _attempt in range(20):
            m = k.Matcher(3, None, delimiter=b"\n")
            done = threading.Event()

            def feed(m=m, done=done):
                try:
                    m.feed_chunk(data)
                finally:
                    done.set()

            worker = threading.Thread(target=feed)
            worker.start()
            while not done.is_set():
                try:
                    m.new_material = []
                    m.new_material = None
                except RuntimeError as exc:
                    assert "in use" in str(exc)
                    refused.append(exc)
                    break
            worker.join()
            m.finish_chunks()
            assert m.decided == 400_000
            if refused:
                break
        assert refused  # the setter met a running call at least once, and refused it

    def test_hashing_releases_the_gil_on_large_inputs(self):
        """Two threads hash a large library row at once: both finish with the right
        answer, and the chunk path of two matchers runs in two threads."""
        import threading

        from seqdedup.library.store import encode_records

        k = _kernel
        records = [b"record %d" % i for i in range(200_000)]
        encoded = encode_records(records)
        want = k.hash_records(records, 5)
        results = []
        threads = [
            threading.Thread(target=lambda: results.append(k.hash_encoded(encoded, 5)))
            for _ in range(2)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results == [want, want]


@settings(max_examples=examples(200), deadline=None)
@given(
    sequences=st.lists(st.lists(st.sampled_from("abc"), max_size=12), max_size=4),
    keys=st.lists(st.sampled_from("abcd"), max_size=80),
    window=st.integers(1, 5),
    history=st.sampled_from([None, 0, 50]),  # (past the window)
    collide=st.booleans(),
)
def test_a_library_region_gives_the_windows_its_fingerprints_give(
    sequences, keys, window, history, collide
):
    """add_library_region (the matcher rolls each sequence's fingerprints itself) and
    add_library_windows (given every window's fingerprint and start) make the same
    windows seen: the same decisions after them, with and without forced collisions."""
    history = None if history is None else window + history
    seed = 0x1234_5678_9ABC_DEF0_0FED_CBA9_8765_4321
    region, firsts, lengths = array("Q", [7, 7]), array("q"), array("q")
    for sequence in sequences:
        firsts.append(len(region) // 2)
        lengths.append(len(sequence))
        region.extend(hash_forms.hash_words([hash(k) for k in sequence]))
        region.extend((7, 7))  # the sentinel after each sequence
    size = len(region) // 2
    by_region = _kernel.Matcher(window, history, seed=seed, force_collisions=collide)
    by_windows = _kernel.Matcher(window, history, seed=seed, force_collisions=collide)
    # (an unaligned buffer is copied, an aligned one held in place: the same windows)
    given = memoryview(b"\0" + region.tobytes())[1:] if collide else region
    by_region.add_library_region(given, firsts, lengths)
    fps, starts = array("Q"), array("q")
    for first, length in zip(firsts, lengths, strict=True):
        inside = length - window + 1
        if inside > 0:
            fps.frombytes(by_windows.fingerprints(region[2 * first :], inside))
            starts.extend(range(first - size, first - size + inside))
    by_windows.add_library_windows(fps, starts, region)
    hashes = hash_forms.hash_words([hash(k) for k in keys])
    decided = []
    for m in (by_region, by_windows):  # the decisions, and the library window each repeats
        flags = m.push(hashes)
        decided.append((flags + m.finish(), [m.source(w) for w in range(len(keys))]))
    assert decided[0] == decided[1]


def test_a_library_region_out_of_order_or_past_its_end_is_refused():
    region = array("Q", [7, 7] * 6)  # six records
    for firsts, lengths in (([3, 1], [1, 1]), ([1], [5]), ([-1], [2]), ([1], [-1])):
        with pytest.raises(ValueError, match="in order in the region"):
            _kernel.Matcher(2).add_library_region(region, array("q", firsts), array("q", lengths))
    with pytest.raises(ValueError, match="differ in length"):
        _kernel.Matcher(2).add_library_region(region, array("q", [1]), array("q", []))
    pushed = _kernel.Matcher(2)
    pushed.push(array("Q", [1, 2]))
    with pytest.raises(RuntimeError, match="before any push"):
        pushed.add_library_region(region, array("q", [1]), array("q", [2]))
    once = _kernel.Matcher(2)
    once.add_library_region(region, array("q", [1]), array("q", [2]))
    with pytest.raises(ValueError, match="given once"):
        once.add_library_region(region, array("q", [3]), array("q", [2]))


def test_a_library_region_held_in_place_outlives_its_name():
    """The matcher holds an aligned region in place: dropping the caller's name for it
    changes nothing, and while held it cannot be resized under the matcher."""
    import gc

    keys = [hash(k) for k in "abcx"]
    region = array("Q", [7, 7, *hash_forms.hash_words(keys[:3]).tolist(), 7, 7])
    m = _kernel.Matcher(3)
    m.add_library_region(region, array("q", [1]), array("q", [3]))
    with pytest.raises(BufferError):
        region.append(0)
    del region
    gc.collect()
    hashes = hash_forms.hash_words(keys[3:] + keys[:3])  # x, then the library's a b c
    assert m.push(hashes) + m.finish() == [True, False, False, False]


NO_KERNEL_RUNS = r"""
import io, json, sys
asked = []


class Refusing:  # any import of the kernel fails, and is counted (a path that falls
    # back quietly on ImportError would pass unseen otherwise)

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "seqdedup._kernel":
            asked.append(name)
            raise ImportError("the kernel is blocked")
        return None


if sys.argv[1] == "blocked":
    sys.meta_path.insert(0, Refusing)
from seqdedup.cli import seqdedup as cli

lines = [b"ts=%d ERROR disk %d full" % (i, i % 3) if i % 9 == 0 else b"pod-%d step %d"
         % (i % 4, i % 40) for i in range(3000)]
data = b"\n".join(lines) + b"\n"
good, bad = sys.argv[2], sys.argv[3]
with open(good, "wb") as f:
    f.write(data[: len(data) // 2])
with open(bad, "wb") as f:
    f.write(data + b"FATAL a line GOOD never had\n")
answers = []
library = good + ".library"
for args in (
    ["-w", "2", "--bypass", "ts=", "--track", "ERROR"],
    ["-w", "2", "--normalize", "all", "--fold"],
    ["-w", "1", "--stream-by", "^pod-[0-9]+", "--fold"],
    ["-w", "1", "--stream-by", "^pod-[0-9]+", "--annotate", "--top", "3"],
    ["-w", "auto", "--normalize", "all"],
    ["-w", "2", "-l", library],
    ["-w", "2", "-r", library, "--annotate"],
    ["--suggest-window"],
    ["--budget", "1k"],
    ["diff", "--normalize", "all", good, bad],
    ["diff", "--budget", "1k", "--stream-by", "^pod-[0-9]+", good, bad],
):
    out, err = io.BytesIO(), io.StringIO()
    status = cli.main([*args, "-q"] if args[0] != "diff" else args, io.BytesIO(data), out, err)
    answers.append([status, out.getvalue().decode("utf-8", "replace"), err.getvalue()])
print(json.dumps([len(asked), answers]))
"""


@pytest.mark.skipif(not kernel_built(), reason="the compiled kernel is not installed")
def test_the_python_engine_never_imports_the_kernel(tmp_path):
    """Under SEQDEDUP_ENGINE=python, runs with filters (a large batch: the numpy scan),
    normalisation, streams (fold, markers, --top), -w auto, a library saved and read,
    --suggest-window, the budget and diff never ask for ``seqdedup._kernel`` (an import
    of it fails, and is counted), and give the same answers as where it can be
    imported."""
    import json
    import subprocess
    import sys

    from conftest import user_env

    env = {**user_env(), "SEQDEDUP_ENGINE": "python"}
    answers = []
    for mode in ("blocked", "present"):
        good, bad = tmp_path / f"{mode}-good.log", tmp_path / f"{mode}-bad.log"
        done = subprocess.run(
            [sys.executable, "-c", NO_KERNEL_RUNS, mode, str(good), str(bad)],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        asked, runs = json.loads(done.stdout)
        assert asked == 0, f"{mode}: the kernel was asked for {asked} times"
        answers.append(runs)
    blocked, present = answers
    assert [a[0] for a in blocked] == [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1]
    for got, want in zip(blocked, present, strict=True):
        assert got[0] == want[0] and got[2] == want[2]
        # (the budget's and diff's texts name the files and a digest of the input)
        assert got[1].replace("blocked", "present") == want[1]


def test_the_python_engines_tests_cannot_import_the_kernel(engine):
    """Run by the ``engine`` fixture on the Python engine, a test cannot import the
    kernel in either spelling (tests/conftest.py): a stray use of it fails there."""
    if engine != "python":  # (the kernel's tests import it as before)
        from seqdedup import _kernel

        assert _kernel.record_bounds(b"a\nb", b"\n")
        return
    with pytest.raises(ImportError):
        from seqdedup import _kernel
    with pytest.raises(ImportError):
        import seqdedup._kernel  # noqa: F401
    from seqdedup.engine.choice import chosen_engine

    assert chosen_engine().kernel is None
