"""The library's store: the SQLite schema, rows of records, opening a library for
reading, the files of a library directory, and the staging files' names.

A library is a directory. It may hold:

* ``seqdedup.sqlite``, the store: an SQLite database (rollback journal: a save of
  large sequences lands 2.5x faster than through a WAL, readers need no write access,
  and a killed save still rolls back) with one row per sequence (its records,
  independent of the delimiter) and one row per run (configuration, timestamps,
  statistics);
* plain sequence files, each file one sequence whose records are split by the run's
  delimiter, anywhere in the directory or its sub-folders: beside the database, or in
  a ``sequences/`` sub-folder (the uniqseq layout, ``<blake2b-128 hex>.uniqseq``).
  Hidden files (``.DS_Store``, ``.gitignore``, ``.keep``, staging files) and
  ``README*`` are not sequences; one trailing delimiter at the end of a file is dropped.

Reading needs no write access (another user's library, read-only storage); see
:func:`open_for_reading`.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import sys
from array import array
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from itertools import accumulate, pairwise
from pathlib import Path
from typing import TYPE_CHECKING

from seqdedup.base.errors import SeqdedupError

if TYPE_CHECKING:
    pass


DB_NAME = "seqdedup.sqlite"
DB_FILES = {DB_NAME, DB_NAME + "-wal", DB_NAME + "-shm", DB_NAME + "-journal"}
BUSY_TIMEOUT_S = 120.0

SCHEMA = """
CREATE TABLE IF NOT EXISTS sequences (
    -- a rowid table: rows of megabytes land 1.8x faster than in a WITHOUT ROWID one
    -- (libraries made before that keep their table; both take the same statements)
    digest  BLOB NOT NULL UNIQUE, -- blake2b-128 of the encoded records
    records BLOB NOT NULL,      -- see encode_records
    length  INTEGER NOT NULL,   -- number of records
    kind    TEXT NOT NULL,      -- 'new': first-seen material; 'repeat': a repeated piece
    count   INTEGER NOT NULL,   -- sightings (pieces: times seen, summed over runs)
    run_id  INTEGER,            -- the run that first saved it
    last_run INTEGER            -- the last run that saved or matched it (NULL: run_id)
);
CREATE TABLE IF NOT EXISTS runs (
    id         INTEGER PRIMARY KEY,
    started    TEXT NOT NULL,
    finished   TEXT NOT NULL,
    config     TEXT NOT NULL,   -- JSON
    statistics TEXT NOT NULL    -- JSON
);
"""


def encode_records(records: list[bytes]) -> bytes:
    """Count, lengths (little-endian uint32) and contents: no delimiter involved."""
    return encode_parts(record_lengths(records), b"".join(records))


def record_lengths(records: list[bytes]) -> array[int]:
    """The records' lengths, as a row stores them (native order: see encode_parts)."""
    return array("I", map(len, records))


def encode_parts(lengths: array[int], contents: bytes | bytearray) -> bytes:
    """A row from its records' lengths (native uint32) and their contents joined."""
    if sys.byteorder == "big":
        lengths = array("I", lengths)
        lengths.byteswap()
    return len(lengths).to_bytes(4, "little") + lengths.tobytes() + contents


def check_encoded(blob: bytes) -> None:
    """Raise ValueError unless the lengths in ``blob`` add up to what it holds."""
    head = 4 + 4 * int.from_bytes(blob[:4], "little")
    if len(blob) < head or sum(_stored_lengths(blob)) != len(blob) - head:
        raise ValueError("record lengths do not match the stored data")


def _stored_lengths(blob: bytes) -> array[int]:
    """The record lengths a row begins with (after its count; stored little-endian, as
    encode_parts writes them)."""
    count = int.from_bytes(blob[:4], "little")
    lengths = array("I")
    lengths.frombytes(blob[4 : 4 + 4 * count])
    if sys.byteorder == "big":
        lengths.byteswap()
    return lengths


