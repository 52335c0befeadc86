"""What the Dask engine's tasks do to the input (seqdedup.dask.job builds the job).

Only one global fact is needed per window: the earliest position of its content (a
loaded library's windows count as earliest). A window's *position* is its first
record's place in the input order: ``file rank << POSITION_SHIFT | byte offset``
(library windows: -1). A window at tracked record j of a file repeats iff that
earliest position is at or before the position of record j - W of the file (which
says: in the library, in an earlier file, or at least W records earlier in this one:
the single-machine rule).

1. :func:`first_pass`, per partition: its *frame* (its tracked records, with the 2W-1
   before it and the W-1 after it in its file, read past its byte range) is hashed
   with the job's seed, its windows fingerprinted and each given a key that stands for
   its content (:func:`window_keys`: a keyed hash of its key hashes, confirmed by
   comparison); of each distinct key only the frame's first window goes on, as a row
   (key, position), to the key's owner (``low lane % owners``).
2. :func:`owner_answers`, per owner: the earliest position of each of its
   fingerprints, over every partition's rows and the library's; each partition gets
   back only its rows whose fingerprint occurs earlier (row, earliest position).
3. :func:`second_pass`, per partition: every window that covers one of its records is
   decided from the frame's first windows and the answers, its kept records are
   written (byte ranges as read), its new material staged for the library.

The kernel does the hashing, fingerprints and both table steps (``first_windows``,
``earliest``); the pure-Python engine has the same definitions here.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from hashlib import blake2b
from itertools import compress
from typing import TYPE_CHECKING, Any, BinaryIO

from seqdedup.base.cengine import CEngine
from seqdedup.base.engine import Engine
from seqdedup.base.errors import SeqdedupError
from seqdedup.base.hashes import hash_ints, hash_words
from seqdedup.base.records import split_records
from seqdedup.engine.choice import compiled_engine, engine_named
from seqdedup.engine.runs import runs_of

if TYPE_CHECKING:
    from seqdedup.base.hashes import Flags, Int64s
    from seqdedup.keys.maker import KeyMaker

POSITION_SHIFT = 44  # position = file rank << 44 | byte offset (files up to 16 TiB)
READ_STEP = 1 << 14  # bytes read past a partition's range at first (doubled as needed)


@dataclass(frozen=True)
class Part:
    """A byte range of one input file, cut at a record boundary."""

    number: int  # among all partitions of the job, in file order
    rank: int  # the file's place in the input order
    path: str  # absolute: a worker's working directory is not the client's
    start: int
    end: int
    last: bool  # the file's last partition
    # The file as the client saw it (size, modification time in ns): a worker checks
    # that it reads the same file, not another one by the same name.
    identity: tuple[int, int] = (0, 0)


def stable_hash(key: bytes, seed: int) -> int:
    """A key's 128-bit hash in the Python engine, the same on every worker of a job:
    blake2b keyed with the job's seed."""
    digest = blake2b(key, digest_size=16, key=seed.to_bytes(16, "little")).digest()
    return int.from_bytes(digest, "little")


def worker_engine(name: str) -> Engine:
    """The engine ``name`` on this worker; the client chose it for the whole job."""
    return engine_named("python") if name == "python" else kernel_module()


def kernel_module() -> CEngine:
    """The C engine on this worker (the job uses it): an error that says so where the
    worker has no compiled kernel."""
    try:
        return compiled_engine()
    except ImportError:
        raise SeqdedupError(
            "a Dask worker has no compiled seqdedup kernel but the job uses it: install "
            "seqdedup with its kernel on every worker, or run with SEQDEDUP_ENGINE=python"
        ) from None


