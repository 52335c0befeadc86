"""seqdedup over many files on Dask (docs/scale-out.md): ``seqdedup-dask``.

Meaning: an ordered list of files is processed as if ``seqdedup --library-dir L`` ran
over each file in turn: each file its own stream (windows never span two files), with
unlimited history inside a file, and every window of an earlier file or of a loaded
library counting as already seen. Output: one file per input file, same name, in the
output folder; statistics per file and for the whole set; optionally a library saved.

The skip decision needs one global fact per window: the earliest position of its
content. It is found with one exchange of fixed-width rows on Dask (delayed tasks; no
scheduler, sockets or pools of our own), each task's work done by the kernel
(``seqdedup.dask.partitions`` says what each does):

1. Files are cut into partitions at record boundaries (``block_size`` bytes each).
   Each partition's first pass reads its records and the 2W-1 before and W-1 after it
   (past its range), hashes their keys with the job's seed and fingerprints its
   windows (128 bits); only the first window of each distinct fingerprint goes on, as
   a row (fingerprint, position: file rank and byte offset) to the fingerprint's
   owner.
2. Each owner finds every fingerprint's earliest position (a library's windows count
   as earliest) and answers each partition only for its rows that occur earlier.
3. Each partition's second pass decides its windows (a window repeats iff the
   earliest occurrence of its content is at or before record j - W of its file: in
   the library, an earlier file, or W records back: exactly the single-machine rule),
   writes its kept records (or, with ``inverse``, its skipped ones) and stages its
   new material (records covered by first-seen windows) for the library.

Under a minimum size the same exchange carries each partition's shortest large-enough
stretches instead (``seqdedup.dask.stretches``).

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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from seqdedup.base.errors import SeqdedupError
from seqdedup.config.settings import Config, key_settings
from seqdedup.dask.library import library_keys, save_library
from seqdedup.dask.partitions import (
    POSITION_SHIFT,
    Part,
    PartState,
    Reader,
    Written,
    decide,
    first_pass,
    owner_answers,
    second_pass,
    write_part,
)
from seqdedup.dask.scheduler import Scheduler
from seqdedup.dask.stretches import (
    STRETCH_ROW_BYTES,
    StretchState,
    size_rule,
    stretch_first_pass,
    stretch_owner_answers,
)
from seqdedup.dask.tallies import ANSWER_BYTES, ROW_BYTES, Tally, check_arrived, tallies

DEFAULT_BLOCK_SIZE = 64 << 20
OWNER_BYTES = 64 << 20  # input bytes per fingerprint owner (at least one, at most MAX_OWNERS)
MAX_OWNERS = 64


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

    def document(self) -> dict[str, object]:
        """The statistics a saved library records of the job."""
        lines = {"total": self.total, "emitted": self.emitted, "skipped": self.skipped}
        files = [{"path": f.path, "total": f.total, "skipped": f.skipped} for f in self.files]
        return {"statistics": {"lines": lines, "files": files}}


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
    most_files = 1 << (63 - POSITION_SHIFT)  # a position is rank << POSITION_SHIFT | offset
    if len(paths) > most_files:
        raise SeqdedupError(f"at most {most_files:,} input files in one job, got {len(paths):,}")
    for rank, name in enumerate(paths):
        path = os.path.abspath(name)
        status = os.stat(path)
        size = status.st_size
        if size >= 1 << POSITION_SHIFT:
            raise SeqdedupError(
                f"'{name}': an input of {size:,} bytes; one job takes inputs below "
                f"{1 << POSITION_SHIFT:,} bytes (16 TiB)"
            )
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


# -- per-partition work (runs on the workers: seqdedup.dask.partitions) -----------------
# Every worker of a job must hash alike: the client draws the job's seed, and every task
# hashes with it (Reader.seed). A fixed seed would let crafted input collide.


def job_seed() -> int:
    """A new 128-bit seed for one job (two 64-bit secrets, see seqdedup.base.engine.SEED)."""
    return int.from_bytes(os.urandom(16), "little")


# -- the job -----------------------------------------------------------------------
CONNECT_TIMEOUT = 10.0  # seconds a scheduler named by address has to answer


def deduplicate_files(
    paths: Sequence[str | Path],
    output_dir: str | Path,
    config: Config | None = None,
    scheduler: str | None = None,
    block_size: int = DEFAULT_BLOCK_SIZE,
    connect_timeout: float = CONNECT_TIMEOUT,
    decompress: bool = True,
    owners: int | None = None,
    **options: object,
) -> JobStats:
    """Deduplicate ``paths`` in order into ``output_dir`` (see the module docstring).

    ``scheduler``: ``None`` for Dask's default (or the active distributed Client),
    ``"sync"`` for the synchronous scheduler, ``"local"`` for a local cluster, or the
    address of a running distributed scheduler (``tcp://host:8786``), which must
    answer within ``connect_timeout`` seconds. With ``decompress``, compressed inputs
    are read decompressed, as ``seqdedup`` reads them. ``owners``: how many tasks
    share the fingerprints (default: one per OWNER_BYTES of input).
    """
    dask, delayed = _dask()
    config = _job_config(config, options)
    files = [str(p) for p in paths]
    names = _input_names(files, decompress)
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
            owners,
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
    from seqdedup.base.records import HEAD_BYTES, DecodedChunks, compression_of

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
    owners: int | None = None,
) -> JobStats:
    """The job itself, over the inputs as the workers read them (``readable``), with
    its scratch folders (made here, removed by the caller)."""
    width = config.window_size
    reader = _reader(config)
    parts = plan_parts(readable, config.delimiter, block_size)
    owners = owners or owner_count(sum(p.end - p.start for p in parts), len(parts))
    made = key_settings(config)
    libraries, rule, delimiter = config.library_options, config.rule_options, config.delimiter
    library, loaded = library_keys(libraries, rule, made, delimiter, reader, owners)
    staging_dir, parts_dir = scratch.staging, scratch.parts
    parts_dir.mkdir()

    # Each file's output is made once, in the scratch folder, by its partitions writing
    # at their offsets (the sizes of the partitions before them), then moved into place.
    outputs = [parts_dir / f"{rank}" for rank in range(len(files))]
    for output in outputs:
        output.touch()
    staging = None if staging_dir is None else str(staging_dir)
    writes = _tasks(delayed, reader, config, parts, owners, library, outputs, staging)
    with Scheduler(scheduler, connect_timeout) as compute_kwargs, _one_line_failures():
        (results,) = dask.compute(writes, **compute_kwargs)

    stats = JobStats(files=[FileStats(path) for path in files], library_loaded=loaded)
    _assemble_outputs(stats, parts, results, names, out_dir, outputs)
    if staging_dir is not None:
        assert config.library_dir is not None
        configuration = {
            "window_size": width,
            "engine": "dask",
            "skip_chars": config.skip_chars,
            "keys": made,
        }
        document = stats.document()
        stats.library_saved = save_library(config.library_dir, configuration, staging_dir, document)
    return stats


def _tasks(
    delayed: Any,
    reader: Reader,
    config: Config,
    parts: list[Part],
    owners: int,
    library: list[bytes],
    outputs: list[Path],
    staging: str | None,
) -> list[Any]:
    """The job's tasks: each partition's write, which gives its counts (the rest is
    what they depend on: first passes, owners, second passes, the offsets). Every task
    costs the scheduler and a worker about a millisecond, so small results are handed
    over whole (each second pass takes every owner's answers, each write every offset)
    rather than picked out by tasks of their own."""
    width = config.window_size
    # (a minimum size: the shortest large-enough stretches, not the windows)
    rule = size_rule(config.rule_options) if config.min_size else None
    if rule is not None:
        firsts = [delayed(stretch_first_pass)(reader, part, rule, owners) for part in parts]
    else:
        firsts = [delayed(first_pass)(reader, part, width, owners) for part in parts]
    row_bytes = ROW_BYTES if rule is None else STRETCH_ROW_BYTES
    # Each side of an exchange counts and check-sums what it sends, where it made it;
    # the receiver checks (the small tallies travel whole, as the offsets do).
    sent = [delayed(_first_tallies)(first, reader.seed, row_bytes) for first in firsts]
    answers = [
        delayed(_owner_answers)(
            reader,
            b,
            [delayed(_bucket)(first, b) for first in firsts],
            library[b],
            sent,
            row_bytes,
        )
        for b in range(owners)
    ]
    answered = [delayed(tallies)(answer, ANSWER_BYTES, reader.seed) for answer in answers]
    decided = [
        delayed(_second_pass)(
            reader,
            part,
            first,
            answers,
            answered,
            width,
            config.inverse,
            None if staging is None else os.path.join(staging, f"{part.number}"),
        )
        for part, first in zip(parts, firsts, strict=True)
    ]
    offsets = delayed(_offsets)(decided, [p.rank for p in parts])
    return [
        delayed(_write)(reader, part, written, str(outputs[part.rank]), offsets)
        for part, written in zip(parts, decided, strict=True)
    ]


def _bucket(first: tuple[PartState | StretchState, list[bytes]], owner: int) -> bytes:
    """A first pass's rows for one owner."""
    return first[1][owner]


def _first_tallies(
    first: tuple[PartState | StretchState, list[bytes]], seed: int, row_bytes: int
) -> list[Tally]:
    """What a first pass sends each owner, counted where it was made."""
    return tallies(first[1], row_bytes, seed)


def _owner_answers(
    reader: Reader,
    owner: int,
    rows: list[bytes],
    library: bytes,
    sent: list[list[Tally]],
    row_bytes: int,
) -> list[bytes]:
    """An owner's answers, once every partition's rows arrived as they were sent."""
    for number, (got, tallied) in enumerate(zip(rows, sent, strict=True)):
        what = f"partition {number} to owner {owner}"
        check_arrived(got, tallied[owner], row_bytes, reader.seed, what)
    if row_bytes == STRETCH_ROW_BYTES:
        return stretch_owner_answers(rows, library)
    return owner_answers(reader.engine, rows, library)


def _second_pass(
    reader: Reader,
    part: Part,
    first: tuple[PartState | StretchState, list[bytes]],
    answers: list[list[bytes]],
    answered: list[list[Tally]],
    width: int,
    inverse: bool,
    staging: str | None,
) -> Written:
    """The partition's second pass, with its answers picked from every owner's (each
    checked against what its owner sent)."""
    mine = [answer[part.number] for answer in answers]
    for owner, (got, tallied) in enumerate(zip(mine, answered, strict=True)):
        what = f"owner {owner} to partition {part.number}"
        check_arrived(got, tallied[part.number], ANSWER_BYTES, reader.seed, what)
    state = first[0]
    if isinstance(state, StretchState):
        decided = state.decide(mine, part.rank, width)
    else:
        decided = decide(state, mine, part.rank, width)
    return second_pass(reader, part, state.frame, decided, inverse, staging)


def _write(
    reader: Reader, part: Part, written: Written, path: str, offsets: list[int]
) -> tuple[int, int]:
    """Write the partition's output at its offset; its records and skipped records."""
    write_part(reader, part, written, path, offsets[part.number])
    return written.records, written.skipped


def owner_count(size: int, parts: int) -> int:
    """How many owners share the fingerprints: one per OWNER_BYTES of input, at least
    one, at most MAX_OWNERS and the number of partitions."""
    return max(1, min(MAX_OWNERS, parts, -(-size // OWNER_BYTES)))


def _job_config(config: Config | None, options: dict[str, object]) -> Config:
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
    from seqdedup.engine.choice import chosen_engine

    return Reader(
        config.delimiter,
        config.skip_chars,
        config.byte_mode,
        config.filters,
        chosen_engine().name,
        job_seed(),
        config.key_steps,
        config.json_key,
        config.json_ignore,
        config.skip_fields,
    )


# What a compressed input's name ends with, by its format: its output is plain text,
# named without it (b.log.gz -> b.log), never plain text under a compressed name.
_SUFFIXES = {"gzip": (".gz",), "bzip2": (".bz2",), "xz": (".xz",), "zstd": (".zst", ".zstd")}


def _input_names(files: list[str], decompress: bool = True) -> list[str]:
    """Each input's output name (its base name, without the suffix of a compression it
    is read through), the inputs checked: readable files, with distinct names."""
    from seqdedup.base.records import HEAD_BYTES, compression_of

    names = []
    for path in files:
        if not os.path.isfile(path):
            raise SeqdedupError(f"cannot read input '{path}': not a readable file")
        if not os.access(path, os.R_OK):
            raise SeqdedupError(f"cannot read input '{path}': permission denied")
        name = os.path.basename(path)
        if decompress:
            with open(path, "rb") as file:
                kind = compression_of(file.read(HEAD_BYTES))
            for suffix in _SUFFIXES.get(kind or "", ()):
                if name.endswith(suffix) and len(name) > len(suffix):
                    name = name[: -len(suffix)]
                    break
        names.append(name)
    if len(set(names)) != len(names):
        raise SeqdedupError(
            "input files must have distinct names (outputs use the same names, without "
            "the suffix of a compression: a.log and a.log.gz are one name)"
        )
    return names


def _offsets(decided: list[Written], ranks: list[int]) -> list[int]:
    """Where each partition's output starts in its file's output."""
    offsets, at = [], dict[int, int]()
    for written, rank in zip(decided, ranks, strict=True):
        offsets.append(at.get(rank, 0))
        at[rank] = offsets[-1] + written.size
    return offsets


def _assemble_outputs(
    stats: JobStats,
    parts: list[Any],
    results: Any,
    names: list[str],
    out_dir: Path,
    outputs: list[Path],
) -> None:
    """Count each part into its file's statistics and move each file's output into
    place."""
    for part, (records, skipped) in zip(parts, results, strict=True):
        file_stats = stats.files[part.rank]
        file_stats.total += records
        file_stats.emitted += records - skipped
        file_stats.skipped += skipped
    for output, name in zip(outputs, names, strict=True):
        os.replace(output, out_dir / name)
    shutil.rmtree(outputs[0].parent)


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
