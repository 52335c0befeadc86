"""``seqdedup diff``'s inputs: GOOD's files, folders and libraries read into a
:class:`~seqdedup.diff.profile.GoodProfile`; BAD (a file or standard input) read whole
and keyed as a run keys records (the key options, ``--stream-by``)."""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from itertools import accumulate, chain, repeat
from operator import methodcaller
from pathlib import Path
from typing import IO, TYPE_CHECKING

from seqdedup.base.engine import SEED, Engine
from seqdedup.base.errors import SeqdedupError
from seqdedup.base.inputs import check_inputs
from seqdedup.budget.input import MAX_WHOLE
from seqdedup.config.normalize import timestamp_seconds
from seqdedup.config.settings import Config
from seqdedup.diff.changes import Diff
from seqdedup.diff.compare import Bad, DiffOptions, NewKeys, compare, key_ids
from seqdedup.diff.profile import GoodProfile, Part
from seqdedup.diff.sanity import checked
from seqdedup.diff.stored import StoredRecords, stored_input
from seqdedup.diff.values import value_groups
from seqdedup.engine.choice import chosen_engine
from seqdedup.keys.kind import kind_keys
from seqdedup.keys.maker import KeyMaker, key_maker

if TYPE_CHECKING:
    import sqlite3

    from seqdedup.base.records import Int64s

ROWS = 1 << 9  # library rows keyed at a time (a batch is held whole: 16,384 rows of the
# bench's CI jobs' library took 70 MB; 1,024 peaked at 47 MB, 512 at 40, 256 at 39)
ROW_BYTES = 1 << 22  # and at most about this much of their records (the test suite's
# library, rows of up to 1.2 MB: 71 MB at 512 rows alone, 61 MB at 128)
_ENDS_CR = methodcaller("endswith", b"\r")
_ROW_SIZE = 4  # bytes of a library row's record count, at its start (library.store)