def window_fingerprints(engine: str, hashes: bytes, count: int, window: int, seed: int) -> Int64s:
    """The 128-bit fingerprints of the first ``count`` windows of 16-byte key hashes,
    by the job's engine and with the job's seed (its bases): an (n, 2) int64 array of
    lanes."""
    import numpy as np

    if count <= 0:
        return np.zeros((0, 2), dtype=np.int64)
    if engine == "c":
        raw = kernel_module().chunk_matcher(window, seed=seed).fingerprints(hashes, count)
        return np.frombuffer(raw, dtype=np.int64).reshape(-1, 2)
    from seqdedup.engine.fingerprints import (
        NUMPY_MAX_WIDTH,
        coefficients,
        fingerprints_np,
        fingerprints_py,
    )

    coeffs = coefficients(window, seed)
    if 1 < window <= NUMPY_MAX_WIDTH:
        return fingerprints_np(hashes, count, coeffs).view(np.int64)
    prints = fingerprints_py(hash_ints(hashes), count, coeffs)
    return np.frombuffer(hash_words(prints), dtype=np.uint64).reshape(-1, 2).view(np.int64)


def window_keys(engine: str, hashes: bytes, fps: Int64s, window: int, seed: int) -> Int64s:
    """Per window (``fps``: its fingerprint lanes), a 128-bit key standing for its
    content: a keyed hash of its W key hashes (W = 1: the key hash), found through the
    fingerprint and confirmed by comparing records, so that owners group contents and a
    shared fingerprint never joins two windows (docs/engine.md, "Identity of windows").
    An (n, 2) int64 array of lanes."""
    import numpy as np

    fps = np.ascontiguousarray(fps, dtype=np.int64)
    if engine == "c":
        raw = kernel_module().window_keys(hashes, fps.data, window, seed)
        return np.frombuffer(raw, dtype=np.int64).reshape(-1, 2)
    count = len(fps)
    if window == 1:
        return np.frombuffer(hashes[: 16 * count], dtype=np.int64).reshape(-1, 2)
    salt = (seed ^ 0x6B657973_20666F72_77696E64_6F776B65).to_bytes(16, "little")
    first: dict[bytes, int] = {}
    keys: list[bytes] = []
    span = 16 * window
    for i in range(count):
        f = first.setdefault(fps[i].tobytes(), i)
        mine = hashes[16 * i : 16 * i + span]
        if f != i and mine == hashes[16 * f : 16 * f + span]:
            keys.append(keys[f])
        else:
            keys.append(blake2b(mine, digest_size=16, key=salt).digest())
    return np.frombuffer(b"".join(keys), dtype=np.int64).reshape(-1, 2)


