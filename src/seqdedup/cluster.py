"""seqdedup over many files on Dask (README: Beyond one machine): ``seqdedup-dask``.

Meaning: an ordered list of files is processed as if ``seqdedup --library-dir L`` ran
over each file in turn: each file its own stream (windows never span two files), with
unlimited history inside a file, and every window of an earlier file or of a loaded
library counting as already seen. Output: one file per input file, same name, in the
output folder; statistics per file and for the whole set; optionally a library saved.

The skip decision is a map-reduce on Dask collections (no scheduler, sockets or pools
of our own):

1. Files are cut into partitions at record boundaries (``block_size`` bytes each). A
   first pass over every partition counts its tracked records and returns the key
   hashes of its first W-1 tracked records, so that each partition knows the W-1
   records after it that its last windows need (the overlap).
2. Every window becomes a row (fingerprint, position), position = file rank << 40 |
   tracked index; the fingerprint is 128 bits, two int64 columns (``fp``, ``fp2``).
   Key hashes are blake2b-128 keyed with the job's seed in the Python engine and the
   kernel's two XXH64 lanes with the job's seed (the same on every worker of a job,
   unlike Python's per-process ``hash``, and new for every job, so that no input can
   be made to collide); window fingerprints are the engine's linear combination, per
   lane.
3. A group-by minimum gives each fingerprint's first position (library windows count
   as position -1); a merge brings it back to every window. Window (k, j) repeats iff
   its first occurrence is in the library, in an earlier file, or in file k at or
   before j - W: exactly the single-machine rule.
4. Repeat windows are shuffled to their partition; a last pass over each partition
   writes its kept records (or, with ``inverse``, its skipped ones) and stages its new
   material (records covered by first-seen windows) for the library.

Only what applies to a set of files is offered: window size, skip-chars, filters,
delimiter and byte mode, inverse, library load and save. Attribution (markers,
explanations, the sequences table) is the single-machine tool's job.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from hashlib import blake2b
from pathlib import Path
from typing import Any, BinaryIO

from seqdedup.config import Config, key_settings
from seqdedup.engine import hash_ints, hash_words
from seqdedup.errors import SeqdedupError, UsageError

FILE_SHIFT = 40  # position = file rank << 40 | tracked index within the file
INDEX_MASK = (1 << FILE_SHIFT) - 1
DEFAULT_BLOCK_SIZE = 64 << 20


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


@dataclass
class FileStats:
    """Counts for one input file (the same meaning as seqdedup's statistics)."""

    path: str
    total: int = 0
    emitted: int = 0
    skipped: int = 0

    @property
    def redundancy_pct(self) -> float:
        return 100.0 * self.skipped / self.total if self.total else 0.0


@dataclass
class JobStats:
    files: list[FileStats] = field(default_factory=list)
    library_loaded: int = 0
    library_saved: int = 0

    @property
    def total(self) -> int:
        return sum(f.total for f in self.files)

    @property
    def emitted(self) -> int:
        return sum(f.emitted for f in self.files)

    @property
    def skipped(self) -> int:
        return sum(f.skipped for f in self.files)


# -- partitioning ------------------------------------------------------------------
def _self_overlapping(delimiter: bytes) -> bool:
    return any(delimiter[:k] == delimiter[-k:] for k in range(1, len(delimiter)))


def plan_parts(paths: list[str], delimiter: bytes, block_size: int) -> list[Part]:
    """Cut each file into partitions that start right after a delimiter.

    A delimiter that can overlap itself ("aa" in "aaa") has no position-independent
    boundaries, so such files stay whole.
    """
    parts: list[Part] = []
    splittable = not _self_overlapping(delimiter)
    for rank, name in enumerate(paths):
        path = os.path.abspath(name)
        status = os.stat(path)
        size = status.st_size
        identity = (size, status.st_mtime_ns)
        bounds = [0]
        if splittable:
            with open(path, "rb") as f:
                at = block_size
                while at < size:
                    boundary = _next_boundary(f, at, delimiter)
                    if boundary is None or boundary >= size:
                        break
                    bounds.append(boundary)
                    at = boundary + block_size
        bounds.append(size)
        for k in range(len(bounds) - 1):
            last = k == len(bounds) - 2
            parts.append(Part(len(parts), rank, path, bounds[k], bounds[k + 1], last, identity))
    return parts


def _next_boundary(f: BinaryIO, at: int, delimiter: bytes) -> int | None:
    start = max(0, at - len(delimiter) + 1)
    f.seek(start)
    data = b""
    while True:
        more = f.read(1 << 16)
        if not more:
            return None
        data += more
        found = data.find(delimiter)
        if found >= 0:
            return start + found + len(delimiter)
        keep = len(delimiter) - 1
        start += len(data) - keep
        data = data[len(data) - keep :] if keep else b""


def _check_outputs(out_dir: Path, files: list[str], names: list[str]) -> None:
    """The output directory must be one, and no output may be any of the inputs (the
    same file by device and inode, whatever the path: a symbolic link in the output
    directory included), before anything is written."""
    from seqdedup.library.store import make_directory

    for name in names:
        target = out_dir / name
        if not target.exists():
            continue
        for path in files:
            if os.path.samefile(path, target):
                raise SeqdedupError(
                    f"--output-dir '{out_dir}': the output '{target}' is the input "
                    f"'{path}', which writing it would overwrite: choose another directory"
                )
    make_directory(out_dir, "--output-dir")


# -- per-partition work (runs on the workers) ----------------------------------------
# Every worker of a job must hash alike: the client draws the job's seed, and every task
# hashes with it (Reader.seed). A fixed seed would let crafted input collide.


def job_seed() -> int:
    """A new 64-bit seed for one job."""
    return int.from_bytes(os.urandom(8), "little")


def stable_hash(key: bytes, seed: int) -> int:
    """A key's 128-bit hash in the Python engine, the same on every worker of a job:
    blake2b keyed with the job's seed."""
    digest = blake2b(key, digest_size=16, key=seed.to_bytes(8, "little")).digest()
    return int.from_bytes(digest, "little")


def _kernel_module() -> Any:
    """The compiled kernel on this worker; the client chose it for the whole job."""
    try:
        from seqdedup import _kernel
    except ImportError:
        raise SeqdedupError(
            "a Dask worker has no compiled seqdedup kernel but the job uses it: install "
            "seqdedup with its kernel on every worker, or run with SEQDEDUP_ENGINE=python"
        ) from None
    return _kernel


def window_fingerprints(engine: str, hashes: list[int], count: int, window: int) -> Any:
    """The 128-bit fingerprints of the first ``count`` windows, by the job's engine: an
    (n, 2) int64 array of lanes."""
    import numpy as np

    if engine == "c":
        raw = _kernel_module().Matcher(window).fingerprints(hash_words(hashes), count)
        return np.frombuffer(raw, dtype=np.int64).reshape(-1, 2)
    from seqdedup.matcher import coefficients, fingerprints_np

    return fingerprints_np(hashes, count, coefficients(window)).view(np.int64)


@dataclass(frozen=True)
class Reader:
    """Reads a partition into records, tracked flags and key hashes."""

    delimiter: bytes
    skip_chars: int
    byte_mode: bool
    filters: tuple[Any, ...]
    engine: str = "python"  # "c": the compiled kernel hashes (the same on every worker)
    seed: int = 0  # the job's (job_seed): every task hashes with it
    key_steps: tuple[tuple[str, str], ...] = ()  # --normalize/--mask, in order
    json_key: tuple[str, ...] = ()
    json_ignore: tuple[str, ...] = ()

    def records(self, part: Part) -> tuple[list[bytes], bool]:
        """The partition's records, and whether the file's final record lacks a
        delimiter (only possible in its last partition)."""
        with open(part.path, "rb") as f:
            status = os.fstat(f.fileno())
            if (status.st_size, status.st_mtime_ns) != part.identity:
                raise SeqdedupError(
                    f"a Dask worker reads '{part.path}' as another file than the client saw "
                    f"(size {status.st_size:,} bytes, not {part.identity[0]:,}, or another "
                    "modification time): the inputs must not change during the job, and "
                    "must be the same files at the same paths on every worker"
                )
            f.seek(part.start)
            data = f.read(part.end - part.start)
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
        from seqdedup.filters import TRACKED, FilterList

        return [d == TRACKED for d in FilterList(self.filters).classify(records)]

    def hashes(self, tracked_records: list[bytes]) -> list[int]:
        from seqdedup.keys import KeyMaker

        steps = json = None
        kernel = _kernel_module() if self.engine == "c" else None
        if self.key_steps:
            from seqdedup.normalize import KeySteps

            steps = KeySteps(self.key_steps, kernel)
        if self.json_key or self.json_ignore:
            from seqdedup.jsonkeys import JsonSelector

            json = JsonSelector(self.json_key, self.json_ignore, kernel)
        maker = KeyMaker(self.skip_chars, self.byte_mode, steps=steps, json=json)
        keys = maker.keys(tracked_records)
        if self.engine == "c":
            return hash_ints(_kernel_module().hash_records(keys, self.seed))
        seed = self.seed
        return [stable_hash(key, seed) for key in keys]


def scan_part(reader: Reader, part: Part, window: int) -> dict[str, Any]:
    """First pass: counts, and the key hashes of the first W-1 tracked records."""
    records, _ = reader.records(part)
    flags = reader.tracked(records)
    tracked = [r for r, f in zip(records, flags, strict=True) if f]
    return {
        "records": len(records),
        "tracked": len(tracked),
        "head": reader.hashes(tracked[: window - 1]),
        "head_records": tracked[: window - 1],
    }


def part_windows(reader: Reader, part: Part, window: int, offset: int, lookahead: list[int]) -> Any:
    """Second pass: one row per window starting in the partition."""
    import numpy as np
    import pandas as pd

    records, _ = reader.records(part)
    flags = reader.tracked(records)
    hashes = reader.hashes([r for r, f in zip(records, flags, strict=True) if f])
    values = hashes + lookahead
    count = max(0, min(len(hashes), len(values) - window + 1))
    if count == 0:
        return _empty_windows()
    fps = window_fingerprints(reader.engine, values, count, window)
    positions = (part.rank << FILE_SHIFT) + offset + np.arange(count, dtype=np.int64)
    part_numbers = np.full(count, part.number, dtype=np.int64)
    return pd.DataFrame({"fp": fps[:, 0], "fp2": fps[:, 1], "pos": positions, "part": part_numbers})


def _empty_windows() -> Any:
    import numpy as np
    import pandas as pd

    empty = np.zeros(0, dtype=np.int64)
    return pd.DataFrame({"fp": empty, "fp2": empty, "pos": empty, "part": empty})


@dataclass(frozen=True)
class WriteJob:
    """What the last pass needs for one partition."""

    part: Part
    offset: int  # tracked index of the partition's first tracked record in its file
    windows: int  # windows starting in the partition
    earlier_windows: tuple[tuple[int, int], ...]  # (offset, windows) of parts reaching in
    lookahead_records: tuple[bytes, ...]  # the W-1 tracked records after it, for saving
    out_path: str
    staging_path: str | None


def write_part(
    reader: Reader, job: WriteJob, window: int, inverse: bool, repeats: list[Any]
) -> dict[str, int]:
    """Last pass: write the partition's output and stage its new material."""
    import numpy as np

    records, final_open = reader.records(job.part)
    flags = reader.tracked(records)
    tracked = [r for r, f in zip(records, flags, strict=True) if f]
    n = len(tracked)
    repeat_starts = np.concatenate(
        [np.asarray(frame["pos"], dtype=np.int64) & INDEX_MASK for frame in repeats]
        or [np.zeros(0, dtype=np.int64)]
    )
    # Every window that covers a record of this partition: those starting in the
    # earlier partitions that reach in, and its own. Local start = start - offset.
    starts = np.concatenate(
        [
            np.arange(first, first + count, dtype=np.int64)
            for first, count in (*job.earlier_windows, (job.offset, job.windows))
        ]
    )
    is_repeat = np.isin(starts, repeat_starts)
    local = starts - job.offset
    skipped = _covered(local[is_repeat], window, n)
    new = _covered(local[~is_repeat], window, n + window - 1)  # lookahead records too
    keep = ~skipped
    written: list[bytes] = []
    last_written = False
    t = 0
    for record, is_tracked in zip(records, flags, strict=True):
        if is_tracked:
            last_written = bool(keep[t]) != inverse
            t += 1
        else:
            last_written = not inverse
        if last_written:
            written.append(record)
    delimiter = reader.delimiter
    with open(job.out_path, "wb") as out:
        if written:
            out.write(delimiter.join(written))
            if not (final_open and last_written):  # a final record keeps no delimiter
                out.write(delimiter)
    if job.staging_path is not None:
        _stage_new_material(job, tracked, new, window)
    emitted = len(records) - int(skipped.sum())
    return {"records": len(records), "emitted": emitted, "skipped": int(skipped.sum())}


def _covered(window_starts: Any, window: int, size: int) -> Any:
    """Which of ``size`` records lie inside at least one of these windows."""
    import numpy as np

    lo = np.clip(window_starts, 0, size)
    hi = np.clip(window_starts + window, 0, size)
    edges = np.zeros(size + 1, dtype=np.int64)
    np.add.at(edges, lo, 1)
    np.add.at(edges, hi, -1)
    return np.cumsum(edges[:size]) > 0


def _stage_new_material(job: WriteJob, tracked: list[bytes], new: Any, window: int) -> None:
    from seqdedup.library.save import StagingFile

    extended = tracked + list(job.lookahead_records)
    staging = StagingFile(job.staging_path)  # type: ignore[arg-type]
    stretch: list[bytes] = []
    for index, record in enumerate(extended):
        if index < len(new) and new[index]:
            stretch.append(record)
        elif stretch:
            staging.add(stretch, "new")
            stretch = []
    if stretch:
        staging.add(stretch, "new")
    staging.close()


# -- the job -----------------------------------------------------------------------
CONNECT_TIMEOUT = 10.0  # seconds a scheduler named by address has to answer


def deduplicate_files(
    paths: list[str | Path],
    output_dir: str | Path,
    config: Config | None = None,
    scheduler: str | None = None,
    block_size: int = DEFAULT_BLOCK_SIZE,
    connect_timeout: float = CONNECT_TIMEOUT,
    decompress: bool = True,
    **options: Any,
) -> JobStats:
    """Deduplicate ``paths`` in order into ``output_dir`` (see the module docstring).

    ``scheduler``: ``None`` for Dask's default (or the active distributed Client),
    ``"sync"`` for the synchronous scheduler, ``"local"`` for a local cluster, or the
    address of a running distributed scheduler (``tcp://host:8786``), which must
    answer within ``connect_timeout`` seconds. With ``decompress``, compressed inputs
    are read decompressed, as ``seqdedup`` reads them.
    """
    dask, delayed = _dask()
    config = _job_config(config, options)
    files = [str(p) for p in paths]
    names = _input_names(files)
    out_dir = Path(os.path.abspath(output_dir))  # (the workers write into it)
    _check_outputs(out_dir, files, names)
    # Scratch folders, removed at the end whatever happens (a failure, SIGTERM): the
    # decompressed inputs and the partition outputs (in the output directory, which
    # every worker sees) and the library's staging.
    job = uuid.uuid4().hex
    scratch = Scratch(out_dir / f".seqdedup-inputs-{job}", out_dir / f".seqdedup-parts-{job}")
    try:
        readable = _decompressed(files, scratch.inputs) if decompress else files
        if config.library_dir is not None:
            scratch.staging = Path(tempfile.mkdtemp(prefix="seqdedup-dask-staging-"))
        return _run_job(
            dask,
            delayed,
            config,
            files,
            readable,
            names,
            out_dir,
            scheduler,
            block_size,
            connect_timeout,
            scratch,
        )
    finally:
        for folder in (scratch.inputs, scratch.parts, scratch.staging):
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)


