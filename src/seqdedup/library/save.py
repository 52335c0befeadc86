"""Saving after a run (docs/only-new.md): what a run stages, and how it lands.

Saving is atomic and concurrent-safe: during the run, sequences are staged in a
private SQLite file in the library directory, shaped as a library (so memory stays
bounded however much is saved); at the end that file becomes a new library, or is
merged into an existing one in one short transaction (``BEGIN IMMEDIATE``, with a busy
timeout; see :mod:`seqdedup.library.landing`), so a run killed at any moment leaves the
library as it was, and two runs saving at once both land. :class:`RunSaver` decides what a run
stages: new material (records covered by windows seen for the first time) as
stretches, and each repeated piece with its content, unless the library saved to holds
it already (its count and ``last_run`` change instead). With other libraries loaded
too, duplicate runs are staged whole, so that the library saved to stands on its own.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import sys
import weakref
from array import array
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from seqdedup.base.engine import Engine
from seqdedup.base.errors import SeqdedupError
from seqdedup.base.stopping import signals_held
from seqdedup.engine.choice import compiled
from seqdedup.engine.pieces import JoinedSlice, Piece, PieceContent, SkipRecords
from seqdedup.engine.pyengine import PYTHON
from seqdedup.engine.pykernel import python_skip_records
from seqdedup.engine.runs import runs_of
from seqdedup.library.landing import (
    RUN_ROW,
    SIGHTINGS,
    STAGE_UPSERT,
    merge_staged,
    publish_fresh,
    settle_staged,
)
from seqdedup.library.load import LoadedLibrary
from seqdedup.library.store import (
    BUSY_TIMEOUT_S,
    DB_NAME,
    SCHEMA,
    add_last_run,
    digest_of,
    encode_parts,
    encode_records,
    make_directory,
    now_text,
    record_lengths,
    remove_staging,
    remove_stale_staging,
    staging_prefix,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from seqdedup.config.groups import LibraryOptions, RuleOptions


STAGE_ROWS = 512  # staged rows held in memory before they go to the staging file
STAGE_BYTES = 8 << 20  # ... or this many bytes of them
# Rows of megabytes: 16 KiB pages stage them in 0.05 s and land them in 0.11 s per
# 100 MB where SQLite's default 4 KiB pages take 0.08 s and 0.15 s (64 KiB pages land
# them slower: 0.3 s). The staging file and a library made by a run use it.
PAGE_SIZE = 16384


class StagingFile:
    """A private SQLite file collecting sequences before they land in a library.

    A worker thread computes the rows' digests and inserts them while the run goes on
    (blake2b and SQLite let go of the interpreter lock): on a run that saves a million
    new records that is 0.17 s which then overlaps the run's own work instead of adding
    to it. It takes the rows a batch at a time (a task per row cost more than the digest
    of a short row: 0.25 s of locks for 20,000 rows); at most one batch is in its hands
    at a time; :meth:`flush` waits for it, and its failure (a full disk) is raised
    there."""

    def __init__(self, path: str, library_shaped: bool = False) -> None:
        self.connection = sqlite3.connect(path, check_same_thread=False)
        self.connection.execute(f"PRAGMA page_size={PAGE_SIZE}")
        self.connection.execute("PRAGMA journal_mode=OFF")
        self.connection.execute("PRAGMA synchronous=OFF")
        if library_shaped:  # a run's own: it may become the library (library.landing)
            self.connection.executescript(SCHEMA)
            self._statement = STAGE_UPSERT
        else:  # a Dask worker's: a row per sequence staged, landed by the job
            self.connection.execute(
                "CREATE TABLE IF NOT EXISTS staged "
                "(digest BLOB, records BLOB, length INTEGER, kind TEXT)"
            )
            self._statement = "INSERT INTO staged VALUES (?, ?, ?, ?)"
        self._rows: list[tuple[bytes | None, bytes, int, str]] = []  # (digest if known)
        self._bytes = 0  # of the rows held
        self._worker: ThreadPoolExecutor | None = None
        self._handed: Future[None] | None = None  # the batch the worker inserts

    def add(self, records: list[bytes], kind: str) -> None:
        if records:
            self.add_encoded(encode_records(records), len(records), kind)

    def add_encoded(
        self, encoded: bytes, count: int, kind: str, digest: bytes | None = None
    ) -> None:
        """Stage one row: ``count`` records, encoded as the library stores them."""
        self._rows.append((digest, encoded, count, kind))
        self._bytes += len(encoded)
        # Bounded by bytes as well as rows: one row can hold a stretch of megabytes.
        if len(self._rows) >= STAGE_ROWS or self._bytes >= STAGE_BYTES:
            self._hand_over()

    def flush(self) -> None:
        """Everything added is in the file, committed."""
        self._hand_over()
        self._wait()
        self.connection.commit()

    def close(self) -> None:
        self.flush()
        self.stop()
        self.connection.close()

    def stop(self) -> None:
        """The worker ends (what it has not started yet is dropped)."""
        if self._worker is not None:
            self._worker.shutdown(wait=True, cancel_futures=True)
            self._worker = None

    def _start(self) -> ThreadPoolExecutor:
        if self._worker is None:
            self._worker = ThreadPoolExecutor(1, thread_name_prefix="seqdedup-staging")
        return self._worker

    def _hand_over(self) -> None:
        if self._rows:
            rows, self._rows, self._bytes = self._rows, [], 0
            self._wait()  # (one batch at a time: memory stays bounded)
            self._handed = self._start().submit(self._insert, rows)

    def _wait(self) -> None:
        handed, self._handed = self._handed, None
        if handed is not None:
            handed.result()

    def _insert(self, rows: list[tuple[bytes | None, bytes, int, str]]) -> None:
        # (In the worker: the digests are made here, the batch at once.)
        self.connection.executemany(
            self._statement,
            [(digest or digest_of(encoded), encoded, *rest) for digest, encoded, *rest in rows],
        )


class Stretches:
    """Runs of consecutive records, each staged as one sequence of ``kind``.

    Long runs are staged in pieces of ``chunk`` records overlapping by W-1, so that
    every window of the run lies inside one piece and memory stays bounded. A run is
    held as a library row holds it: the records' lengths and their contents joined.
    """

    def __init__(self, writer: LibraryWriter, kind: str, window_size: int, chunk: int) -> None:
        self._writer = writer
        self._kind = kind
        self._chunk = max(chunk, 2 * window_size)
        self._overlap = window_size - 1
        self._lengths = array("I")  # the current run, not yet staged
        self._contents = bytearray()
        self._carried = 0  # its first records, already staged with the last piece

    def add(self, records: list[bytes], flags: list[bool], value: bool) -> None:
        """Extend the current run with the records whose flag is ``value``; a record
        whose flag is not ends it."""
        ended = 0  # where the run was last extended
        for start, stop in runs_of(flags, value):
            if start > ended:
                self.end()
            part = records[start:stop]
            self._extend(record_lengths(part), b"".join(part))
            ended = stop
        if ended < len(flags):
            self.end()

    def add_runs(self, first: int, size: int, runs: list[tuple[int, int, bytes, bytes]]) -> None:
        """The same for tracked records ``first`` .. ``first + size - 1`` given as the
        runs of those whose flag is set: ``(start, stop, lengths, contents)``, the
        lengths as little-endian uint32 (the kernel's chunk path)."""
        ended = first
        for start, stop, lengths, contents in runs:
            if start > ended:
                self.end()
            held = array("I", lengths)
            if sys.byteorder == "big":
                held.byteswap()
            self._extend(held, contents)
            ended = stop
        if ended < first + size:
            self.end()

    def _extend(self, lengths: array[int], contents: bytes) -> None:
        while lengths:
            room = self._chunk - len(self._lengths)
            taken = lengths[:room]
            size = sum(taken)
            self._lengths += taken
            self._contents += contents[:size]
            lengths, contents = lengths[room:], contents[size:]
            if len(self._lengths) >= self._chunk:
                self._stage()
                keep = self._overlap
                tail = sum(self._lengths[len(self._lengths) - keep :]) if keep else 0
                self._lengths = self._lengths[len(self._lengths) - keep :]
                self._contents = self._contents[len(self._contents) - tail :]
                self._carried = keep

    def _stage(self) -> None:
        self._writer.add_encoded(
            encode_parts(self._lengths, self._contents), len(self._lengths), self._kind
        )

    def end(self) -> None:
        """Stage what of the current run is not staged yet."""
        if len(self._lengths) > self._carried:
            self._stage()
        self._lengths = array("I")
        self._contents = bytearray()
        self._carried = 0


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
        self.started = now_text()
        # Staged inside the library: a run killed outright (SIGKILL) leaves its file
        # where the next run on this host finds it and removes it.
        remove_stale_staging(directory)
        with self._staging_errors():
            name = _create_staging(directory)
            try:
                self._file = StagingFile(name, library_shaped=True)
            except BaseException:
                os.unlink(name)
                raise
        self._staging_path = name
        self._staging = self._file.connection
        self._sightings: Counter[bytes] = Counter()  # held sequences repeated by this run
        self._again: Counter[bytes] = Counter()  # staged sequences repeated again
        self._named: list[bytes] = []  # the ids of sequences staged under one
        self._absorbed: list[str] = []  # other staging files landed with this one
        self.failure: SeqdedupError | None = None  # staging failed: commit() says so
        # Dropped without commit() or discard(): still remove the file (not after kill -9).
        self._cleanup = weakref.finalize(self, remove_staging, self._staging, name)

    @contextlib.contextmanager
    def _staging_errors(self) -> Iterator[None]:
        """A failure to stage (a full disk, an unwritable library) is one line."""
        try:
            yield
        except (sqlite3.Error, OSError) as exc:
            raise self._staging_failure(exc) from None

    def _staging_failure(self, exc: sqlite3.Error | OSError) -> SeqdedupError:
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        return SeqdedupError(
            f"library '{self.directory}': cannot stage this run's sequences: {detail}"
        )

    def add(self, records: list[bytes], kind: str, digest: bytes | None = None) -> None:
        """Stage one sequence (``kind`` 'new', 'repeat', or 'named' for a folded
        sequence staged under its id ``digest``, see :meth:`RunSaver.add_sequence`)."""
        if records:
            if kind == "named":
                assert digest is not None
                self._named.append(digest)
            self.add_encoded(encode_records(records), len(records), kind, digest)

    def add_encoded(
        self, encoded: bytes, count: int, kind: str, digest: bytes | None = None
    ) -> None:
        """Stage one sequence of ``count`` records, encoded as a row stores them.

        A failure to stage (a full disk, ``ulimit -f``) must not cost the run its
        output: staging stops, the run goes on, and :meth:`commit` reports the failure
        (exit 1 after the complete output, the library unchanged)."""
        if self.failure is not None:
            return
        try:  # (no context manager here: this runs once per sequence staged)
            self._file.add_encoded(encoded, count, kind, digest)
        except (sqlite3.Error, OSError) as exc:
            self.failure = self._staging_failure(exc)
            self.discard()
        except SeqdedupError as exc:
            self.failure = exc
            self.discard()

    def seen(self, digest: bytes) -> None:
        """A sequence the library holds was repeated: count it, save nothing."""
        self._sightings[digest] += 1

    def seen_again(self, digest: bytes) -> None:
        """A sequence this run staged was repeated again: counted as a row staged
        again would count it (no 'named' row precedes: its first sighting was staged),
        its row not made again."""
        self._again[digest] += 1

    def absorb(self, path: Path) -> None:
        """Land what another staging file holds (written by a :class:`StagingFile`)
        with this run's own, in :meth:`commit`: read from it there, not copied here
        first (with Dask's 16 files of 8 million records the copy cost 2.5 s)."""
        self._absorbed.append(str(path))

    def commit(
        self,
        config: dict[str, object],
        statistics: dict[str, object],
        on_committed: Callable[[], None] | None = None,
    ) -> int:
        """Land the staged sequences and the run row (library.landing); return how many
        sequences the run saved (distinct contents staged). ``on_committed`` runs right
        after the commit, with the termination signals held back across both (the
        command marks its outcome fixed there: interrupted exactly when not saved)."""
        try:
            if self.failure is not None:
                raise self.failure
            with self._staging_errors():
                self._file.flush()  # commits
                self._file.stop()
                with self._staging:
                    self._staging.executemany(
                        "UPDATE sequences SET count = count + ? WHERE digest = ?",
                        ((times, digest) for digest, times in self._again.items()),
                    )
                named_only, saved = settle_staged(self._staging, self._absorbed, self._named)
        except BaseException:
            self.discard()
            raise
        statistics = {**statistics, "library_sequences_saved": saved}
        run_row = (self.started, now_text(), json.dumps(config), json.dumps(statistics))
        sightings = [(times, digest) for digest, times in self._sightings.items()]
        path = self.directory / DB_NAME
        try:
            # (Sightings are of rows of a library that existed: never a fresh one.)
            if not (sightings or os.path.lexists(path)) and publish_fresh(
                self._staging, self._staging_path, path, run_row, on_committed
            ):
                return saved
            self._merge(path, run_row, sightings, named_only, on_committed)
        except (sqlite3.Error, OSError) as exc:
            raise SeqdedupError(f"library '{path}' cannot be saved: {exc}") from None
        finally:
            self.discard()
        return saved

    def _merge(
        self,
        path: Path,
        run_row: tuple[str, str, str, str],
        sightings: list[tuple[int, bytes]],
        named_only: list[bytes],
        on_committed: Callable[[], None] | None,
    ) -> None:
        """Merge the staged rows into the library at ``path`` in one transaction."""
        connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        try:
            # Libraries written by earlier versions may be in WAL mode; leaving it
            # needs the only connection, so when others are open the mode stays.
            with contextlib.suppress(sqlite3.OperationalError):
                connection.execute("PRAGMA journal_mode=DELETE")
            # (Only a library made now takes it; an existing one keeps its pages.)
            connection.execute(f"PRAGMA page_size={PAGE_SIZE}")
            connection.executescript(SCHEMA)
            connection.execute("ATTACH DATABASE ? AS staging", (self._staging_path,))
            connection.execute("BEGIN IMMEDIATE")
            add_last_run(connection)
            run_id = connection.execute(RUN_ROW, run_row).lastrowid
            merge_staged(connection, run_id, named_only)
            connection.executemany(
                SIGHTINGS, ((times, run_id, digest) for times, digest in sightings)
            )
            with signals_held():  # interrupted exactly when not saved
                connection.execute("COMMIT")
                if on_committed is not None:
                    on_committed()
            connection.execute("DETACH DATABASE staging")
        finally:
            connection.close()

    def discard(self) -> None:
        """Drop what was staged (a failed run saves nothing)."""
        self._file.stop()
        self._cleanup()


def _create_staging(directory: Path) -> str:
    """A new staging file in ``directory``, made with the permissions the umask gives a
    new library (the finished file may become the library itself)."""
    prefix = directory / staging_prefix(os.getpid())
    while True:
        name = f"{prefix}{os.urandom(6).hex()}"
        with contextlib.suppress(FileExistsError):
            os.close(os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666))
            return name


