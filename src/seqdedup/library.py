"""Sequence libraries (README: The library): load before a run, save after it.

A library is a directory. It may hold:

* ``seqdedup.sqlite``, the store this module writes: an SQLite database (rollback
  journal: a save of large sequences lands 2.5x faster than through a WAL, readers
  need no write access, and a killed save still rolls back)
  with one row per sequence (its records, independent of the delimiter) and one row
  per run (configuration, timestamps, statistics);
* plain sequence files, each file one sequence whose records are split by the run's
  delimiter, anywhere in the directory or its sub-folders: beside the database, or in
  a ``sequences/`` sub-folder (the uniqseq layout, ``<blake2b-128 hex>.uniqseq``).
  Hidden files (``.DS_Store``, ``.gitignore``, ``.keep``, staging files) and
  ``README*`` are not sequences; one trailing delimiter at the end of a file is dropped.

Saving is atomic and concurrent-safe: during the run, sequences are staged in a
private SQLite file in the library directory (so memory stays bounded however much is
saved); at the end they are copied into the library in one short transaction (``BEGIN
IMMEDIATE``, with a busy timeout), so a run killed at any moment leaves the library as
it was, and two runs saving at once both land.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sqlite3
import sys
import tempfile
import weakref
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from hashlib import blake2b
from pathlib import Path
from typing import Any

from seqdedup.errors import SeqdedupError

DB_NAME = "seqdedup.sqlite"
_DB_FILES = {DB_NAME, DB_NAME + "-wal", DB_NAME + "-shm", DB_NAME + "-journal"}
BUSY_TIMEOUT_S = 120.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sequences (
    -- a rowid table: rows of megabytes land 1.8x faster than in a WITHOUT ROWID one
    -- (libraries made before that keep their table; both take the same statements)
    digest  BLOB NOT NULL UNIQUE, -- blake2b-128 of the encoded records
    records BLOB NOT NULL,      -- see encode_records
    length  INTEGER NOT NULL,   -- number of records
    kind    TEXT NOT NULL,      -- 'new': first-seen material; 'repeat': a repeated piece
    count   INTEGER NOT NULL,   -- sightings (pieces: times seen, summed over runs)
    run_id  INTEGER             -- the run that first saved it
);
CREATE TABLE IF NOT EXISTS runs (
    id         INTEGER PRIMARY KEY,
    started    TEXT NOT NULL,
    finished   TEXT NOT NULL,
    config     TEXT NOT NULL,   -- JSON
    statistics TEXT NOT NULL    -- JSON
);
"""


@dataclass(frozen=True, slots=True)
class LibrarySequence:
    """One loaded sequence: ``name`` identifies it in markers and explanations."""

    name: str
    records: list[bytes]


def int64_array(values: Any) -> array[int]:
    """Hashes or fingerprints in any engine's form (list, int64 bytes or numpy array)."""
    if isinstance(values, list):
        return array("q", values)
    out = array("q")
    out.frombytes(values if isinstance(values, bytes) else values.tobytes())
    return out


def encode_records(records: list[bytes]) -> bytes:
    """Count, lengths (little-endian uint32) and contents: no delimiter involved."""
    lengths = array("I", map(len, records))
    if sys.byteorder == "big":
        lengths.byteswap()
    return len(records).to_bytes(4, "little") + lengths.tobytes() + b"".join(records)


def decode_records(blob: bytes) -> list[bytes]:
    count = int.from_bytes(blob[:4], "little")
    lengths = array("I")
    lengths.frombytes(blob[4 : 4 + 4 * count])
    if sys.byteorder == "big":
        lengths.byteswap()
    records = []
    pos = 4 + 4 * count
    for length in lengths:
        records.append(blob[pos : pos + length])
        pos += length
    return records


def digest_of(encoded: bytes) -> bytes:
    return blake2b(encoded, digest_size=16).digest()


# -- loading -----------------------------------------------------------------------
def load_library(directory: Path, delimiter: bytes) -> Iterator[LibrarySequence]:
    """Every sequence the directory holds: the database's first, then every plain file
    in the directory and its sub-folders (``sequences/`` of the uniqseq layout among
    them), one at a time so that a large library never sits in memory as records. The
    directory is checked at once; a corrupt database raises when reached."""
    if not directory.exists():
        raise SeqdedupError(f"library '{directory}' does not exist")
    if not directory.is_dir():
        raise SeqdedupError(f"library '{directory}' is not a directory")
    database = directory / DB_NAME
    parts: list[Iterator[LibrarySequence]] = []
    if database.exists():
        parts.append(_load_database(database))
    parts.append(_load_plain(directory, delimiter))
    return (sequence for part in parts for sequence in part)