@dataclass(frozen=True)
class Reader:
    """Reads a partition (and what lies around it) into records, tracked flags and key
    hashes, the same on every worker of a job."""

    delimiter: bytes
    skip_chars: int
    byte_mode: bool
    filters: tuple[Any, ...]
    engine: str = "python"  # "c": the compiled kernel hashes (the same on every worker)
    seed: int = 0  # the job's: every task hashes with it
    key_steps: tuple[tuple[str, str], ...] = ()  # --normalize/--mask, in order
    json_key: tuple[str, ...] = ()
    json_ignore: tuple[str, ...] = ()
    skip_fields: int = 0  # blank-separated fields left out of the key

    def read(self, part: Part, start: int, end: int) -> bytes:
        """Bytes ``start`` .. ``end`` of the part's file, once it is checked to be the
        file the client saw."""
        with self._open(part) as f:
            f.seek(start)
            return f.read(max(0, end - start))

    def mapped(self, part: Part, start: int, end: int) -> memoryview:
        """The same, mapped from the page cache instead of copied (a partition's whole
        range: the kernel reads it in place)."""
        import mmap

        if end <= start:
            return memoryview(b"")
        with self._open(part) as f:
            offset = start - start % mmap.ALLOCATIONGRANULARITY
            populate = getattr(mmap, "MAP_POPULATE", 0)  # (Linux: read ahead at once)
            mapping = mmap.mmap(
                f.fileno(),
                end - offset,
                flags=mmap.MAP_PRIVATE | populate,
                prot=mmap.PROT_READ,
                offset=offset,
            )
        return memoryview(mapping)[start - offset :]

    def _open(self, part: Part) -> BinaryIO:
        """The part's file, checked to be the file the client saw."""
        f = open(part.path, "rb")  # noqa: SIM115 (returned open)
        status = os.fstat(f.fileno())
        if (status.st_size, status.st_mtime_ns) != part.identity:
            f.close()
            raise SeqdedupError(
                f"a Dask worker reads '{part.path}' as another file than the client saw "
                f"(size {status.st_size:,} bytes, not {part.identity[0]:,}, or another "
                "modification time): the inputs must not change during the job, and "
                "must be the same files at the same paths on every worker"
            )
        return f

    def records(self, part: Part) -> tuple[list[bytes], bool]:
        """The partition's records, and whether the file's final record lacks a
        delimiter (only possible in its last partition)."""
        data = self.read(part, part.start, part.end)
        if not data:
            return [], False
        records = data.split(self.delimiter)
        tail = records.pop()
        if tail:
            records.append(tail)
        return records, bool(tail)

    def tracked(self, records: list[bytes]) -> list[bool]:
        if not self.filters:
            return [True] * len(records)
        from seqdedup.keys.filters import TRACKED, FilterList

        return [
            d == TRACKED
            for d in FilterList(self.filters, worker_engine(self.engine).literal_mask).classify(
                records
            )
        ]

    def hash_bytes(self, tracked_records: list[bytes]) -> bytes:
        """The records' 128-bit key hashes, 16 bytes each."""
        return self.hash_keys(self.key_maker().keys(tracked_records))

    def key_maker(self) -> KeyMaker:
        from seqdedup.keys.maker import KeyMaker

        steps = json = None
        kernel = worker_engine(self.engine).kernel
        if self.key_steps:
            from seqdedup.config.normalize import KeySteps

            steps = KeySteps(self.key_steps, kernel)
        if self.json_key or self.json_ignore:
            from seqdedup.config.jsonkeys import JsonSelector

            json = JsonSelector(self.json_key, self.json_ignore, kernel)
        return KeyMaker(
            self.skip_chars, self.byte_mode, steps=steps, json=json, skip_fields=self.skip_fields
        )

    def hash_keys(self, keys: list[bytes]) -> bytes:
        if self.engine == "c":
            return bytes(kernel_module().hash_records(keys, self.seed))  # (keys made above)
        seed = self.seed
        return hash_words([stable_hash(key, seed) for key in keys]).tobytes()

    @property
    def plain(self) -> bool:
        """Every record tracked and its key the kernel's own (skip-chars at most): the
        kernel splits and hashes a whole range, no Python object per record."""
        return self.engine == "c" and not (
            self.filters or self.key_steps or self.json_key or self.json_ignore
        )

    def split_hash(self, data: bytes | memoryview) -> tuple[bytes, bytes]:
        """The records of ``data`` (``plain`` only): starts (int64) and key hashes."""
        found: tuple[bytes, bytes] = kernel_module().split_hash(
            data,
            self.delimiter,
            self.seed,
            self.skip_chars,
            self.byte_mode,
            skip_fields=self.skip_fields,
        )
        return found

    def hashes(self, tracked_records: list[bytes]) -> list[int]:
        """The same as 128-bit ints."""
        return hash_ints(self.hash_bytes(tracked_records))


# -- the frame: a partition's tracked records and what its windows need around it ----
@dataclass
class Frame:
    """Tracked records ``before`` (up to 2W-1, in order), the partition's own, and
    ``after`` (up to W-1): their byte offsets in the file and their key hashes."""

    starts: Int64s  # int64 byte offset of each tracked record of the frame
    hashes: bytes  # 16 bytes per tracked record
    own: int  # frame index of the partition's first tracked record
    own_count: int
    after: list[bytes]  # the tracked records after the partition (for the library)


def _split_at(data: bytes, base: int, delimiter: bytes) -> tuple[list[bytes], list[int]]:
    """Records of ``data`` (which begins at file offset ``base`` at a record start)
    and their offsets; a final record without a delimiter is kept."""
    records = split_records(data, delimiter)
    starts, at, step = [], base, len(delimiter)
    for record in records:
        starts.append(at)
        at += len(record) + step
    return records, starts


def _before(reader: Reader, part: Part, need: int) -> tuple[list[bytes], list[int]]:
    """The last ``need`` tracked records before the part (fewer at the file's start)."""
    delimiter, span = reader.delimiter, READ_STEP
    while True:
        begin = max(0, part.start - span)
        data = reader.read(part, begin, part.start)
        if begin > 0:  # the first record may be cut: start after the first delimiter
            cut = data.find(delimiter)
            data = data[cut + len(delimiter) :] if cut >= 0 else b""
            begin = part.start - len(data)
        records, starts = _split_at(data, begin, delimiter)
        flags = reader.tracked(records)
        records = list(compress(records, flags))
        starts = list(compress(starts, flags))
        if len(records) >= need or begin == 0:
            keep = max(0, len(records) - need)
            return records[keep:], starts[keep:]
        span *= 2