@dataclass
class Scratch:
    """A job's scratch folders."""

    inputs: Path
    parts: Path
    staging: Path | None = None


def _decompressed(files: list[str], inputs_dir: Path) -> list[str]:
    """Each input as the workers read it: a compressed one (gzip, bzip2, xz, zstd, as
    ``seqdedup`` tells them, by their first bytes) decompressed into ``inputs_dir``
    first, in the output directory that every worker sees; the same errors as
    ``seqdedup`` (a damaged file is exit 1, and here nothing is written)."""
    from seqdedup.records import HEAD_BYTES, DecodedChunks, compression_of

    readable = []
    for rank, path in enumerate(files):
        with open(path, "rb") as source:
            kind = compression_of(source.read(HEAD_BYTES))
        if kind is None:
            readable.append(path)
            continue
        inputs_dir.mkdir(exist_ok=True)
        target = inputs_dir / f"{rank}"
        with open(path, "rb", buffering=0) as source, open(target, "wb") as sink:
            for chunk in DecodedChunks(source, decompress=True):
                sink.write(chunk)
        readable.append(str(target))
    return readable


def _run_job(
    dask: Any,
    delayed: Any,
    config: Config,
    files: list[str],
    readable: list[str],
    names: list[str],
    out_dir: Path,
    scheduler: str | None,
    block_size: int,
    connect_timeout: float,
    scratch: Scratch,
) -> JobStats:
    """The job itself, over the inputs as the workers read them (``readable``), with
    its scratch folders (made here, removed by the caller)."""
    width = config.window_size
    reader = _reader(config)
    parts = plan_parts(readable, config.delimiter, block_size)

    with _scheduler(scheduler, connect_timeout) as compute_kwargs:
        with _one_line_failures():
            scans = dask.compute(
                *[delayed(scan_part)(reader, part, width) for part in parts], **compute_kwargs
            )
        offsets, lookaheads, lookahead_records, reach = _overlaps(parts, scans, width)
        library_frame, loaded = _library_windows(config, reader, width)
        frames = [
            delayed(part_windows)(
                reader, part, width, offsets[part.number], lookaheads[part.number]
            )
            for part in parts
        ]
        by_part = _repeats_by_part(frames, library_frame, width, len(parts))

        staging_dir, parts_dir = scratch.staging, scratch.parts
        parts_dir.mkdir()
        overlaps = (offsets, lookaheads, lookahead_records, reach)
        planned = _write_jobs(parts, scans, overlaps, by_part, width, parts_dir, staging_dir)
        jobs = [
            delayed(write_part)(reader, job, width, config.inverse, needed)
            for job, needed in planned
        ]
        with _one_line_failures():
            counts = dask.compute(*jobs, **compute_kwargs)

    stats = JobStats(files=[FileStats(path) for path in files], library_loaded=loaded)
    _assemble_outputs(stats, parts, counts, names, out_dir, parts_dir)
    if staging_dir is not None:
        stats.library_saved = _save_library(config, staging_dir, stats)
    return stats