def record_offsets(blob: bytes) -> array[int]:
    """Where each record of an encoded row starts in it, and where the last ends (record
    k is ``blob[offsets[k]:offsets[k + 1]]``): a few records read out of a large row
    without making the others."""
    head = 4 + 4 * int.from_bytes(blob[:4], "little")
    return array("q", accumulate(_stored_lengths(blob), initial=head))


def decode_records(blob: bytes) -> list[bytes]:
    return [blob[start:end] for start, end in pairwise(record_offsets(blob))]


def digest_of(encoded: bytes) -> bytes:
    from hashlib import blake2b  # (here: hashlib loads OpenSSL, which reading never needs)

    return blake2b(encoded, digest_size=16).digest()


# -- loading -----------------------------------------------------------------------


def _uri(path: Path, query: str) -> str:
    """An SQLite URI for any file name (``?``, ``#`` and ``%`` are quoted)."""
    return f"{path.absolute().as_uri()}?{query}"


_HAS_SEQUENCES = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'sequences'"


def open_for_reading(path: Path) -> sqlite3.Connection | None:
    """A connection to a library database that may be another user's or on read-only
    storage; None for a database without sequences (a 0-byte file, say)."""
    try:
        # mode=rw first: a save killed mid-commit leaves a hot journal that only a
        # writable connection rolls back (SQLite falls back to reading a file it may
        # not write).
        connection = sqlite3.connect(_uri(path, "mode=rw"), uri=True, timeout=BUSY_TIMEOUT_S)
        try:
            has_table = connection.execute(_HAS_SEQUENCES).fetchone()[0]
        except sqlite3.Error:
            connection.close()
            raise
    except sqlite3.Error as exc:
        # A library in WAL mode (written by seqdedup 0.1's first releases) needs a
        # writable -shm file beside it; on storage this user cannot write, read the main
        # file as it stands, unless an unfinished save or unmerged WAL says it is not
        # whole.
        pending = [
            side.name
            for side in (path.with_name(path.name + "-journal"), path.with_name(path.name + "-wal"))
            if side.is_file() and side.stat().st_size > 0
        ]
        if pending:
            raise SeqdedupError(
                f"library database '{path}' cannot be read: {exc}; it holds an "
                f"unfinished save ({', '.join(pending)}) that only a user who can write "
                "the library can roll back (any seqdedup run of theirs on it does)"
            ) from None
        try:
            connection = sqlite3.connect(_uri(path, "mode=ro&immutable=1"), uri=True)
            has_table = connection.execute(_HAS_SEQUENCES).fetchone()[0]
        except sqlite3.Error as exc2:
            raise SeqdedupError(f"library database '{path}' cannot be read: {exc2}") from None
    if not has_table:
        connection.close()
        return None
    try:
        mistyped = connection.execute(_MISTYPED).fetchone()[0]
    except sqlite3.Error as exc:
        connection.close()
        raise SeqdedupError(f"library database '{path}' cannot be read: {exc}") from None
    if mistyped:
        connection.close()
        raise SeqdedupError(
            f"library database '{path}' is corrupt: {mistyped:,} of its sequences have "
            "a value of the wrong type or out of range (changed by hand?)"
        )
    return connection


# SQLite keeps any value in any column: a row changed by hand is found before it is read.
_MISTYPED = (
    "SELECT count(*) FROM sequences WHERE typeof(digest) != 'blob' OR typeof(records) != "
    "'blob' OR typeof(length) != 'integer' OR typeof(count) != 'integer' OR count < 0"
)


