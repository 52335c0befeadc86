"""Compressed input: gzip, bzip2, xz and zstd read transparently (records stage)."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import subprocess
import sys
import zlib

import pytest
from backports import zstd
from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup import SeqdedupError
from seqdedup.base.records import DecodedChunks, _format_of

from conftest import examples

COMPRESS = {
    "gzip": gzip.compress,
    "bzip2": bz2.compress,
    "xz": lzma.compress,
    "zstd": lambda data: zstd.compress(data),
}


class Trickle(io.RawIOBase):
    """A source that hands out at most ``step`` bytes per read, like a slow pipe."""

    def __init__(self, data: bytes, step: int) -> None:
        self._data = data
        self._step = step

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        piece, self._data = self._data[: min(size, self._step)], self._data[min(size, self._step) :]
        return piece


def decoded(data: bytes, step: int = 1 << 20, decompress: bool = True) -> bytes:
    return b"".join(DecodedChunks(Trickle(data, step), decompress))


@settings(max_examples=examples(150), deadline=None)
@given(
    data=st.binary(max_size=3000) | st.text(max_size=3000).map(str.encode),
    kind=st.sampled_from(sorted(COMPRESS)),
    members=st.integers(1, 3),
    step=st.sampled_from([1, 2, 7, 100, 1 << 20]),
)
def test_every_format_decodes_to_the_original_bytes(data, kind, members, step):
    compressed = b"".join(COMPRESS[kind](data) for _ in range(members))
    assert decoded(compressed, step) == data * members


@given(
    data=st.binary(max_size=200).filter(lambda d: _format_of(d) in (None, "")),
    step=st.sampled_from([1, 3, 1 << 20]),
)
def test_plain_input_passes_through_unchanged(data, step):
    """Anything that does not start with a compression header (a prefix of one too)."""
    assert decoded(data, step) == data
    assert decoded(data, step, decompress=False) == data


def test_no_decompress_reads_bytes_as_they_are():
    packed = gzip.compress(b"a\nb\n")
    assert decoded(packed, decompress=False) == packed


def test_large_output_comes_in_bounded_steps():
    data = b"x" * (5 << 20)
    chunks = list(DecodedChunks(io.BytesIO(gzip.compress(data))))
    assert b"".join(chunks) == data and max(map(len, chunks)) <= 1 << 20


@pytest.mark.parametrize("kind", sorted(COMPRESS))
def test_a_truncated_stream_is_an_error_after_what_was_decoded(kind):
    data = b"".join(b"line %d\n" % i for i in range(20_000))
    packed = COMPRESS[kind](data)
    out = []
    with pytest.raises(SeqdedupError, match=r"truncated|cannot decompress"):
        for chunk in DecodedChunks(io.BytesIO(packed[: len(packed) // 2]), True, 4096):
            out.append(chunk)
    assert data.startswith(b"".join(out))


def test_corrupt_data_is_an_error_naming_the_format():
    packed = bytearray(gzip.compress(b"hello\n" * 100))
    packed[12:20] = b"\xff" * 8
    with pytest.raises(SeqdedupError, match=r"cannot decompress .*\(gzip\)"):
        decoded(bytes(packed))


def test_zstd_without_its_support_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "backports", None)
    monkeypatch.setitem(sys.modules, "compression", None)
    with pytest.raises(SeqdedupError, match=r"pip install 'seqdedup\[zstd\]'"):
        decoded(COMPRESS["zstd"](b"a\n"))


@pytest.mark.parametrize("kind", sorted(COMPRESS))
def test_command_line_output_equals_the_plain_file(run_cli, tmp_path, kind):
    text = b"".join(b"start %d\nA\nB\nC\nend\n" % (i % 3) for i in range(50)) + b"last"
    plain = run_cli(["-q", "-w", "3"], text)
    path = tmp_path / "log.any-name"
    path.write_bytes(COMPRESS[kind](text))
    for args in ([str(path)], []):  # a named file, and standard input
        result = run_cli(["-q", "-w", "3", "-M", *args], path.read_bytes() if not args else b"")
        assert (result.returncode, result.stderr) == (0, b"")
        assert result.stdout == run_cli(["-q", "-w", "3", "-M"], text).stdout
    assert plain.returncode == 0


def test_command_line_truncated_file_is_one_line_after_the_output(run_cli, tmp_path):
    text = b"".join(b"record %d\n" % i for i in range(50_000))
    packed = gzip.compress(text)
    path = tmp_path / "cut.gz"
    path.write_bytes(packed[: len(packed) // 2])
    result = run_cli(["-q", "-w", "1", str(path)])
    assert result.returncode == 1
    assert result.stderr.count(b"\n") == 1 and b"truncated" in result.stderr
    assert len(result.stdout) > 0 and text.startswith(result.stdout)


def decoded_before_damage(packed):
    out = []
    with pytest.raises(SeqdedupError):
        for chunk in DecodedChunks(io.BytesIO(packed), True):
            out.append(chunk)
    return b"".join(out)


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(COMPRESS))
def test_every_record_decoded_before_the_damage_is_written_and_counted(run_cli, tmp_path, kind):
    text = b"".join(b"record %d\n" % i for i in range(200_000))
    packed = COMPRESS[kind](text)
    path = tmp_path / "cut"
    path.write_bytes(packed[: len(packed) * 2 // 3])
    decoded = decoded_before_damage(path.read_bytes())
    assert decoded and text.startswith(decoded)
    for extra in ([], ["-l", str(tmp_path / "L")]):
        result = run_cli(["-q", "-w", "3", *extra, str(path)])  # the last 2 too, not held
        assert (result.returncode, result.stdout) == (1, decoded)
        written = decoded.count(b"\n") + (not decoded.endswith(b"\n"))
        assert result.stderr == (
            f"seqdedup: cannot decompress '{path}' ({kind}): ".encode()
            + result.stderr.split(b"): ", 1)[1].split(b";")[0]
            + f"; {written:,} records written before it\n".encode()
        )
    assert list((tmp_path / "L").iterdir()) == []  # and nothing saved


BOMB_MAKERS = {
    "gzip": lambda: zlib.compressobj(9, zlib.DEFLATED, 31),
    "bzip2": lambda: bz2.BZ2Compressor(9),
    "xz": lambda: lzma.LZMACompressor(preset=0),
    "zstd": lambda: zstd.ZstdCompressor(level=1),
}
BOMB_MIB = {"gzip": 128, "bzip2": 128, "xz": 128, "zstd": 256}  # zstd's is cheap to make


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(BOMB_MAKERS))
def test_a_decompression_bomb_is_streamed_in_bounded_memory(tmp_path, kind):
    """A few kB that expand to 128 MiB (256 MiB for zstd) of 1 MiB records: the run's
    whole address space stays below the expanded size."""
    import subprocess

    from conftest import seqdedup_command, user_env

    record = b"a" * (1 << 20) + b"\n"
    packer = BOMB_MAKERS[kind]()
    path = tmp_path / "bomb"
    with path.open("wb") as out:
        for _ in range(BOMB_MIB[kind]):
            out.write(packer.compress(record))
        out.write(packer.flush())
    assert path.stat().st_size < 2 << 20
    # Under a 100 MB address-space limit, which the expansion alone exceeds (a run needs
    # under 50 MB of it; the bombs were 256 MiB under 300 MB, at twice the CPU): a bound
    # that needs no sampling of the run.
    command = f"ulimit -v 100000; exec {' '.join(seqdedup_command())} -q -w 1 {path}"
    done = subprocess.run(["bash", "-c", command], capture_output=True, env=user_env())
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout == record


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["gzip"])
def test_a_bomb_of_empty_lines_runs_in_bounded_memory(tmp_path, kind):
    """A few kB that expand to 33 million empty lines, under a 300 MB address-space
    limit: a decoded chunk holds at most 1 MiB (records too, then), and the storm of
    repeats keeps nothing per record (the key log keeps only what repeated nothing).
    (One format: each decoder's bound on what one call decodes is the bomb test's
    above, run on every format; what is held per record does not depend on it.)"""
    from conftest import seqdedup_command, user_env

    packer = BOMB_MAKERS[kind]()
    path = tmp_path / "bomb"
    with path.open("wb") as out:
        for _ in range(32):
            out.write(packer.compress(b"\n" * (1 << 20)))
        out.write(packer.flush())
    assert path.stat().st_size < 64 << 10
    command = f"ulimit -v 300000; exec {' '.join(seqdedup_command())} -q {path}"
    p = subprocess.run(["bash", "-c", command], capture_output=True, env=user_env(), timeout=300)
    assert (p.returncode, p.stdout, p.stderr) == (0, b"\n" * 10, b"")