def _job_config(config: Config | None, options: dict[str, Any]) -> Config:
    """The job's configuration (unlimited history: files are read whole), refusing what
    only the single-machine tool does."""
    config = config or Config(max_history=None, **options)
    if config.hash_transform or config.annotate or config.explain:
        raise SeqdedupError(
            "the Dask engine does not support --hash-transform, --annotate or --explain"
        )
    return config


def _dask() -> tuple[Any, Any]:
    """The ``dask`` module and ``dask.delayed``, or one line saying how to get them."""
    try:
        import dask
        from dask import delayed
    except ImportError:
        raise SeqdedupError(
            "the Dask engine needs the optional extra: pip install 'seqdedup[dask]'"
        ) from None
    return dask, delayed


def _reader(config: Config) -> Reader:
    """How every task reads its part: the run's delimiter, keys and filters, by the
    engine this process has (the workers must have it too), with a seed of its own."""
    from seqdedup.engine import load as load_kernel

    return Reader(
        config.delimiter,
        config.skip_chars,
        config.byte_mode,
        config.filters,
        "python" if load_kernel() is None else "c",
        job_seed(),
        config.key_steps,
        config.json_key,
        config.json_ignore,
    )


def _write_jobs(
    parts: list[Any],
    scans: Any,
    overlaps: tuple[Any, Any, Any, Any],
    by_part: Any,
    width: int,
    parts_dir: Path,
    staging_dir: Path | None,
) -> Iterator[tuple[WriteJob, list[Any]]]:
    """Each part's write job, and the repeat frames it needs (its own and those of the
    earlier parts its windows reach)."""
    offsets, lookaheads, lookahead_records, reach = overlaps
    for part in parts:
        number = part.number
        earlier = tuple((offsets[q], scans[q]["tracked"]) for q in reach[number])
        job = WriteJob(
            part=part,
            offset=offsets[number],
            windows=_window_count(scans[number]["tracked"], lookaheads[number], width),
            earlier_windows=earlier,
            lookahead_records=tuple(lookahead_records[number]),
            out_path=str(parts_dir / f"{number}"),
            staging_path=None if staging_dir is None else str(staging_dir / f"{number}"),
        )
        yield job, [by_part[q] for q in (*reach[number], number)]


