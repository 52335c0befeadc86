"""Loading libraries before a run: their sequences read (database rows and plain
files), checked against the run's key settings, and placed in the engine's key space
(:class:`LoadedLibrary`) so that every window of them counts as seen.
"""

from __future__ import annotations

import json
import sqlite3
from array import array
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

from seqdedup.base.errors import SeqdedupError
from seqdedup.base.hashes import hash_words
from seqdedup.base.records import split_records
from seqdedup.library.store import (
    DB_NAME,
    check_encoded,
    decode_records,
    open_for_reading,
    plain_files,
)

if TYPE_CHECKING:
    from seqdedup.config.groups import LibraryOptions
    from seqdedup.engine.matcher import WindowTarget
    from seqdedup.keys.maker import KeyMaker, TextDigest


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


def load_library(
    directory: Path,
    delimiter: bytes,
    held: bool = False,
    keys: dict[str, object] | None = None,
    checked: bool = True,
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
        parts.append(_load_database(database, held, keys, checked))
    parts.append(_load_plain(directory, delimiter, held))
    return (sequence for part in parts for sequence in part)


def _load_database(
    path: Path, held: bool, keys: dict[str, object] | None, checked: bool = True
) -> Iterator[LibrarySequence]:
    """The database's rows; ``checked``: each row's lengths are checked here (False
    where the kernel hashes the rows, checking them as it reads them)."""
    connection = open_for_reading(path)
    if connection is None:
        return  # an empty database (a 0-byte file, say): no sequences yet
    try:
        if keys is not None:
            _check_key_settings(connection, path, keys)
        # Stored order (no sort: sorting the blobs cost a second per million records).
        for digest, blob in connection.execute("SELECT digest, records FROM sequences"):
            if checked:
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
    from seqdedup.config.settings import describe_key_settings

    try:
        configs = connection.execute("SELECT DISTINCT config FROM runs").fetchall()
    except sqlite3.OperationalError:  # no runs table: nothing recorded
        return
    for (text,) in configs:
        try:
            saved = json.loads(text).get("keys")
        except (ValueError, AttributeError):
            saved = None
        if not isinstance(saved, dict) or saved == keys:
            continue
        if _without_size(saved) == _without_size(keys):
            reason = (
                f"was saved under {_size_rule(saved)}, this run has {_size_rule(keys)}: "
                "use the same minimum size, or another library"
            )
        else:
            reason = (
                f"was saved with keys made by {describe_key_settings(saved)}, this run makes "
                f"them with {describe_key_settings(keys)}: use the same key options, or another "
                "library"
            )
        raise SeqdedupError(f"library '{path.parent}' {reason}")


def _without_size(settings: dict[str, object]) -> dict[str, object]:
    return {name: value for name, value in settings.items() if name != "min_size"}


def _size_rule(settings: dict[str, object]) -> str:
    """The minimum size a library or run compares under, as its option."""
    sizes = settings.get("min_size")
    if not isinstance(sizes, dict) or not sizes:
        return "no minimum size"
    return " ".join(f"--min-{unit} {size}" for unit, size in sizes.items())


def _load_plain(directory: Path, delimiter: bytes, held: bool) -> Iterator[LibrarySequence]:
    for path in plain_files(directory):
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise SeqdedupError(f"library file '{path}': {exc.strerror or exc}") from None
        records = split_records(data, delimiter)
        if records:
            yield LibrarySequence(path.name, records, held=held)


# -- saving ------------------------------------------------------------------------


SENTINEL = 0x5EDD_ED5E_DDED_5EDD  # both lanes of the record between sequences in the key
SENTINEL_KEY = array("Q", [SENTINEL, SENTINEL]).tobytes()  # (that record's key hash)
# region: it matches no key (a 128-bit key hash equals it with probability 2**-128)


def load_libraries(
    options: LibraryOptions,
    keys_made: dict[str, object],
    delimiter: bytes,
    keys: KeyMaker,
    matcher: WindowTarget,
    text: TextDigest | None = None,
) -> LoadedLibrary | None:
    """Load ``read_sequences`` and ``library_dir`` (when it exists), each used only when
    saved by runs whose keys were made as ``keys_made`` says (``key_settings``), and
    make every window of theirs already seen by ``matcher``; None when there is nothing
    to load. ``text``: keep each record's text digest too (:attr:`LoadedLibrary.texts`)."""
    directories = list(options.read_sequences)
    if options.library_dir is not None and options.library_dir.exists():
        directories.append(options.library_dir)
    if not directories:
        return None
    sequences = (
        sequence
        for directory in directories
        for sequence in load_library(
            directory,
            delimiter,
            held=directory == options.library_dir,
            keys=keys_made,
            checked=not keys.hashes_encoded,  # (the kernel checks the rows it hashes)
        )
    )
    # A minimum size: the sized matcher takes the stretches (with the records' key
    # sizes), and the matcher beside it, if any, the windows that name sources.
    unit = getattr(matcher, "size_unit", None)
    library = LoadedLibrary(text, unit)
    region, firsts, lengths = library.index(sequences, keys)
    library.region = region
    if unit is not None:
        sized = cast("SizedTarget", matcher)
        beside = sized.add_library_stretches(region, firsts, lengths, library.sizes)
        if beside is None:
            return library
        matcher = beside
    if hasattr(matcher, "add_library_region"):  # the kernel's: no array of every window
        matcher.add_library_region(region, firsts, lengths)
    else:
        fps, starts = library_windows(region, firsts, lengths, keys, matcher)
        matcher.add_library_windows(fps, starts, region)
    return library


def _record_texts(sequences: Iterable[LibrarySequence], text: TextDigest | None) -> array[int]:
    """Each record's text digest, and 0 for the sentinel after each sequence (nothing
    without ``text``)."""
    texts = array("Q")
    if text is not None:
        for sequence in sequences:
            texts += text(sequence.records)
            texts.append(0)
    return texts


class SizedTarget(Protocol):
    """What takes a library under a minimum size (``sized.SizedMatcher``, or a stream
    run's holder): every stretch of its sequences, with the records' key sizes; it
    returns the matcher that takes the windows beside it, if any."""

    def add_library_stretches(
        self, region: array[int], firsts: array[int], lengths: array[int], sizes: array[int]
    ) -> WindowTarget | None: ...


class LoadedLibrary:
    """Where loaded sequences sit in the engine's key space.

    All library keys form one region ending at index -1, a sentinel before, between
    and after the sequences, so that a match never runs from one sequence into the
    next. A window of a library sequence starting at region index g is given start g:
    negative and at most -W - 1, so every window of the run repeats it.
    """

    def __init__(self, text: TextDigest | None = None, size_unit: str | None = None) -> None:
        self._text = text
        self._size_unit = size_unit
        # With a minimum size: each region record's key size (0 for the sentinels)
        self.sizes = array("q", [0])
        self.names: list[str] = []
        self.starts: list[int] = []  # region index of each sequence's first record
        self.region = array("Q")  # every sequence's key hashes (two lanes each), see index()
        # Per sequence: its database key when held by the library the run saves to (b""
        # for a held plain file), None when it comes from elsewhere.
        self.digests: list[bytes | None] = []
        # With ``text`` (markers under key options): each region record's text digest
        # (0 for the sentinels), at the region's indices as the keys are
        self.texts = array("Q", [0])

    def index(
        self, sequences: Iterable[LibrarySequence], keys: KeyMaker
    ) -> tuple[array[int], array[int], array[int]]:
        """Return the key region (the lanes of its records' key hashes), and where
        each sequence lies in it (its first record's index, its length; int64).

        Records are hashed a group of sequences at a time and then dropped: only their
        16-byte key hashes stay in memory. The windows are re-hashed at every load (with
        the run's seed): nothing of a run's hashing is ever stored.
        """
        parts = [SENTINEL_KEY]  # (the region's bytes, joined once at the end)
        firsts, lengths = array("q"), array("q")
        group: list[LibrarySequence] = []
        grouped = 0

        def hash_group() -> None:
            _hash_group(group, keys, parts, firsts, lengths)
            self.texts.extend(_record_texts(group, self._text))
            if self._size_unit is not None:
                for sequence in group:
                    self.sizes.extend(keys.key_sizes(sequence.records, self._size_unit))
                    self.sizes.append(0)
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
        region = array("Q")
        region.frombytes(b"".join(parts))
        parts.clear()
        size = len(region) // 2
        self.starts = [first - size for first in firsts]
        return region, firsts, lengths

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


def library_windows(
    region: array[int],
    firsts: array[int],
    lengths: array[int],
    keys: KeyMaker,
    matcher: WindowTarget,
) -> tuple[array[int], array[int]]:
    """Every window inside the library's sequences: its fingerprint (lanes) and start
    (for a target that takes them so: the Python engine's matcher, --stream-by's)."""
    size = len(region) // 2
    width = matcher.window_size
    count = size - width + 1
    fps, starts = array("Q"), array("q")
    if count <= 0 or not firsts:
        return fps, starts
    every = matcher.fingerprints(region, count)
    if keys.kernel is not None and isinstance(every, bytes):  # (no int per window)
        kept, kept_starts = keys.kernel.library_windows(every, firsts, lengths, width, size)
        fps.frombytes(kept)
        starts.frombytes(kept_starts)
        return fps, starts
    lanes = hash_words(every)
    for first, length in zip(firsts, lengths, strict=True):
        inside = length - width + 1  # windows that lie within this sequence
        if inside > 0:
            fps.extend(lanes[2 * first : 2 * (first + inside)])
            starts.extend(range(first - size, first - size + inside))
    return fps, starts


def _hash_group(
    group: list[LibrarySequence],
    keys: KeyMaker,
    region: list[bytes],
    firsts: array[int],
    lengths: array[int],
) -> None:
    """A group of sequences into the key region (``region``: its bytes so far, each
    sequence followed by the sentinel record): database rows in one call of the kernel,
    else each sequence's records hashed."""
    rows = [sequence.encoded for sequence in group]
    at = sum(map(len, region)) // 16
    try:
        if keys.hashes_encoded and all(rows):
            region.append(keys.hash_encoded_rows([r for r in rows if r], SENTINEL_KEY))
            for sequence in group:
                length = len(sequence)
                firsts.append(at)
                lengths.append(length)
                at += length + 1
            return
        encoded = [keys.hash_encoded(row) if row else None for row in rows]
    except ValueError as exc:  # (the kernel's check of a row's lengths)
        raise SeqdedupError(f"a library database is corrupt: {exc}") from None
    rest = [s for s, hashed in zip(group, encoded, strict=True) if hashed is None]
    hashes = hash_words(keys.hashes([r for sequence in rest for r in sequence.records]))
    pos = 0
    for sequence, hashed in zip(group, encoded, strict=True):
        firsts.append(at)
        length = len(sequence) if hashed is None else len(hashed) // 16
        lengths.append(length)
        if hashed is None:
            hashed = hashes[2 * pos : 2 * (pos + length)].tobytes()
            pos += length
        region += (hashed, SENTINEL_KEY)
        at += length + 1
