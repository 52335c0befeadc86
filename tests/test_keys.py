from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup import deduplicate
from seqdedup.base.hashes import hash_ints
from seqdedup.keys.maker import KeyMaker

from conftest import examples, kernel_built


def test_skip_chars_counts_characters_in_text_mode():
    keys = KeyMaker(skip_chars=2).keys(["éé-x".encode(), b"ab-x", b"a"])
    assert keys == [b"-x", b"-x", b""]


def test_skip_chars_counts_bytes_in_byte_mode():
    assert KeyMaker(skip_chars=1, byte_mode=True).keys(["éx".encode()]) == [b"\xa9x"]


@given(st.binary(max_size=40), st.integers(0, 10))
def test_invalid_utf8_never_fails_and_record_is_untouched(record, skip):
    key = KeyMaker(skip_chars=skip).keys([record])[0]
    # What is written is the record as read (never its key or a re-encoding of it).
    assert list(deduplicate([record, record], window_size=1, skip_chars=skip)) == [record]
    text = record.decode("utf-8", "surrogateescape")
    assert key == text[skip:].encode("utf-8", "surrogateescape")


def test_hashes_equal_for_equal_keys():
    maker = KeyMaker(skip_chars=3)
    a, b, c = hash_ints(maker.hashes([b"12:hello", b"34:hello", b"12:world"]))
    assert a == b != c


def fields_skipped(record: bytes, count: int) -> bytes:
    """uniq -f, literally: a field is blanks (space, tab), then non-blanks."""
    at = 0
    for _ in range(count):
        while at < len(record) and record[at] in b" \t":
            at += 1
        while at < len(record) and record[at] not in b" \t":
            at += 1
    return record[at:]


field_records = st.lists(
    st.lists(st.sampled_from([b"a", b"b", b" ", b"\t", b"\xc3\xa9", b"\xff"]), max_size=8).map(
        b"".join
    ),
    max_size=40,
)


@settings(max_examples=examples(200), deadline=None)
@given(records=field_records, fields=st.integers(0, 3), chars=st.integers(0, 2))
def test_skip_fields_then_chars_on_both_engines(records, fields, chars):
    """The key leaves out the first fields, then characters: Python's keys, the
    kernel's hashes (records, a library row, a whole range) all as the literal rule."""
    from seqdedup.library.store import encode_records

    maker = KeyMaker(chars, skip_fields=fields)
    want = [KeyMaker(chars).keys([fields_skipped(record, fields)])[0] for record in records]
    assert maker.keys(records) == want
    if not kernel_built():
        return
    from seqdedup import _kernel as kernel

    hashed = kernel.hash_records(want, 7)
    assert kernel.hash_records(records, 7, chars, False, 0, fields) == hashed
    assert kernel.hash_encoded(encode_records(records), 7, chars, False, 0, fields) == hashed
    data = b"".join(record + b"\n" for record in records)
    assert kernel.split_hash(data, b"\n", 7, chars, False, skip_fields=fields)[1] == hashed
    for record, key in zip(records, want, strict=True):
        assert record[kernel._key_offset(record, chars, False, fields) :] == key


@settings(max_examples=examples(200), deadline=None)
@given(
    records=st.lists(
        st.lists(
            st.sampled_from([b"a", b" ", b"7", b"10.0.0.1", b"\xc3\xa9", b"\xff", b"0x1f"]),
            max_size=8,
        ).map(b"".join),
        max_size=30,
    ),
    fields=st.integers(0, 2),
    chars=st.integers(0, 2),
    byte_mode=st.booleans(),
    steps=st.sampled_from([(), (("normalize", "number"),), (("normalize", "all"),)]),
)
def test_the_kernel_measures_the_keys_it_hashes(records, fields, chars, byte_mode, steps):
    """A minimum size's key lengths from the kernel (hash_records with sizes, the
    keys never made) are the lengths of the keys Python makes, beside their hashes."""
    if not kernel_built():
        pytest.skip("the kernel is not built")
    from seqdedup.config.groups import KeyOptions
    from seqdedup.engine.choice import engine_named
    from seqdedup.keys.maker import key_maker

    options = KeyOptions(skip_chars=chars, skip_fields=fields, byte_mode=byte_mode, key_steps=steps)
    engine = engine_named("c")
    maker = key_maker(options, engine.kernel, 7)
    keys = maker.keys(records)
    hashes, lengths = maker.hashes_and_sizes(records, "bytes")
    assert list(lengths) == [len(key) for key in keys]
    assert hashes == maker.hashes(records)
    assert engine.kernel is not None and hashes == engine.kernel.hash_records(keys, 7)


