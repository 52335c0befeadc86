"""The known attacks on record hashes (docs/engine.md, "Identity"), run on every path.

* **XXH64's seed-independent differential.** XXH64's stripe round is
  ``acc = rotl(acc + w * P2, 31) * P1`` per lane. Adding ``2**63 * P2^-1`` to a record's
  first 8-byte word flips one bit before the rotation (bit 30 after it); subtracting
  ``2**30 * P1 * P2^-1`` from the word 32 bytes later (the same lane, the next stripe)
  cancels the difference whenever that bit was 0. Two different 64-byte records then
  hash equal for about half of all seeds, whatever the seed: a hash that decided skips
  with XXH64 dropped later, different lines. The test builds such pairs, checks that
  they do collide for XXH64 itself (so the attack stays known if someone reaches for a
  faster hash), and that seqdedup keeps every record of them on every path.
* **Thue-Morse against a polynomial modulo 2**128.** A duplicate run's content was a
  polynomial in its key hashes modulo 2**128 with an odd base; for T the Thue-Morse
  word of 2**15 records over two keys and T' its complement, the two contents are equal
  whatever the keys, so two different sequences were counted as one.
"""

from __future__ import annotations

import json
import random
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ENGINES, kernel_built, run_in_process, user_env

MASK = (1 << 64) - 1
P1 = 0x9E3779B185EBCA87
P2 = 0xC2B2AE3D27D4EB4F
FLIP = (1 << 63) * pow(P2, -1, 1 << 64) & MASK  # added to word 0
CANCEL = (1 << 30) * P1 * pow(P2, -1, 1 << 64) & MASK  # taken from word 4


def xxh64_pair(rng: random.Random) -> tuple[bytes, bytes]:
    """Two different 64-byte records, neither with a newline, that XXH64 gives one
    hash for about half of all seeds."""
    while True:
        words = [rng.getrandbits(64) for _ in range(8)]
        twin = list(words)
        twin[0] = (twin[0] + FLIP) & MASK
        twin[4] = (twin[4] - CANCEL) & MASK
        a, b = struct.pack("<8Q", *words), struct.pack("<8Q", *twin)
        if b"\n" not in a + b and b"\r" not in a + b:
            return a, b


def attack_pairs(count: int = 40) -> list[tuple[bytes, bytes]]:
    rng = random.Random(49)
    return [xxh64_pair(rng) for _ in range(count)]


def test_the_pairs_do_collide_for_xxh64():
    """The attack is real: for every pair, XXH64 under a random seed gives both records
    one hash about half the time (two independent lanes: a quarter)."""
    xxhash = pytest.importorskip("xxhash")
    rng = random.Random(7)
    for a, b in attack_pairs(5):
        assert a != b
        same = sum(
            xxhash.xxh64_intdigest(a, seed) == xxhash.xxh64_intdigest(b, seed)
            for seed in (rng.getrandbits(64) for _ in range(2000))
        )
        assert 800 < same < 1200, same


def test_the_pairs_get_different_key_hashes_in_both_engines():
    from seqdedup.base.hashes import python_hash_bytes

    pairs = attack_pairs()
    flat = [record for pair in pairs for record in pair]
    digests = [python_hash_bytes([r]) for r in flat]
    assert len(set(digests)) == len(flat)
    if kernel_built():
        from seqdedup import _kernel

        for seed in (0, 1, 2**128 - 1, random.Random(3).getrandbits(128)):
            raw = _kernel.hash_records(flat, seed)
            assert len({raw[i : i + 16] for i in range(0, len(raw), 16)}) == len(flat)


def run(args: list[str], engine: str, data: bytes | None = None):
    """The command's output on ``engine``, run in this process (its records, not the
    process, are the point)."""
    result = run_in_process(args, data or b"", {**user_env(), "SEQDEDUP_ENGINE": engine})
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture(params=ENGINES)
def engine(request):
    return request.param


@pytest.mark.parametrize(
    "options",
    [
        ["-w", "1"],
        ["-w", "1", "--bypass", "^$"],  # a filter: the record path
        ["-w", "1", "--annotate"],  # attribution on the chunk path
        ["-w", "1", "-m", "100"],  # a limited history
        ["-w", "1", "--fold"],
    ],
)
def test_every_record_of_the_pairs_is_kept(tmp_path, engine, options):
    pairs = attack_pairs()
    path = tmp_path / "pairs.txt"
    lines = [a for a, _ in pairs] + [b for _, b in pairs]
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    for _ in range(3):  # every run draws its own secret
        assert run(["-q", *options, str(path)], engine).splitlines() == lines