def _input_names(files: list[str]) -> list[str]:
    """Each input's output name (its base name), the inputs checked: readable files,
    with distinct names."""
    for path in files:
        if not os.path.isfile(path):
            raise SeqdedupError(f"cannot read input '{path}': not a readable file")
        if not os.access(path, os.R_OK):
            raise SeqdedupError(f"cannot read input '{path}': permission denied")
    names = [os.path.basename(p) for p in files]
    if len(set(names)) != len(names):
        raise SeqdedupError("input files must have distinct names (outputs use the same names)")
    return names


def _repeats_by_part(frames: list[Any], library_frame: Any, width: int, parts: int) -> Any:
    """The repeat windows of the parts' window frames (and the library's), as one
    delayed frame per part: a window repeats when the first position of its fingerprint
    is in the library, in an earlier file, or in its own file at least W before it (the
    single-machine rule)."""
    import dask.dataframe as dd

    windows = dd.from_delayed(frames, meta=_empty_windows())
    if library_frame is not None:
        windows = dd.concat([windows, dd.from_pandas(library_frame, npartitions=1)])
    # Spread over as many partitions as the input, so that no single task holds every
    # distinct window and the merge below is a shuffle join, not a broadcast.
    spread = max(1, windows.npartitions)
    by = ["fp", "fp2"]  # the two lanes of a window's 128-bit fingerprint
    first = windows.groupby(by)["pos"].min(split_out=spread).rename("first").reset_index()
    joined = windows.merge(first, on=by, how="left")
    pos, first_pos = joined["pos"], joined["first"]
    pos_file, first_file = pos // (1 << FILE_SHIFT), first_pos // (1 << FILE_SHIFT)
    repeat = (
        (first_pos < 0)
        | (first_file < pos_file)
        | ((first_file == pos_file) & (pos - first_pos >= width))
    )
    repeats = joined[repeat & (joined["part"] >= 0)][["part", "pos"]]
    divisions = [*range(parts), max(parts - 1, 0)]
    return repeats.set_index("part", divisions=divisions).to_delayed()


