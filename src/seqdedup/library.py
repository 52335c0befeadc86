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
it was, and two runs saving at once both land. What a run stages is decided in
:mod:`seqdedup.saving`; a sequence the library holds is not stored again, its count
and ``last_run`` change instead.

Reading needs no write access (another user's library, read-only storage); see
:func:`open_for_reading`.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sqlite3
import stat
import sys
import tempfile
import weakref
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from hashlib import blake2b
from pathlib import Path
from typing import TYPE_CHECKING, Any

from seqdedup.attribution import runs_of
from seqdedup.errors import SeqdedupError, settle, signals_held

if TYPE_CHECKING:
    from seqdedup.config import Config

DB_NAME = "seqdedup.sqlite"
DB_FILES = {DB_NAME, DB_NAME + "-wal", DB_NAME + "-shm", DB_NAME + "-journal"}
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


class LibrarySequence:
    """One loaded sequence: ``name`` identifies it in markers and explanations;
    ``digest`` is its key in a database; ``held`` says it is in the library the run
    saves to (so a repeat of it need not be saved again).

    A database row stays encoded (:func:`encode_records`) until its records are asked
    for: the compiled kernel hashes it as it is.
    """

    __slots__ = ("_data", "digest", "held", "name")

    def __init__(
        self,
        name: str,
        data: list[bytes] | bytes,
        digest: bytes | None = None,
        held: bool = False,
    ) -> None:
        self.name = name
        self._data = data
        self.digest = digest
        self.held = held

    @property
    def records(self) -> list[bytes]:
        data = self._data
        return decode_records(data) if isinstance(data, bytes) else data

    @property
    def encoded(self) -> bytes | None:
        """The database row, when the sequence came from one."""
        return self._data if isinstance(self._data, bytes) else None

    def __len__(self) -> int:
        data = self._data
        return int.from_bytes(data[:4], "little") if isinstance(data, bytes) else len(data)


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


def check_encoded(blob: bytes) -> None:
    """Raise ValueError unless the lengths in ``blob`` add up to what it holds."""
    count = int.from_bytes(blob[:4], "little")
    head = 4 + 4 * count
    if len(blob) < head:
        raise ValueError("record lengths do not match the stored data")
    lengths = array("I")
    lengths.frombytes(blob[4:head])
    if sys.byteorder == "big":  # stored little-endian, as encode_records writes them
        lengths.byteswap()
    if sum(lengths) != len(blob) - head:
        raise ValueError("record lengths do not match the stored data")


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
def load_library(
    directory: Path,
    delimiter: bytes,
    held: bool = False,
    keys: dict[str, object] | None = None,
) -> Iterator[LibrarySequence]:
    """Every sequence the directory holds: the database's first, then every plain file
    in the directory and its sub-folders (``sequences/`` of the uniqseq layout among
    them), one at a time so that a large library never sits in memory as records. The
    directory is checked at once; a corrupt database raises when reached, and so does
    one saved by runs that made keys otherwise than ``keys`` (``config.key_settings``)."""
    if not directory.exists():
        raise SeqdedupError(f"library '{directory}' does not exist")
    if not directory.is_dir():
        raise SeqdedupError(f"library '{directory}' is not a directory")
    database = directory / DB_NAME
    parts: list[Iterator[LibrarySequence]] = []
    if database.exists():
        parts.append(_load_database(database, held, keys))
    parts.append(_load_plain(directory, delimiter, held))
    return (sequence for part in parts for sequence in part)


def _load_database(
    path: Path, held: bool, keys: dict[str, object] | None
) -> Iterator[LibrarySequence]:
    connection = open_for_reading(path)
    if connection is None:
        return  # an empty database (a 0-byte file, say): no sequences yet
    try:
        if keys is not None:
            _check_key_settings(connection, path, keys)
        # Stored order (no sort: sorting the blobs cost a second per million records).
        for digest, blob in connection.execute("SELECT digest, records FROM sequences"):
            check_encoded(blob)
            yield LibrarySequence(digest.hex(), blob, digest, held)
    except sqlite3.Error as exc:
        raise SeqdedupError(f"library database '{path}' cannot be read: {exc}") from None
    except (ValueError, TypeError, AttributeError) as exc:
        raise SeqdedupError(f"library database '{path}' is corrupt: {exc}") from None
    finally:
        connection.close()


def _check_key_settings(
    connection: sqlite3.Connection, path: Path, keys: dict[str, object]
) -> None:
    """A library's windows are keys made one way: used with keys made another way it
    would not hold what its runs saw (a finer key tells apart records a coarser one
    saved as one). Runs saved before the settings were recorded are not checked."""
    from seqdedup.config import describe_key_settings

    try:
        configs = connection.execute("SELECT DISTINCT config FROM runs").fetchall()
    except sqlite3.OperationalError:  # no runs table: nothing recorded
        return
    for (text,) in configs:
        try:
            saved = json.loads(text).get("keys")
        except (ValueError, AttributeError):
            saved = None
        if isinstance(saved, dict) and saved != keys:
            raise SeqdedupError(
                f"library '{path.parent}' was saved with keys made by "
                f"{describe_key_settings(saved)}, this run makes them with "
                f"{describe_key_settings(keys)}: use the same key options, or another library"
            )


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
    return connection


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


def _load_plain(directory: Path, delimiter: bytes, held: bool) -> Iterator[LibrarySequence]:
    for path in plain_files(directory):
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise SeqdedupError(f"library file '{path}': {exc.strerror or exc}") from None
        if data.endswith(delimiter):
            data = data[: -len(delimiter)]
        if data:
            yield LibrarySequence(path.name, data.split(delimiter), held=held)


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


class Stretches:
    """Runs of consecutive records, each staged as one sequence of ``kind``.

    Long runs are staged in pieces of ``chunk`` records overlapping by W-1, so that
    every window of the run lies inside one piece and memory stays bounded.
    """

    def __init__(self, writer: LibraryWriter, kind: str, window_size: int, chunk: int) -> None:
        self._writer = writer
        self._kind = kind
        self._chunk = max(chunk, 2 * window_size)
        self._overlap = window_size - 1
        self._records: list[bytes] = []  # the current run, not yet staged
        self._carried = 0  # its first records, already staged with the last piece

    def add(self, records: list[bytes], flags: list[bool], value: bool) -> None:
        """Extend the current run with the records whose flag is ``value``; a record
        whose flag is not ends it."""
        ended = 0  # where the run was last extended
        for start, stop in runs_of(flags, value):
            if start > ended:
                self.end()
            self._extend(records[start:stop])
            ended = stop
        if ended < len(flags):
            self.end()

    def _extend(self, records: list[bytes]) -> None:
        while records:
            room = self._chunk - len(self._records)
            self._records += records[:room]
            records = records[room:]
            if len(self._records) >= self._chunk:
                self._writer.add(self._records, self._kind)
                self._records = self._records[len(self._records) - self._overlap :]
                self._carried = len(self._records)

    def end(self) -> None:
        """Stage what of the current run is not staged yet."""
        if len(self._records) > self._carried:
            self._writer.add(self._records, self._kind)
        self._records = []
        self._carried = 0


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
        database = directory / DB_NAME
        if database.is_symlink():  # writing through it would change a file elsewhere
            raise SeqdedupError(
                f"library '{directory}': {DB_NAME} is a symbolic link (to "
                f"'{os.readlink(database)}'); a library saves only into a file of its own"
            )
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
        self._sightings: Counter[bytes] = Counter()  # held sequences repeated by this run
        self.failure: SeqdedupError | None = None  # staging failed: commit() says so
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
        """Stage one sequence (``kind`` 'new' or 'repeat').

        A failure to stage (a full disk, ``ulimit -f``) must not cost the run its
        output: staging stops, the run goes on, and :meth:`commit` reports the failure
        (exit 1 after the complete output, the library unchanged)."""
        if self.failure is not None:
            return
        try:
            with self._staging_errors():
                self._file.add(records, kind)
        except SeqdedupError as exc:
            self.failure = exc
            self.discard()

    def seen(self, digest: bytes) -> None:
        """A sequence the library holds was repeated: count it, save nothing."""
        self._sightings[digest] += 1

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
            if self.failure is not None:
                raise self.failure
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
                add_last_run(connection)
                run_id = connection.execute(
                    "INSERT INTO runs (started, finished, config, statistics) VALUES (?,?,?,?)",
                    (self.started, _now(), json.dumps(config), json.dumps(statistics)),
                ).lastrowid
                connection.execute(
                    "INSERT INTO sequences (digest, records, length, kind, count, run_id) "
                    "SELECT digest, records, length, kind, 1, ? FROM staging.staged WHERE true "
                    "ON CONFLICT(digest) DO UPDATE SET count = count + 1, last_run = ?",
                    (run_id, run_id),
                )
                connection.executemany(
                    "UPDATE sequences SET count = count + ?, last_run = ? WHERE digest = ?",
                    ((times, run_id, digest) for digest, times in self._sightings.items()),
                )
                with signals_held():  # interrupted exactly when not saved
                    connection.execute("COMMIT")
                    settle()
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


def add_last_run(connection: sqlite3.Connection) -> None:
    """Libraries made before ``last_run`` existed gain it (inside the save's transaction,
    so two runs never both add it)."""
    columns = {row[1] for row in connection.execute("PRAGMA table_info(sequences)")}
    if "last_run" not in columns:
        connection.execute("ALTER TABLE sequences ADD COLUMN last_run INTEGER")


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


def load_libraries(config: Config, keys: Any, matcher: Any) -> LoadedLibrary | None:
    """Load ``read_sequences`` and ``library_dir`` (when it exists) and make every
    window of theirs already seen by ``matcher``; None when there is nothing to load."""
    directories = list(config.read_sequences)
    if config.library_dir is not None and config.library_dir.exists():
        directories.append(config.library_dir)
    if not directories:
        return None
    from seqdedup.config import key_settings

    keys_made = key_settings(config)
    sequences = (
        sequence
        for directory in directories
        for sequence in load_library(
            directory, config.delimiter, held=directory == config.library_dir, keys=keys_made
        )
    )
    library = LoadedLibrary()
    region, fps, starts = library.index(sequences, keys, matcher)
    library.region = region
    matcher.add_library_windows(fps, starts)
    return library


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
        self.region = array("q")  # every sequence's key hashes, see index()
        # Per sequence: its database key when held by the library the run saves to (b""
        # for a held plain file), None when it comes from elsewhere.
        self.digests: list[bytes | None] = []

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
            encoded = [keys.hash_encoded(s.encoded) if s.encoded else None for s in group]
            rest = [s for s, hashed in zip(group, encoded, strict=True) if hashed is None]
            hashes = int64_array(keys.hashes([r for sequence in rest for r in sequence.records]))
            pos = 0
            for sequence, hashed in zip(group, encoded, strict=True):
                firsts.append(len(region))
                length = len(sequence)
                lengths.append(length)
                if hashed is None:
                    region.extend(hashes[pos : pos + length])
                    pos += length
                else:
                    region.frombytes(hashed)
                region.append(SENTINEL)
            self.names.extend(sequence.name for sequence in group)
            self.digests.extend(
                (sequence.digest or b"") if sequence.held else None for sequence in group
            )
            group.clear()

        for sequence in sequences:
            group.append(sequence)
            grouped += len(sequence)
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
        which = self._which(start)
        return self.names[which], start - self.starts[which]

    def held_digest(self, start: int) -> bytes | None:
        """The database key (b"" for a plain file) of the sequence a region index lies
        in, when that sequence is held by the library the run saves to; else None."""
        return self.digests[self._which(start)]

    def _which(self, start: int) -> int:
        from bisect import bisect_right

        return bisect_right(self.starts, start) - 1