def test_windows_of_the_pairs_behind_a_shared_record_are_kept(tmp_path, engine):
    """-w 2: windows (ctx_N, a_N) and (ctx_N, b_N) differ in their second record."""
    pairs = attack_pairs()
    lines = [x for n, (a, _) in enumerate(pairs) for x in (b"ctx%d" % n, a)]
    lines += [x for n, (_, b) in enumerate(pairs) for x in (b"ctx%d" % n, b)]
    path = tmp_path / "pairs.txt"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    assert run(["-q", "-w", "2", str(path)], engine).splitlines() == lines


@pytest.mark.parametrize("reported", [False, True])
def test_every_record_of_the_pairs_is_kept_per_stream(tmp_path, engine, reported):
    pairs = attack_pairs()
    lines = [b"s1 " + a for a, _ in pairs] + [b"s2 " + b for _, b in pairs]
    path = tmp_path / "pairs.txt"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    extra = ["--annotate"] if reported else []
    got = run(["-q", "-w", "1", "--stream-by", r"^(s\d) ", *extra, str(path)], engine)
    assert got.splitlines() == lines


def test_a_library_of_one_half_never_removes_the_other(tmp_path, engine):
    pairs = attack_pairs()
    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    first.write_bytes(b"".join(a + b"\n" for a, _ in pairs))
    second.write_bytes(b"".join(b + b"\n" for _, b in pairs))
    library = tmp_path / "lib"
    run(["-q", "-w", "1", "-l", str(library), str(first)], engine)
    got = run(["-q", "-w", "1", "-r", str(library), str(second)], engine)
    assert got.splitlines() == [b for _, b in pairs]
    # and the library does hold the first half: read again, all of it is removed
    assert run(["-q", "-w", "1", "-r", str(library), str(first)], engine) == b""


@pytest.mark.skipif(not kernel_built(), reason="the Dask engine's kernel steps")
@pytest.mark.parametrize("dask_engine", ENGINES)
def test_every_record_of_the_pairs_is_kept_on_dask(tmp_path, dask_engine):
    pytest.importorskip("distributed")
    pairs = attack_pairs()
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_bytes(b"".join(a + b"\n" for a, _ in pairs))
    second.write_bytes(b"".join(b + b"\n" for _, b in pairs))
    script = Path(sys.executable).parent / "seqdedup-dask"
    out = tmp_path / "out"
    result = subprocess.run(
        [
            str(script),
            "-q",
            "-w",
            "1",
            "--scheduler",
            "sync",
            "--output-dir",
            str(out),
            str(first),
            str(second),
        ],
        capture_output=True,
        env={**user_env(), "SEQDEDUP_ENGINE": dask_engine},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert (out / "a.txt").read_bytes() == first.read_bytes()
    assert (out / "b.txt").read_bytes() == second.read_bytes()


# -- Thue-Morse against a run's content hash -------------------------------------------


def thue_morse_runs(k: int = 15) -> bytes:
    """One stream: T, T', T, T' (each 2**k records over two keys), each after a new
    record. With -w 1 every one of them is a duplicate run (the first T but its first
    two records), so a run's content decides which are one sequence."""
    length = 1 << k
    bits = [bin(i).count("1") & 1 for i in range(length)]
    words = (b"s1 alpha\n", b"s1 beta\n")
    t = b"".join(words[b] for b in bits)
    t_prime = b"".join(words[1 - b] for b in bits)
    blocks = (t, t_prime, t, t_prime)
    return b"".join(b"s1 new %d\n" % n + block for n, block in enumerate(blocks))


def test_thue_morse_runs_are_different_sequences_per_stream(tmp_path, engine):
    """Four duplicate runs of three contents: T less its first two records, T' (seen 2
    times), T (2 times: T less two records is another sequence) and T' again (3 times).
    Counted by the kernel's stream matcher (statistics alone) and by the stream decider
    (markers)."""
    path = tmp_path / "tm.txt"
    path.write_bytes(thue_morse_runs())
    options = ["-w", "1", "--stream-by", r"^(s\d) "]
    stats = run_in_process(
        [*options, "--stats-format", "json", str(path)],
        env={**user_env(), "SEQDEDUP_ENGINE": engine},
    )
    assert json.loads(stats.stderr)["statistics"]["sequences"]["unique_tracked"] == 3
    marked = run(["-q", *options, "--annotate", str(path)], engine)
    counts = [line.rsplit(b"seen ", 1)[1] for line in marked.splitlines() if b"DUPLICATE" in line]
    assert counts == [b"2 times)]", b"2 times)]", b"2 times)]", b"3 times)]"], counts