def test_skip_fields_is_what_uniq_f_compares():
    """A real `uniq -f N` on two records keeps one exactly when seqdedup -w 1 -f N
    skips the second, on records with blanks, tabs and empty fields."""
    import random
    import shutil
    import subprocess

    uniq = shutil.which("uniq")
    if uniq is None:
        pytest.skip("no uniq on this machine")
    rng = random.Random(3)
    parts = ["x", "y", " ", "  ", "\t", "z"]
    for _ in range(60):
        first, second = ("".join(rng.choice(parts) for _ in range(rng.randint(0, 6))) for _ in "ab")
        count = rng.randint(0, 3)
        data = f"{first}\n{second}\n".encode()
        env = {"LC_ALL": "C", "PATH": "/usr/bin:/bin"}
        by_uniq = subprocess.run([uniq, "-f", str(count)], input=data, capture_output=True, env=env)
        ours = list(
            deduplicate([first.encode(), second.encode()], window_size=1, skip_fields=count)
        )
        assert len(by_uniq.stdout.splitlines()) == len(ours), (first, second, count)


@settings(max_examples=examples(100), deadline=None)
@given(
    records=field_records,
    fields=st.integers(0, 3),
    window=st.integers(1, 3),
    cuts=st.lists(st.integers(0, 200), max_size=4),
)
def test_skip_fields_on_the_chunk_path_follows_the_rule(records, fields, window, cuts):
    """Raw bytes in any cut (the kernel's chunk path, or the Python engine's record
    path): the output is the rule's over the keys without their first fields."""
    from seqdedup import Deduplicator

    from oracle import skipped_flags

    records = [r.replace(b"\n", b"") for r in records]
    skipped = skipped_flags([fields_skipped(r, fields) for r in records], window)
    want = b"".join(r + b"\n" for r, s in zip(records, skipped, strict=True) if not s)
    data = b"".join(r + b"\n" for r in records)
    dedup = Deduplicator(window_size=window, max_history=None, skip_fields=fields)
    out, at = [], 0
    for cut in sorted(set(cuts)):
        out.append(dedup.feed_bytes(data[at:cut]))
        at = max(at, cut)
    out += [dedup.feed_bytes(data[at:]), dedup.flush_bytes(True)]
    assert b"".join(out) == want


def test_skip_fields_through_the_installed_command(tmp_path):
    """`seqdedup -f 2` (and its config key) as uniq -f 2 compares: the date and time
    fields of these lines differ, what follows them repeats."""
    import subprocess

    from conftest import seqdedup_command, user_env

    log = tmp_path / "app.log"
    log.write_bytes(
        b"2026-11-22 09:00:01 GET /a 200\n2026-11-22 09:00:02 GET /b 200\n"
        b"2026-11-22 09:00:03 GET /a 200\n2026-11-22 09:00:04 GET /b 200\n"
        b"2026-11-22 09:00:05 GET /c 200\n"
    )
    done = subprocess.run(
        [*seqdedup_command(), "-q", "-w", "2", "-f", "2", str(log)],
        capture_output=True,
        env=user_env(),
    )
    assert done.returncode == 0
    assert (
        done.stdout == b"2026-11-22 09:00:01 GET /a 200\n2026-11-22 09:00:02 GET /b 200\n"
        b"2026-11-22 09:00:05 GET /c 200\n"
    )
    bad = subprocess.run([*seqdedup_command(), "-f", "-1", str(log)], capture_output=True)
    assert bad.returncode == 1 and bad.stdout == b"" and b"--skip-fields" in bad.stderr