def _after(reader: Reader, part: Part, need: int, size: int) -> tuple[list[bytes], list[int]]:
    """The first ``need`` tracked records after the part (fewer at the file's end)."""
    delimiter, span = reader.delimiter, READ_STEP
    while True:
        stop = min(size, part.end + span)
        data = reader.read(part, part.end, stop)
        if stop < size:  # the last record may be cut: keep up to the last delimiter
            cut = data.rfind(delimiter)
            data = data[: cut + len(delimiter)] if cut >= 0 else b""
        records, starts = _split_at(data, part.end, delimiter)
        flags = reader.tracked(records)
        records = list(compress(records, flags))
        starts = list(compress(starts, flags))
        if len(records) >= need or stop >= size:
            return records[:need], starts[:need]
        span *= 2


def read_frame(reader: Reader, part: Part, window: int) -> Frame:
    """The partition's frame."""
    import numpy as np

    size = part.identity[0]
    before, before_starts = _before(reader, part, 2 * window - 1)
    after, after_starts = _after(reader, part, window - 1, size) if not part.last else ([], [])
    if reader.plain:  # the kernel splits and hashes the partition's own range
        found, own_hashes = reader.split_hash(reader.mapped(part, part.start, part.end))
        own_starts = np.frombuffer(found, dtype=np.int64) + part.start
        hashes = reader.hash_bytes(before) + own_hashes + reader.hash_bytes(after)
    else:
        data = reader.read(part, part.start, part.end)
        own_records, starts = _split_at(data, part.start, reader.delimiter)
        flags = reader.tracked(own_records)
        own_starts = np.array(list(compress(starts, flags)), dtype=np.int64)
        hashes = reader.hash_bytes([*before, *compress(own_records, flags), *after])
    every = [np.array(before_starts, dtype=np.int64), own_starts]
    every.append(np.array(after_starts, dtype=np.int64))
    return Frame(np.concatenate(every), hashes, len(before), len(own_starts), after)


# -- pass 1 ---------------------------------------------------------------------------
def first_windows(
    engine: str, fps: Int64s, positions: Int64s, owners: int
) -> tuple[Int64s, list[bytes], list[Int64s]]:
    """Per window, the index of the frame's first window with its fingerprint; per
    owner (low lane % owners), the rows (fingerprint lanes, position: int64 triples)
    of the first windows whose fingerprints it owns, and their window indices."""
    import numpy as np

    if engine == "c":
        firsts, rows, routed = kernel_module().first_windows(  # (arrays read in place)
            np.ascontiguousarray(fps).data, np.ascontiguousarray(positions).data, owners
        )
        return (
            np.frombuffer(firsts, dtype=np.int64),
            rows,
            [np.frombuffer(chunk, dtype=np.int64) for chunk in routed],
        )
    seen: dict[tuple[int, int], int] = {}
    out = [seen.setdefault((int(lo), int(hi)), i) for i, (lo, hi) in enumerate(fps.tolist())]
    first = np.array(out, dtype=np.int64)
    distinct = np.flatnonzero(first == np.arange(len(first)))
    owner = fps[distinct, 0].view(np.uint64) % np.uint64(owners)
    mine = [distinct[owner == b] for b in range(owners)]
    table = np.column_stack([fps, positions]) if len(fps) else np.zeros((0, 3), np.int64)
    return first, [table[chosen].tobytes() for chosen in mine], mine


@dataclass
class PartState:
    """What the second pass of a partition needs from its first (kept on the worker)."""

    frame: Frame
    firsts: Int64s  # per frame window: the index of the frame's first with its fingerprint
    routed: list[Int64s]  # per owner: the frame windows of its rows, in row order