def _assemble_outputs(
    stats: JobStats,
    parts: list[Any],
    counts: Any,
    names: list[str],
    out_dir: Path,
    parts_dir: Path,
) -> None:
    """Count each part into its file's statistics and join the parts' outputs into one
    output per input, in order; the parts' folder is removed."""
    for part, count in zip(parts, counts, strict=True):
        file_stats = stats.files[part.rank]
        file_stats.total += count["records"]
        file_stats.emitted += count["emitted"]
        file_stats.skipped += count["skipped"]
    for rank, name in enumerate(names):
        with open(out_dir / name, "wb") as out:
            for part in parts:
                if part.rank == rank:
                    with open(parts_dir / f"{part.number}", "rb") as piece:
                        shutil.copyfileobj(piece, out, 1 << 20)
    shutil.rmtree(parts_dir)


def _window_count(tracked: int, lookahead: list[int], width: int) -> int:
    return max(0, min(tracked, tracked + len(lookahead) - width + 1))


def _overlaps(
    parts: list[Part], scans: tuple[dict[str, Any], ...], width: int
) -> tuple[dict[int, int], dict[int, list[int]], dict[int, list[bytes]], dict[int, list[int]]]:
    """Per partition: tracked offset in its file, the next W-1 tracked key hashes and
    records, and the earlier partitions whose windows can reach into it."""
    offsets: dict[int, int] = {}
    lookaheads: dict[int, list[int]] = {}
    records: dict[int, list[bytes]] = {}
    reach: dict[int, list[int]] = {}
    by_file: dict[int, list[Part]] = {}
    for part in parts:
        by_file.setdefault(part.rank, []).append(part)
    for file_parts in by_file.values():
        running = 0
        for k, part in enumerate(file_parts):
            offsets[part.number] = running
            running += scans[part.number]["tracked"]
            ahead: list[int] = []
            ahead_records: list[bytes] = []
            for later in file_parts[k + 1 :]:
                if len(ahead) >= width - 1:
                    break
                ahead += scans[later.number]["head"]
                ahead_records += scans[later.number]["head_records"]
            lookaheads[part.number] = ahead[: width - 1]
            records[part.number] = ahead_records[: width - 1]
            needed, earlier = width - 1, list[int]()
            for previous in reversed(file_parts[:k]):
                if needed <= 0:
                    break
                earlier.insert(0, previous.number)
                needed -= scans[previous.number]["tracked"]
            reach[part.number] = earlier
    return offsets, lookaheads, records, reach