def plain_files(directory: Path) -> Iterator[Path]:
    """Regular files below ``directory``, in name order, sub-folders included (linked
    folders are not followed, so a link loop ends nothing). Hidden files (``.DS_Store``,
    ``.gitignore``, ``.keep``, staging files), ``README*`` and the database are not
    sequences. A library is used whole or not at all: a folder or a linked file this
    user cannot read is an error naming it (a broken or looping link is no sequence)."""

    def unreadable(exc: OSError) -> None:
        raise SeqdedupError(
            f"library folder '{exc.filename}' cannot be read: {exc.strerror or exc} "
            "(a library is used whole or not at all)"
        )

    for root, folders, files in os.walk(directory, onerror=unreadable, followlinks=False):
        folders[:] = sorted(f for f in folders if not f.startswith("."))
        for name in sorted(files):
            if name.startswith((".", "README")) or name in DB_FILES:
                continue
            path = Path(root, name)
            try:
                regular = stat.S_ISREG(path.stat().st_mode)  # follows a link to a file
            except PermissionError as exc:
                raise SeqdedupError(
                    f"library file '{path}' cannot be read: {exc.strerror} "
                    "(a library is used whole or not at all)"
                ) from None
            except OSError:  # a broken or looping link
                continue
            if regular:
                yield path


def library_files(directory: Path) -> Iterator[Path]:
    """Every file a library directory holds as part of the library: its database (and
    journals) and its plain sequence files."""
    for name in DB_FILES:
        path = directory / name
        if path.exists():
            yield path
    yield from plain_files(directory)


def refuse_inputs_inside(directories: Iterable[Path], inputs: dict[tuple[int, int], str]) -> None:
    """An input that is one of a library's own files (the same device and inode, so
    through links too) would be loaded as known before it is read, and vanish from the
    output: refuse it. ``inputs`` maps (device, inode) to the input's name."""
    for directory in directories:
        if not directory.is_dir():
            continue  # a library that does not exist yet holds nothing
        for path in library_files(directory):
            try:
                info = path.stat()
            except OSError:
                continue
            name = inputs.get((info.st_dev, info.st_ino))
            if name is not None:
                raise SeqdedupError(
                    f"input '{name}' is the library file '{path}': it would be loaded as "
                    "already seen; read it from outside the library"
                )


def make_directory(directory: Path, option: str) -> None:
    """Create the directory an option names (and its parents); one line if it cannot
    be, or if the name is taken by something else."""
    if directory.exists() and not directory.is_dir():
        raise SeqdedupError(f"{option} '{directory}' exists and is not a directory")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SeqdedupError(
            f"{option} '{directory}' cannot be created: {exc.strerror or exc}"
        ) from None


def add_last_run(connection: sqlite3.Connection) -> None:
    """Libraries made before ``last_run`` existed gain it (inside the save's transaction,
    so two runs never both add it)."""
    columns = {row[1] for row in connection.execute("PRAGMA table_info(sequences)")}
    if "last_run" not in columns:
        connection.execute("ALTER TABLE sequences ADD COLUMN last_run INTEGER")


STAGING_PREFIX = ".seqdedup-staging-"


def _host_prefix() -> str:
    import socket  # (only a save stages its files)

    host = "".join(c if c.isalnum() else "_" for c in socket.gethostname()) or "host"
    return f"{STAGING_PREFIX}{host}-"


def staging_prefix(pid: int) -> str:
    """Staging files are named for the host and the process that writes them."""
    return f"{_host_prefix()}{pid}-"


def remove_stale_staging(directory: Path) -> None:
    """Remove staging files left in ``directory`` by runs of this host that are gone."""
    prefix = _host_prefix()
    for path in directory.glob(prefix + "*"):
        pid_text = path.name[len(prefix) :].split("-", 1)[0]
        if not pid_text.isdigit():
            continue
        try:
            os.kill(int(pid_text), 0)
        except ProcessLookupError:  # that run is gone: its save never happened
            with contextlib.suppress(OSError):
                path.unlink()
        except OSError:  # alive (another user's): not ours to judge
            continue


def remove_staging(connection: sqlite3.Connection, path: str) -> None:
    with contextlib.suppress(sqlite3.Error):
        connection.close()
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def now_text() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# -- the loaded library as the engine sees it ----------------------------------------