def first_pass(
    reader: Reader, part: Part, window: int, owners: int
) -> tuple[PartState, list[bytes]]:
    """The partition's frame and, per owner, the rows (fingerprint lanes, position) of
    the frame's first windows of the fingerprints it owns (int64 triples)."""
    frame = read_frame(reader, part, window)
    count = max(0, len(frame.starts) - window + 1)
    fps = window_fingerprints(reader.engine, frame.hashes, count, window, reader.seed)
    keys = window_keys(reader.engine, frame.hashes, fps, window, reader.seed)
    positions = (part.rank << POSITION_SHIFT) | frame.starts[:count]
    firsts, rows, routed = first_windows(reader.engine, keys, positions, owners)
    frame.hashes = b""  # (not needed any more: the state stays until the second pass)
    return PartState(frame, firsts, routed), rows


# -- owners ---------------------------------------------------------------------------
def owner_answers(engine: str, rows: list[bytes], library: bytes) -> list[bytes]:
    """For each partition's rows (int64 triples), its rows whose fingerprint occurs at
    an earlier position (a library fingerprint, int64 pairs, at -1): int64 pairs (row,
    earliest position)."""
    if engine == "c":
        answers: list[bytes] = kernel_module().earliest(rows, library)
        return answers
    import numpy as np

    earliest: dict[tuple[int, int], int] = {}
    for lo, hi in np.frombuffer(library, dtype=np.int64).reshape(-1, 2).tolist():
        earliest[(lo, hi)] = -1
    tables = [np.frombuffer(r, dtype=np.int64).reshape(-1, 3).tolist() for r in rows]
    for table in tables:
        for lo, hi, position in table:
            if earliest.setdefault((lo, hi), position) > position:
                earliest[(lo, hi)] = position
    out = []
    for table in tables:
        pairs = [
            (k, earliest[(lo, hi)])
            for k, (lo, hi, position) in enumerate(table)
            if earliest[(lo, hi)] < position
        ]
        out.append(np.array(pairs, dtype=np.int64).reshape(-1, 2).tobytes())
    return out


# -- pass 2 ---------------------------------------------------------------------------
def decide(state: PartState, answers: list[bytes], rank: int, window: int) -> tuple[Flags, Flags]:
    """Which of the partition's tracked records are skipped, and which of them (and
    of the W-1 after) lie in a window that is no repeat (new material)."""
    import numpy as np

    frame, firsts = state.frame, state.firsts
    count = len(firsts)
    base = np.int64(rank << POSITION_SHIFT)
    earliest = base | frame.starts[:count]  # a first window's own position, unless...
    for routed, answer in zip(state.routed, answers, strict=True):
        pairs = np.frombuffer(answer, dtype=np.int64).reshape(-1, 2)
        earliest[routed[pairs[:, 0]]] = pairs[:, 1]  # ... its content occurs earlier
    first = earliest[firsts]
    # The position of record j - W: at or after it, an occurrence overlaps window j.
    bound = np.full(count, base - 1, dtype=np.int64)
    bound[window:] = base | frame.starts[: max(0, count - window)]
    repeat = first <= bound
    own, n = frame.own, frame.own_count
    lo = max(0, own - window + 1)  # the windows that cover a record of the partition
    hi = min(count, own + n)
    starts = np.arange(lo, hi)
    skipped = _covered(starts[repeat[lo:hi]] - own, window, n)
    new = _covered(starts[~repeat[lo:hi]] - own, window, n + len(frame.after))
    return skipped, new


def _covered(window_starts: Int64s, window: int, size: int) -> Flags:
    """Which of ``size`` records lie inside at least one of these windows."""
    import numpy as np

    lo = np.clip(window_starts, 0, size)
    hi = np.clip(window_starts + window, 0, size)
    edges = np.zeros(size + 1, dtype=np.int64)
    np.add.at(edges, lo, 1)
    np.add.at(edges, hi, -1)
    return np.cumsum(edges[:size]) > 0


@dataclass
class Written:
    """What a partition writes, decided by its second pass: byte ranges of its range
    (int64 start, end pairs relative to its start), or, with pass-through records
    among them, the bytes themselves; and its counts."""

    ranges: Int64s | None
    data: bytes | None
    size: int
    records: int
    skipped: int