class Keying:
    """Records -> (key hashes, streams) as a run with ``config`` makes them."""

    def __init__(self, config: Config, engine: Engine) -> None:
        self.engine = engine
        self._maker: KeyMaker = key_maker(config.key_options, engine.kernel, SEED)
        self._namer = None
        if config.stream_by is not None or config.stream_by_json is not None:
            from seqdedup.keys.streams import StreamNamer

            self._namer = StreamNamer(config.stream_options, config.byte_mode, engine.kernel)
        self._stream: Hashable = None  # the stream of the record before
        # library rows keyed straight from their encoding (no stream names to strip)
        self.rows_at_once = self._namer is None and self._maker.hashes_encoded
        self.sizes = config.min_size > 0
        self.stamp: Callable[[bytes], str] = engine.first_timestamp
        # CRLF and LF sides compare alike: a record's trailing CR is no part of its key
        self._delimiter = config.delimiter
        self._strip_cr = config.delimiter == b"\n"
        self.records_seen = self.cr_ended = 0  # (whose line ends were CRLF, per side)

    @property
    def names_streams(self) -> bool:
        return self._namer is not None

    def keys(self, records: list[bytes]) -> tuple[bytes, list[Hashable] | None, list[int] | None]:
        """The records' 16-byte key hashes one after another, their streams (None: one)
        and key sizes (None: not asked for)."""
        if self._strip_cr:
            self.records_seen += len(records)
            ended = sum(map(_ENDS_CR, records))  # (a C-level pass: no Python per record)
            self.cr_ended += ended
            if ended:
                records = [r[:-1] if r.endswith(b"\r") else r for r in records]
        streams: list[Hashable] | None = None
        if self._namer is not None:  # (a record no name matches continues the stream before)
            names, records = self._namer.split(records)
            streams = []
            for name in names:
                self._stream = self._stream if name is None else name
                streams.append(self._stream)
        sizes = None
        if self.sizes:
            hashes, measured = self._maker.hashes_and_sizes(records, "bytes")
            sizes = list(measured)
        else:
            hashes = self._maker.hashes(records)
        return hashes, streams, sizes

    def row_keys(self, rows: list[bytes]) -> bytes:
        """The key hashes of library rows, SENTINEL_KEY after each row's (the record
        that a loaded library's key region puts between sequences: no key hash is it)."""
        from seqdedup.library.load import SENTINEL_KEY  # (a library's modules: not for files)

        return self._maker.hash_encoded_rows(rows, SENTINEL_KEY)

    def restart(self) -> None:
        """A new input (or library row): no stream continues into it."""
        self._stream = None

    def part_keys(
        self, part: bytes, bounds: Int64s
    ) -> tuple[bytes, list[Hashable] | None, list[int] | None]:
        """:meth:`keys` of a part of an input (``bounds``: its records' (start, end)
        pairs): hashed by the kernel from the bounds (not split again) where the keys
        are the records' alone (no stream names, no sizes) and no record of the part
        holds a CR."""
        count = len(bounds) // 2
        if self._namer is None and not self.sizes and (not self._strip_cr or b"\r" not in part):
            found = self._maker.bounds_hashes(part, bounds)
            if found is not None and len(found) == 16 * count:
                self.records_seen += count if self._strip_cr else 0
                return bytes(found), None, None
        return self.keys([part[bounds[2 * k] : bounds[2 * k + 1]] for k in range(count)])

    def hours(self, records: StoredRecords) -> float | None:
        """The input's time span in hours: from the earliest to the latest timestamp of
        records sampled evenly over it (None: fewer than half of them have one, or no
        time passed). Sampled, so that a clock that wraps at midnight or a late line
        with an old time stretches it no more than it is."""
        samples = records.samples()
        if len(samples) < 2:
            return None
        times = [timestamp_seconds(self.stamp(text)) for text in samples]
        found = [t for t in times if t is not None]
        if len(found) < max(2, len(samples) // 2) or max(found) <= min(found):
            return None
        return (max(found) - min(found)) / 3600.0


def read_good(
    names: Sequence[str],
    config: Config,
    keying: Keying,
    stdin: IO[bytes] | None = None,
    notes: list[str] | None = None,
    limit: int = MAX_WHOLE,
) -> GoodProfile:
    """GOOD: each file one input; a folder's files (sorted, hidden ones left out) each
    one input; a folder holding ``seqdedup.sqlite`` a library (each row a part weighted
    by its sightings, each saved run an input). A folder's link to a file outside it is
    not read: ``notes`` gets a line naming it and how many of the folder's files were."""
    profile = GoodProfile(keying.engine, kind_keys(config.key_options, keying.engine.kernel))
    for name in names:
        path = Path(name)
        if path.is_dir() and (path / "seqdedup.sqlite").is_file():
            _read_library(path / "seqdedup.sqlite", profile, keying)
            continue
        for file in _files_of(path, notes) if path.is_dir() else [name]:
            check_inputs([file], stdin)
            _read_good_file(file, config, keying, profile, limit)
    profile.settle()
    return profile


def _read_good_file(
    name: str, config: Config, keying: Keying, profile: GoodProfile, limit: int
) -> None:
    """One input of GOOD read in parts: its keys counted and linked as one stretch
    (per stream with --stream-by: those keys are linked once the input is read), the
    first record of each new key copied out; nothing of it kept after."""
    # (set aside only with streams: its first records are copied out as they pass)
    stored, chunks = stored_input(
        name, None, config.delimiter, keying.engine, kept=keying.names_streams
    )
    keys: list[bytes] = []
    streams: list[Hashable] = []
    keying.restart()
    try:
        for _, part, bounds in stored.read(chunks, limit):
            hashes, named, _ = keying.part_keys(part, bounds)
            if named is None:
                profile.add_stretch(hashes, part, bounds)
            else:
                keys.append(hashes)
                streams += named
        profile.end_stretch()
        if keys:
            profile.add([Part(b"".join(keys), stored.record, 1, streams)])
        profile.add_input(keying.hours(stored))
    finally:
        stored.close()


def _files_of(folder: Path, notes: list[str] | None = None) -> list[str]:
    """A folder's files as a library's plain files are found (sorted, sub-folders too,
    hidden files, ``README*`` and a database left out, linked folders not followed),
    without the links to files outside the folder (named in ``notes``)."""
    from seqdedup.library.store import plain_files

    inside: list[str] = []
    outside: list[str] = []
    root = folder.resolve()
    for path in plain_files(folder):
        (inside if path.resolve().is_relative_to(root) else outside).append(str(path))
    if outside and notes is not None:
        notes += [f"'{link}' links to a file outside '{folder}': not read" for link in outside]
        notes.append(f"'{folder}': {len(inside)} of its {len(inside) + len(outside)} files read")
    files = inside
    if not files:
        raise SeqdedupError(f"'{folder}' holds no files to compare with")
    return files


def _read_library(database: Path, profile: GoodProfile, keying: Keying) -> None:
    import sqlite3  # (a library's modules: not for files)

    from seqdedup.library.store import decode_records, open_for_reading, record_offsets

    connection = open_for_reading(database)
    if connection is None:
        raise SeqdedupError(f"library '{database.parent}' holds no sequences")
    try:
        connection.execute("PRAGMA cache_size = -1024")  # (1 MiB: rows are read once, in order)
        runs = connection.execute("SELECT count(*) FROM runs").fetchone()[0]
        if keying.rows_at_once:  # (with each row's keys and the sentinel after them)
            rows = connection.execute("SELECT records, count, length + 1 FROM sequences")
            for batch in _row_batches(rows):
                _add_rows(batch, profile, keying, record_offsets)
        else:
            rows = connection.execute("SELECT records, count FROM sequences")
            profile.add(_library_parts(rows, keying, decode_records))
    except sqlite3.Error as exc:
        raise SeqdedupError(f"library database '{database}' cannot be read: {exc}") from None
    except ValueError as exc:
        raise SeqdedupError(f"library database '{database}' is corrupt: {exc}") from None
    finally:
        connection.close()
    for _ in range(max(runs, 1)):
        profile.add_input(None)  # (a library keeps no time span)


def _row_batches(rows: sqlite3.Cursor) -> Iterator[list[tuple[bytes, int, int]]]:
    """A library's rows keyed together: up to ROWS of them or ROW_BYTES of their
    records, whichever comes first (a batch is held whole)."""
    batch: list[tuple[bytes, int, int]] = []
    held = 0
    while more := rows.fetchmany(8):
        for row in more:
            batch.append(row)
            held += len(row[0])
            if held >= ROW_BYTES or len(batch) >= ROWS:
                yield batch
                batch, held = [], 0
    if batch:
        yield batch


def _add_rows(
    batch: list[tuple[bytes, int, int]],
    profile: GoodProfile,
    keying: Keying,
    record_offsets: Callable[[bytes], array[int]],
) -> None:
    """Rows keyed by the kernel straight from their encoding, in one call; a record's
    text is decoded only for a key seen for the first time. Each row of ``batch``:
    (records, sightings, its records + 1: its keys and the sentinel after them)."""
    blobs, sightings, sizes = map(list, zip(*batch, strict=True))
    keys = keying.row_keys(blobs)
    ends = list(accumulate(sizes))  # (each row's end: where the next row's keys start)
    if 16 * ends[-1] != len(keys):  # (the length column is not the rows': theirs counts)
        sizes = [int.from_bytes(blob[:_ROW_SIZE], "little") + 1 for blob in blobs]
        ends = list(accumulate(sizes))
    weights = None
    if any(n != 1 for n in sightings):  # each key its row's sightings
        weights = array("q", chain.from_iterable(map(repeat, sightings, sizes))).tobytes()

    # (a row's record offsets read once, however many of its keys are new; its records
    # sliced out one by one: a row of thousands is not decoded for the few new keys)
    offsets: dict[int, array[int]] = {}

    def text_of(k: int) -> bytes:
        row = bisect_right(ends, k)
        start = ends[row - 1] if row else 0
        blob: bytes = blobs[row]
        at = offsets.get(row)
        if at is None:
            at = offsets[row] = record_offsets(blob)
        return blob[at[k - start] : at[k - start + 1]]

    from seqdedup.library.load import SENTINEL_KEY

    profile.add_rows(keys, SENTINEL_KEY, weights, text_of)


def _library_parts(
    rows: Iterable[tuple[bytes, int]], keying: Keying, decode: Callable[[bytes], list[bytes]]
) -> Iterator[Part]:
    """Rows one at a time (keys that leave stream names out need their records)."""
    for blob, sightings in rows:
        records = decode(blob)
        keying.restart()
        keys, streams, _ = keying.keys(records)
        yield Part(keys, records.__getitem__, max(int(sightings), 1), streams)


def read_bad(
    name: str,
    config: Config,
    keying: Keying,
    stdin: IO[bytes] | None,
    profile: GoodProfile,
    limit: int = MAX_WHOLE,
) -> tuple[Bad, StoredRecords]:
    """BAD (a file, or standard input for '-'; at most ``limit`` bytes) read in parts
    and keyed against ``profile``; its records set aside to be read back by number
    (close the StoredRecords once the answer is made)."""
    check_inputs([name], stdin)
    stored, chunks = stored_input(name, stdin, config.delimiter, keying.engine)
    ids = array("i")
    new = NewKeys()
    streams: list[Hashable] | None = None
    sizes: list[int] | None = None
    keying.restart()
    blank = True
    for first, part, bounds in stored.read(chunks, limit):
        blank = blank and all_blank(part, bounds, config.delimiter)
        hashes, named, measured = keying.part_keys(part, bounds)
        found, fresh = key_ids(profile, hashes, first)
        ids += found
        new.add(fresh.positions, fresh.hashes())
        if named is not None:
            streams = [] if streams is None else streams
            streams += named
        if measured is not None:
            sizes = [] if sizes is None else sizes
            sizes += measured
    hours = keying.hours(stored)
    bad = Bad(ids, new, stored.record, streams, sizes, keying.stamp, hours, stored.texts, blank)
    return bad, stored


def all_blank(part: bytes, bounds: Int64s, delimiter: bytes) -> bool:
    """Whether every record of ``part`` is whitespace (``bounds``: their (start, end)
    pairs): the part's own bytes say so where the delimiter is whitespace, else its
    records are read until one is not."""
    if not delimiter.strip():
        return not part.strip()
    return not any(part[bounds[2 * k] : bounds[2 * k + 1]].strip() for k in range(len(bounds) // 2))


def keying_for(config: Config) -> Keying:
    return Keying(config, chosen_engine())


def diff_records(
    good: Sequence[Sequence[bytes | str]],
    bad: Sequence[bytes | str],
    config: Config | None = None,
    options: DiffOptions | None = None,
) -> Diff:
    """The changes of ``bad`` (records) against the ``good`` inputs (each a sequence of
    records), keyed by ``config``'s key options (and ``--stream-by``); str records are
    encoded as UTF-8. The Python face of ``seqdedup diff`` (docs/python-api.md)."""
    config = config or Config()
    keying = keying_for(config)
    profile = GoodProfile(keying.engine, kind_keys(config.key_options, keying.engine.kernel))
    for records in good:
        encoded = _encoded(records)
        keying.restart()
        keys, streams, _ = keying.keys(encoded)
        profile.add([Part(keys, encoded.__getitem__, 1, streams)])
        profile.add_input(None)
    profile.settle()
    encoded = _encoded(bad)
    keying.restart()
    keys, streams, sizes = keying.keys(encoded)
    ids, new = key_ids(profile, keys)
    read = Bad(ids, new, encoded.__getitem__, streams, sizes, keying.stamp)
    try:
        diff = compared(profile, read, options or DiffOptions(), config, keying)
        return checked(diff, profile, read, config.key_options)
    finally:
        profile.close()


def compared(
    profile: GoodProfile, bad: Bad, options: DiffOptions, config: Config, keying: Keying
) -> Diff:
    """BAD's changes against GOOD's settled profile, the new values of known kinds
    apart from the new (:mod:`seqdedup.diff.values`)."""
    values = value_groups(profile, list(bad.new_keys), bad.texts, config.key_options, keying.engine)
    return compare(profile, bad, options, values)


def _encoded(records: Sequence[bytes | str]) -> list[bytes]:
    return [r.encode("utf-8", "surrogateescape") if isinstance(r, str) else r for r in records]


def line_ends(good: tuple[int, int], bad: tuple[int, int]) -> str:
    """``GOOD CRLF, BAD LF`` when the sides' line ends differ (each side's: most of its
    records ending with CR or not; given as (records, CR-ended)), else ''."""

    def style(side: tuple[int, int]) -> str | None:
        records, cr = side
        return None if not records else "CRLF" if 2 * cr > records else "LF"

    good_style, bad_style = style(good), style(bad)
    if good_style is None or bad_style is None or good_style == bad_style:
        return ""
    return f"GOOD {good_style}, BAD {bad_style}"