MAX_BUFFERED_PIECE = 200_000  # skipped records held for saving one repeated piece
REPEATS_HELD = 1 << 20  # repeated sequences whose next sightings are counted by identity
STRETCH_CHUNK = 16_384  # new material is staged at least this often (records)


class RunSaver:
    """Stage what a run observes, batch by batch; :meth:`commit` lands it."""

    def __init__(
        self,
        directory: Path,
        window_size: int,
        library: LoadedLibrary | None,
        whole_runs: bool,
        delimiter: bytes = b"\n",
        engine: Engine = PYTHON,
        plain_keys: bool = False,
    ) -> None:
        self._writer = LibraryWriter(directory)
        # Records compared by their whole text: a repeated piece's identity (128 bits
        # of its key hashes, keyed with the run's secret) names its records, so a piece
        # seen again is counted against the row staged for it, not encoded, digested
        # and upserted again (docs/engine.md); identity -> that row's digest
        self._repeats: dict[int, bytes] | None = {} if plain_keys else None
        self._delimiter = delimiter
        # The kernel's encode_joined and skip_records: a piece of the chunk path's runs
        # found in the run's bytes and staged as a row straight from them
        kernel = compiled(engine)
        joined: tuple[Callable[..., bytes] | None, SkipRecords] = (
            (kernel.encode_joined, kernel.skip_records)
            if kernel is not None
            else (None, python_skip_records)
        )
        self._encode_joined, skip = joined
        self._window_size = window_size
        self._library = library
        self._new = Stretches(self._writer, "new", window_size, STRETCH_CHUNK)
        self._whole_runs = (
            Stretches(self._writer, "repeat", window_size, STRETCH_CHUNK) if whole_runs else None
        )
        self._waiting = PieceContent(MAX_BUFFERED_PIECE, delimiter, skip)  # awaiting their piece
        self._held_spans: list[tuple[int, int]] = []  # records held pieces covered
        self._stream_start = 0  # the current input stream's first tracked record
        self._named: set[bytes] = set()  # sequences staged under an id of their own

    def stretches(self) -> Stretches:
        """Stretches of new material of one interleaved stream (``--stream-by``): each
        stream's are staged on their own, so that no saved window mixes streams."""
        return Stretches(self._writer, "new", self._window_size, STRETCH_CHUNK)

    def new_input(self, first: int) -> None:
        """A new input stream starts at tracked record ``first``: nothing saved spans
        the boundary (it would make windows that never occurred)."""
        for stretches in (self._new, self._whole_runs):
            if stretches is not None:
                stretches.end()
        self._stream_start = first

    def observe(
        self,
        tracked: list[bytes],
        keep: list[bool],
        new_material: list[bool],
        first: int,
        pieces: list[Piece],
    ) -> None:
        """Take the next decided tracked records (the first is tracked record
        ``first``), which of them first-seen windows cover, and the pieces closed."""
        self._new.add(tracked, new_material, True)
        if self._whole_runs is not None:
            # A window across two pieces may repeat another library: keep runs whole.
            self._whole_runs.add(tracked, keep, False)
        if self._whole_runs is None:
            self._waiting.add(first, tracked, keep)
        self._pieces(pieces)

    def observe_runs(
        self,
        first: int,
        size: int,
        new_material: list[tuple[int, int, bytes, bytes]],
        skipped: Sequence[tuple[int, int, Sequence[bytes] | bytes]],
        pieces: list[Piece],
    ) -> None:
        """The kernel's chunk path: the next ``size`` decided tracked records from
        ``first`` on, as the stretches of new material (``(start, stop, lengths,
        contents)``, see :meth:`Stretches.add_runs`) and the runs of skipped records
        (``(start, stop, records)``, the records a list or joined by the delimiter),
        and the pieces closed. (Not with whole runs: that run takes the record path.)"""
        assert self._whole_runs is None
        self._new.add_runs(first, size, new_material)
        self._waiting.add_runs(skipped)
        self._pieces(pieces)

    def _pieces(self, pieces: list[Piece]) -> None:
        """Stage each closed piece's content, unless the library holds it already."""
        waiting = self._waiting
        for piece in pieces:
            content = waiting.take(piece)
            if self._library is not None and self._held(piece):
                continue  # the library holds it already: counted, not saved
            if self._whole_runs is not None or content is None:
                continue
            repeats = self._repeats
            if repeats is not None and piece.identity in repeats:
                self._writer.seen_again(repeats[piece.identity])
                continue
            if isinstance(content, JoinedSlice):
                assert self._encode_joined is not None
                data, skip, count = content
                row = self._encode_joined(data, self._delimiter, count, skip)
            else:
                row, count = encode_records(list(content)), len(content)
            digest = None
            if repeats is not None and piece.identity and len(repeats) < REPEATS_HELD:
                digest = repeats[piece.identity] = digest_of(row)
            self._writer.add_encoded(row, count, "repeat", digest)
        # A huge run: its content is saved as new material where it first occurred.
        waiting.trim()

    def add_sequence(self, digest: bytes, records: list[bytes]) -> None:
        """Stage a folded run's sequence under its id (the digest of its keys, which
        is that of its records unless key options change them), once per run, so that
        ``seqdedup-library show`` finds every id a summary line names."""
        if digest not in self._named:
            self._named.add(digest)
            self._writer.add(records, "named", digest)

    def _held(self, piece: Piece) -> bool:
        """Whether the library saved to holds the piece already: it repeats a held
        library sequence (that sequence's count goes up), or it repeats records of this
        run that held pieces covered. (Their windows are library windows, or windows
        across two pieces, which this run saves as new material or finds elsewhere.)"""
        spans = self._held_spans
        held = False
        if piece.source_start < 0:
            assert self._library is not None
            digest = self._library.held_digest(piece.source_start)
            if digest is not None:
                if digest:
                    self._writer.seen(digest)
                held = True
        elif spans:
            at = bisect_right(spans, (piece.source_start, sys.maxsize)) - 1
            # (A source overlapping the piece repeats itself: its part before the piece
            # is what must be held.)
            end = min(piece.source_end, piece.start - 1)
            held = at >= 0 and spans[at][0] <= piece.source_start and end <= spans[at][1]
        if held:
            if spans and spans[-1][1] + 1 >= piece.start and spans[-1][1] >= self._stream_start:
                spans[-1] = (spans[-1][0], piece.end)
            else:
                spans.append((piece.start, piece.end))
        return held

    def commit(
        self,
        config: dict[str, object],
        statistics: dict[str, object],
        on_committed: Callable[[], None] | None = None,
    ) -> int:
        """Stage the open stretches and land everything; return the sequences saved
        (``on_committed``: see :meth:`LibraryWriter.commit`)."""
        try:
            for stretches in (self._new, self._whole_runs):
                if stretches is not None:
                    stretches.end()
        except BaseException:
            self._writer.discard()  # nothing is left behind by a failed save
            raise
        return self._writer.commit(config, statistics, on_committed)

    def discard(self) -> None:
        """Save nothing (a failed or interrupted run)."""
        self._writer.discard()


def run_saver(
    options: LibraryOptions,
    rule: RuleOptions,
    delimiter: bytes,
    library: LoadedLibrary | None,
    engine: Engine,
    plain_keys: bool = False,
) -> RunSaver:
    """The library session of a run that saves one (``-l``), under the ``rule``."""
    assert options.library_dir is not None
    # Saved stretches overlap by one less than the longest stretch the rule compares
    # (W, or with a minimum size up to sized.CAP records), so each lies inside one row.
    reach = rule.window_size
    if rule.min_size:
        from seqdedup.engine.sized import CAP

        reach = max(reach, CAP)
    return RunSaver(
        options.library_dir,
        reach,
        library,
        whole_runs=bool(options.read_sequences),
        delimiter=delimiter,
        engine=engine,
        plain_keys=plain_keys,
    )
