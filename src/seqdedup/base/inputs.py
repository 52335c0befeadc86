"""Which inputs a run may read, opened in turn: standard input or named files, each
checked before any output (a missing one, a directory, no permission), pipes never
opened twice, and their identities and sizes (a library's own files are refused as
input; percent done)."""

from __future__ import annotations

import os
import sys
from collections.abc import Generator, Sequence
from typing import IO

from seqdedup.base.errors import SeqdedupError


def open_input(name: str | None, stdin: IO[bytes] | None) -> IO[bytes]:
    if name in (None, "-"):
        if stdin is not None:
            return stdin
        if sys.stdin is None:  # started with standard input closed (<&-)
            raise SeqdedupError("standard input is closed: name an input file")
        raw: IO[bytes] = sys.stdin.buffer.raw  # type: ignore[union-attr]
        return raw
    assert name is not None
    if os.path.isdir(name):
        raise SeqdedupError(f"input '{name}' is a directory, not a file")
    try:
        return open(name, "rb", buffering=0)
    except OSError as exc:
        raise SeqdedupError(f"cannot open input '{name}': {exc.strerror or exc}") from None


def check_inputs(names: Sequence[str], stdin: IO[bytes] | None) -> None:
    """Every input can be opened: a missing or unreadable one is an error before any
    output (each is opened again, in turn, when its turn comes)."""
    import stat

    for name in names:
        if name == "-":
            open_input(name, stdin)  # standard input is there
            continue
        try:
            mode = os.stat(name).st_mode
        except OSError:
            mode = 0  # opening says why
        if stat.S_ISREG(mode) or stat.S_ISDIR(mode) or not mode:
            open_input(name, stdin).close()
        elif not os.access(name, os.R_OK):  # a pipe is not opened twice: data would be lost
            raise SeqdedupError(f"cannot open input '{name}': Permission denied")


def identities(names: Sequence[str], stdin: IO[bytes] | None) -> dict[tuple[int, int], str]:
    """Each input's (device, inode), for telling whether it is a library's file."""
    found = {}
    for name in names:
        try:
            if name == "-":
                fd = stdin.fileno() if stdin is not None else 0
                info = os.fstat(fd)
            else:
                info = os.stat(name)
        except (OSError, ValueError, AttributeError):
            continue
        found[(info.st_dev, info.st_ino)] = name if name != "-" else "(standard input)"
    return found


def sources_of(names: Sequence[str], stdin: IO[bytes] | None) -> Generator[IO[bytes], None, None]:
    """The inputs in order, each open only while it is read."""
    for name in names:
        source = open_input(name, stdin)
        try:
            yield source
        finally:
            if name != "-":
                source.close()


def inputs_size(names: Sequence[str]) -> int | None:
    """The bytes of all inputs, for percent done; None if one is not a regular file."""
    import stat

    total = 0
    for name in names:
        try:
            info = os.stat(name) if name != "-" else os.fstat(0)
        except OSError:
            return None
        if not stat.S_ISREG(info.st_mode):
            return None
        total += info.st_size
    return total or None


def decoded_inputs(
    names: Sequence[str], stdin: IO[bytes] | None, decompress: bool
) -> Generator[bytes, None, None]:
    """The inputs' bytes in chunks, one input after another, decompressed (unless not
    ``decompress``)."""
    import contextlib

    from seqdedup.base.records import DecodedChunks

    with contextlib.closing(sources_of(names, stdin)) as sources:
        for source in sources:
            yield from DecodedChunks(source, decompress)


def first_records(name: str, delimiter: bytes, count: int, decompress: bool) -> list[bytes]:
    """The first ``count`` complete records of the named regular file (decompressed as
    a run reads it), from at most its first MiB; [] where :func:`named_chunks` gives
    nothing (reading standard input here would take what the run reads)."""
    chunks = named_chunks(name, decompress)
    if chunks is None:
        return []
    head = bytearray()
    try:
        for chunk in chunks:
            head += chunk
            if head.count(delimiter) >= count or len(head) >= 1 << 20:
                break
    except (OSError, SeqdedupError):  # (the run says why)
        return []
    finally:
        chunks.close()
    return bytes(head).split(delimiter)[:-1][:count]


def named_chunks(name: str, decompress: bool = True) -> Generator[bytes, None, None] | None:
    """A named regular file's bytes again, in chunks (decompressed as a run reads it);
    None for standard input, a pipe or a device, which cannot be read twice, and for a
    file that cannot be opened now."""
    import stat

    from seqdedup.base.records import DecodedChunks

    try:
        if name == "-" or not stat.S_ISREG(os.stat(name).st_mode):
            return None
        file = open(name, "rb")  # noqa: SIM115 (closed when the chunks are)
    except OSError:
        return None

    def chunks() -> Generator[bytes, None, None]:
        with file:
            yield from DecodedChunks(file, decompress)

    return chunks()


def open_plain(name: str, decompress: bool, most: int | None = None) -> IO[bytes] | None:
    """A named regular file open for reading (unbuffered, at its start) where it is
    not compressed (with ``decompress``: else any file is plain) and holds at most
    ``most`` bytes; None otherwise, and for standard input or a file that cannot be
    opened now (it is then read as chunks, which say why where it cannot be read)."""
    import stat

    from seqdedup.base.records import HEAD_BYTES, compression_of

    if name == "-":
        return None
    try:
        if not stat.S_ISREG(os.stat(name).st_mode):  # (a FIFO is not opened twice)
            return None
        file = open(name, "rb", buffering=0)  # noqa: SIM115 (the caller closes it)
    except OSError:
        return None
    try:
        info = os.fstat(file.fileno())
        plain = stat.S_ISREG(info.st_mode) and (most is None or info.st_size <= most)
        if plain and decompress:
            plain = compression_of(file.read(HEAD_BYTES)) is None
            file.seek(0)
    except OSError:
        plain = False
    if not plain:
        file.close()
        return None
    return file