def second_pass(
    reader: Reader,
    part: Part,
    frame: Frame,
    decided: tuple[Flags, Flags],
    inverse: bool,
    staging_path: str | None,
) -> Written:
    """Write what the partition decided (``decided``: its skipped records, and the new
    material among them and the records after) and stage its new material; what it
    writes (see :func:`write_part`)."""
    skipped, new = decided
    if reader.filters:
        written = _chosen_records(reader, part, skipped, inverse)
    else:  # every record tracked: the written ones as byte ranges of what was read
        written = _chosen_ranges(part, frame, skipped, inverse)
    if staging_path is not None:
        records, _ = reader.records(part)
        tracked = [*compress(records, reader.tracked(records)), *frame.after]
        _stage_new_material(staging_path, tracked, new)
    return written


def _chosen_ranges(part: Part, frame: Frame, skipped: Flags, inverse: bool) -> Written:
    """The records whose flag says so, as runs of byte ranges (each record with its
    delimiter, as read: a file's final record without one stays so)."""
    import numpy as np

    starts = frame.starts[frame.own : frame.own + frame.own_count] - part.start
    chosen = np.flatnonzero(skipped == inverse)
    ranges = np.zeros((0, 2), dtype=np.int64)
    if len(chosen):
        ends = np.append(starts[1:], part.end - part.start)
        breaks = np.flatnonzero(np.diff(chosen) != 1)
        firsts = chosen[np.concatenate([[0], breaks + 1])]
        lasts = chosen[np.concatenate([breaks, [len(chosen) - 1]])]
        ranges = np.column_stack([starts[firsts], ends[lasts]])
    size = int((ranges[:, 1] - ranges[:, 0]).sum())
    return Written(ranges, None, size, len(starts), int(skipped.sum()))


def _chosen_records(reader: Reader, part: Part, skipped: Flags, inverse: bool) -> Written:
    """The same with pass-through records among them (written in normal mode only)."""
    records, final_open = reader.records(part)
    flags = reader.tracked(records)
    written, t = [], 0
    last_written = False
    for record, is_tracked in zip(records, flags, strict=True):
        if is_tracked:
            last_written = bool(skipped[t]) == inverse
            t += 1
        else:
            last_written = not inverse
        if last_written:
            written.append(record)
    delimiter = reader.delimiter
    data = delimiter.join(written)
    if written and not (final_open and last_written):  # a final record keeps no delimiter
        data += delimiter
    return Written(None, data, len(data), len(records), int(skipped.sum()))


IOV_MAX = 1024  # byte ranges written by one system call


def write_part(reader: Reader, part: Part, written: Written, path: str, offset: int) -> None:
    """Write what the partition decided into its file's output, at ``offset`` (the
    sizes of the file's partitions before it): each byte is written once."""
    fd = os.open(path, os.O_WRONLY)
    try:
        if written.data is not None:
            _write_all(fd, [memoryview(written.data)], offset)
            return
        view = reader.mapped(part, part.start, part.end)
        assert written.ranges is not None  # (no data: the ranges say what is written)
        pairs = written.ranges.tolist()
        for k in range(0, len(pairs), IOV_MAX):
            slices = [view[a:b] for a, b in pairs[k : k + IOV_MAX]]
            offset = _write_all(fd, slices, offset)
    finally:
        os.close(fd)


def _write_all(fd: int, slices: list[memoryview], offset: int) -> int:
    """Write the slices at ``offset`` (again where a write was short); the offset after."""
    while slices:
        done = os.pwritev(fd, slices, offset)
        offset += done
        while slices and done >= len(slices[0]):
            done -= len(slices[0])
            slices.pop(0)
        if slices and done:
            slices[0] = slices[0][done:]
    return offset


def _stage_new_material(path: str, tracked: list[bytes], new: Flags) -> None:
    from seqdedup.library.save import StagingFile

    # A task run again (its worker died) starts its staging anew: not on top of what
    # the first run staged, nor of a file it left half-written.
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)
    import numpy as np

    staging = StagingFile(path)
    flags = np.asarray(new[: len(tracked)], dtype=bool).tolist()  # (past `new`: not new)
    for start, stop in runs_of(flags, True):  # (found at C speed, not record by record)
        staging.add(tracked[start:stop], "new")
    staging.close()