def _library_windows(config: Config, reader: Reader, width: int) -> tuple[Any, int]:
    """Windows of the loaded libraries, at position -1 (before everything)."""
    directories = list(config.read_sequences)
    if config.library_dir is not None and config.library_dir.exists():
        directories.append(config.library_dir)
    if not directories:
        return None, 0
    import numpy as np
    import pandas as pd

    from seqdedup.library.load import load_library

    fps: list[Any] = []
    loaded = 0
    for directory in directories:
        for sequence in load_library(directory, config.delimiter, keys=key_settings(config)):
            loaded += 1
            hashes = reader.hashes(sequence.records)
            count = len(hashes) - width + 1
            if count > 0:
                fps.append(window_fingerprints(reader.engine, hashes, count, width))
    values = np.concatenate(fps) if fps else np.zeros((0, 2), dtype=np.int64)
    frame = pd.DataFrame(
        {
            "fp": values[:, 0],
            "fp2": values[:, 1],
            "pos": np.full(len(values), -1, dtype=np.int64),
            "part": np.full(len(values), -1, dtype=np.int64),
        }
    )
    return frame, loaded


def _save_library(config: Config, staging_dir: Path, stats: JobStats) -> int:
    from seqdedup.library.save import LibraryWriter

    assert config.library_dir is not None
    writer = LibraryWriter(config.library_dir)
    try:
        for staged in sorted(staging_dir.iterdir(), key=lambda p: int(p.name)):
            writer.absorb(staged)
        document: dict[str, object] = {
            "statistics": {
                "lines": {"total": stats.total, "emitted": stats.emitted, "skipped": stats.skipped},
                "files": [
                    {"path": f.path, "total": f.total, "skipped": f.skipped} for f in stats.files
                ],
            }
        }
        configuration = {
            "window_size": config.window_size,
            "engine": "dask",
            "skip_chars": config.skip_chars,
            "keys": key_settings(config),
        }
        return writer.commit(configuration, document)
    finally:
        writer.discard()
        shutil.rmtree(staging_dir, ignore_errors=True)