def _load_database(path: Path) -> Iterator[LibrarySequence]:
    connection = _open_for_reading(path)
    if connection is None:
        return  # an empty database (a 0-byte file, say): no sequences yet
    try:
        rows = connection.execute("SELECT digest, records FROM sequences ORDER BY run_id, digest")
        for digest, blob in rows:
            yield LibrarySequence(digest.hex(), decode_records(blob))
    except sqlite3.Error as exc:
        raise SeqdedupError(f"library database '{path}' cannot be read: {exc}") from None
    except (ValueError, TypeError, AttributeError) as exc:
        raise SeqdedupError(f"library database '{path}' is corrupt: {exc}") from None
    finally:
        connection.close()


def _uri(path: Path, query: str) -> str:
    """An SQLite URI for any file name (``?``, ``#`` and ``%`` are quoted)."""
    return f"{path.absolute().as_uri()}?{query}"


_HAS_SEQUENCES = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'sequences'"


def _open_for_reading(path: Path) -> sqlite3.Connection | None:
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
    return connection


def _plain_files(directory: Path) -> Iterator[Path]:
    """Regular files below ``directory``, in name order, sub-folders included (linked
    folders are not followed, so a link loop ends nothing). Hidden files (``.DS_Store``,
    ``.gitignore``, ``.keep``, staging files), ``README*`` and the database are not
    sequences."""
    for root, folders, files in os.walk(directory, followlinks=False):
        folders[:] = sorted(f for f in folders if not f.startswith("."))
        for name in sorted(files):
            if name.startswith((".", "README")) or name in _DB_FILES:
                continue
            path = Path(root, name)
            if path.is_file():  # a link to a file counts; a broken or looping one not
                yield path


def _load_plain(directory: Path, delimiter: bytes) -> Iterator[LibrarySequence]:
    for path in _plain_files(directory):
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise SeqdedupError(f"library file '{path}': {exc.strerror or exc}") from None
        if data.endswith(delimiter):
            data = data[: -len(delimiter)]
        if data:
            yield LibrarySequence(path.name, data.split(delimiter))


# -- saving ------------------------------------------------------------------------
STAGE_ROWS = 512  # staged rows held in memory before they go to the staging file
STAGE_BYTES = 8 << 20  # ... or this many bytes of them


class StagingFile:
    """A private SQLite file collecting sequences before they land in a library."""

    def __init__(self, path: str) -> None:
        self.connection = sqlite3.connect(path)
        self.connection.execute("PRAGMA journal_mode=OFF")
        self.connection.execute("PRAGMA synchronous=OFF")
        self.connection.execute(
            "CREATE TABLE IF NOT EXISTS staged "
            "(digest BLOB, records BLOB, length INTEGER, kind TEXT)"
        )
        self._rows: list[tuple[bytes, bytes, int, str]] = []
        self._bytes = 0  # of the rows held

    def add(self, records: list[bytes], kind: str) -> None:
        if not records:
            return
        encoded = encode_records(records)
        self._rows.append((digest_of(encoded), encoded, len(records), kind))
        self._bytes += len(encoded)
        # Bounded by bytes as well as rows: one row can hold a stretch of megabytes.
        if len(self._rows) >= STAGE_ROWS or self._bytes >= STAGE_BYTES:
            self.flush()

    def flush(self) -> None:
        if self._rows:
            self.connection.executemany("INSERT INTO staged VALUES (?, ?, ?, ?)", self._rows)
            self._rows = []
            self._bytes = 0
        self.connection.commit()

    def close(self) -> None:
        self.flush()
        self.connection.close()


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


class LibraryWriter:
    """Stage what a run observed; :meth:`commit` lands it in one transaction."""

    def __init__(self, directory: Path) -> None:
        make_directory(directory, "--library-dir")
        self.directory = directory
        self.started = _now()
        # Staged inside the library: a run killed outright (SIGKILL) leaves its file
        # where the next run on this host finds it and removes it.
        remove_stale_staging(directory)
        with self._staging_errors():
            fd, name = tempfile.mkstemp(prefix=_staging_prefix(os.getpid()), dir=directory)
            os.close(fd)
            try:
                self._file = StagingFile(name)
            except BaseException:
                os.unlink(name)
                raise
        self._staging_path = name
        self._staging = self._file.connection
        # Dropped without commit() or discard(): still remove the file (not after kill -9).
        self._cleanup = weakref.finalize(self, _remove_staging, self._staging, name)

    @contextlib.contextmanager
    def _staging_errors(self) -> Iterator[None]:
        """A failure to stage (a full disk, an unwritable library) is one line."""
        try:
            yield
        except (sqlite3.Error, OSError) as exc:
            detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise SeqdedupError(
                f"library '{self.directory}': cannot stage this run's sequences: {detail}"
            ) from None

    def add(self, records: list[bytes], kind: str) -> None:
        """Stage one sequence (``kind`` 'new' or 'repeat')."""
        with self._staging_errors():
            self._file.add(records, kind)

    def absorb(self, path: Path) -> None:
        """Take in what another staging file holds (written by a :class:`StagingFile`)."""
        with self._staging_errors():
            self._file.flush()
            self._staging.execute("ATTACH DATABASE ? AS other", (str(path),))
            self._staging.execute("INSERT INTO staged SELECT * FROM other.staged")
            self._staging.commit()
            self._staging.execute("DETACH DATABASE other")

    def commit(self, config: dict[str, object], statistics: dict[str, object]) -> int:
        """Land the staged sequences and the run row; return how many sequences the
        run saved (distinct contents staged)."""
        try:
            with self._staging_errors():
                self._file.flush()  # commits
                query = "SELECT COUNT(DISTINCT digest) FROM staged"
                saved = self._staging.execute(query).fetchone()[0]
                self._staging.close()
        except BaseException:
            self.discard()
            raise
        statistics = {**statistics, "library_sequences_saved": saved}
        path = self.directory / DB_NAME
        try:
            connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            try:
                # Libraries written by earlier versions may be in WAL mode; leaving it
                # needs the only connection, so when others are open the mode stays.
                with contextlib.suppress(sqlite3.OperationalError):
                    connection.execute("PRAGMA journal_mode=DELETE")
                connection.executescript(_SCHEMA)
                connection.execute("ATTACH DATABASE ? AS staging", (self._staging_path,))
                connection.execute("BEGIN IMMEDIATE")
                run_id = connection.execute(
                    "INSERT INTO runs (started, finished, config, statistics) VALUES (?,?,?,?)",
                    (self.started, _now(), json.dumps(config), json.dumps(statistics)),
                ).lastrowid
                connection.execute(
                    "INSERT INTO sequences (digest, records, length, kind, count, run_id) "
                    "SELECT digest, records, length, kind, 1, ? FROM staging.staged WHERE true "
                    "ON CONFLICT(digest) DO UPDATE SET count = count + 1",
                    (run_id,),
                )
                connection.execute("COMMIT")
                connection.execute("DETACH DATABASE staging")
            finally:
                connection.close()
        except sqlite3.Error as exc:
            raise SeqdedupError(f"library '{path}' cannot be saved: {exc}") from None
        finally:
            self.discard()
        return int(saved)

    def discard(self) -> None:
        """Drop what was staged (a failed run saves nothing)."""
        self._cleanup()


STAGING_PREFIX = ".seqdedup-staging-"


def _host_prefix() -> str:
    host = "".join(c if c.isalnum() else "_" for c in socket.gethostname()) or "host"
    return f"{STAGING_PREFIX}{host}-"


def _staging_prefix(pid: int) -> str:
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


def _remove_staging(connection: sqlite3.Connection, path: str) -> None:
    with contextlib.suppress(sqlite3.Error):
        connection.close()
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# -- the loaded library as the engine sees it ----------------------------------------
SENTINEL = 0x5EDD_ED5E_DDED_5EDD  # between sequences in the key region; matches no key


class LoadedLibrary:
    """Where loaded sequences sit in the engine's key space.

    All library keys form one region ending at index -1, a sentinel before, between
    and after the sequences, so that a match never runs from one sequence into the
    next. A window of a library sequence starting at region index g is given start g:
    negative and at most -W - 1, so every window of the run repeats it.
    """

    def __init__(self) -> None:
        self.names: list[str] = []
        self.starts: list[int] = []  # region index of each sequence's first record

    def index(
        self, sequences: Iterable[LibrarySequence], keys: Any, matcher: Any
    ) -> tuple[array[int], array[int], array[int]]:
        """Return the key region, and every window's fingerprint and start.

        Records are hashed a group of sequences at a time and then dropped: only the
        8-byte key hashes of the whole library stay in memory.
        """
        region = array("q", [SENTINEL])
        firsts: list[int] = []
        lengths: list[int] = []
        group: list[LibrarySequence] = []
        grouped = 0

        def hash_group() -> None:
            hashes = int64_array(keys.hashes([r for sequence in group for r in sequence.records]))
            pos = 0
            for sequence in group:
                firsts.append(len(region))
                lengths.append(len(sequence.records))
                region.extend(hashes[pos : pos + len(sequence.records)])
                region.append(SENTINEL)
                pos += len(sequence.records)
            self.names.extend(sequence.name for sequence in group)
            group.clear()

        for sequence in sequences:
            group.append(sequence)
            grouped += len(sequence.records)
            if grouped >= 65_536:
                hash_group()
                grouped = 0
        if group:
            hash_group()
        size = len(region)
        self.starts = [first - size for first in firsts]
        width = matcher.window_size
        count = size - width + 1
        fps, starts = array("q"), array("q")
        if count <= 0 or not firsts:
            return region, fps, starts
        every = int64_array(matcher.fingerprints(region, count))
        for first, length in zip(firsts, lengths, strict=True):
            inside = length - width + 1  # windows that lie within this sequence
            if inside > 0:
                fps.extend(every[first : first + inside])
                starts.extend(range(first - size, first - size + inside))
        return region, fps, starts

    def locate(self, start: int) -> tuple[str, int]:
        """The sequence a region index lies in, and the offset inside it."""
        from bisect import bisect_right

        which = bisect_right(self.starts, start) - 1
        return self.names[which], start - self.starts[which]