class _scheduler:
    """Pick the Dask scheduler; a "local" cluster is started and stopped here."""

    def __init__(self, name: str | None, connect_timeout: float = 10.0) -> None:
        self.name = name
        self.connect_timeout = connect_timeout
        self._client: Any = None
        self._cluster: Any = None

    def __enter__(self) -> dict[str, Any]:
        if self.name is None:
            return {}
        if self.name in ("sync", "synchronous"):
            return {"scheduler": "synchronous"}
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise SeqdedupError(
                "a distributed scheduler needs the optional extra: pip install 'seqdedup[dask]'"
            ) from None
        import logging

        # Dask's p2p shuffle reports every shuffle at WARNING level; that is not news.
        logging.getLogger("distributed.shuffle").setLevel(logging.ERROR)
        # A job stopped by Ctrl-C leaves the client's futures unretrieved, which asyncio
        # reports when they are collected (at any moment): errors come to us as results.
        logging.getLogger("asyncio").setLevel(logging.CRITICAL)
        try:
            if self.name == "local":
                # Ctrl-C reaches the whole process group: the workers start with it
                # ignored, and this process alone stops the job and closes the
                # cluster, without their tracebacks.
                with _interrupts_ignored():
                    self._cluster = LocalCluster(
                        n_workers=2,
                        threads_per_worker=1,
                        processes=True,
                        dashboard_address=None,
                        # A cancelled task is a WARNING there, and a worker that outlives
                        # the scheduler stopped by Ctrl-C logs heartbeat ERRORs: what a job
                        # needs to say comes to this process as results and errors.
                        silence_logs=logging.CRITICAL,
                    )
                self._client = Client(self._cluster)
            else:
                self._client = Client(self.name, timeout=self.connect_timeout)
        except ValueError as exc:  # no port, an unknown scheme: not an address at all
            raise UsageError(
                f"--scheduler '{self.name}' is not a scheduler address ({exc}): use local, "
                "sync or tcp://HOST:PORT"
            ) from None
        except (OSError, TimeoutError) as exc:
            raise SeqdedupError(f"cannot reach the Dask scheduler '{self.name}': {exc}") from None
        return {"scheduler": self._client}

    def __exit__(self, kind: object, *exc: object) -> None:
        import logging

        if kind is not None:  # stopped (Ctrl-C, an error): closing mid-job is no news
            logging.getLogger("distributed").setLevel(logging.CRITICAL)
        if self._client is not None:
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()


@contextlib.contextmanager
def _one_line_failures() -> Iterator[None]:
    """A task that fails on a worker is one line (its error's type and text), not the
    worker's traceback; our own errors, and interruptions, pass as they are."""
    try:
        yield
    except (SeqdedupError, KeyboardInterrupt, SystemExit):
        raise
    except MemoryError:
        raise SeqdedupError("a Dask task ran out of memory") from None
    except Exception as exc:
        raise SeqdedupError(f"a Dask task failed: {type(exc).__name__}: {exc}") from None


@contextlib.contextmanager
def _interrupts_ignored() -> Iterator[None]:
    """SIGINT ignored while the cluster's processes start: they inherit the ignored
    signal (across exec too; a blocked one would not do, they are started from another
    thread). A Ctrl-C in that second is lost: pressing it again stops the job."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
