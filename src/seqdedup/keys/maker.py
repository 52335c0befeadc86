"""Records -> keys -> 128-bit key hashes.

A key is what a record is compared by, made in this order: ``skip_chars`` leading
characters (bytes in byte mode) are dropped; with ``--json-key``/``--json-ignore`` a
JSON object becomes the canonical text of the fields compared (:mod:`seqdedup.config.jsonkeys`);
``--normalize`` and ``--mask`` passes replace what differs between copies
(:mod:`seqdedup.config.normalize`), in command-line order; then, with a hash transform, the
command's output for it. Keys are always bytes, so equal text gives equal keys whatever
path produced them; records themselves are never altered.
"""

from __future__ import annotations

import _thread
import contextlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from seqdedup.base.engine import SEED
from seqdedup.base.errors import SeqdedupError
from seqdedup.base.hashes import MASK64, python_hash_bytes
from seqdedup.config.groups import DEFAULT_TRANSFORM_TIMEOUT

if TYPE_CHECKING:
    import subprocess
    from array import array
    from mmap import mmap

    from seqdedup.base.cengine import CEngine
    from seqdedup.base.records import Int64s
    from seqdedup.config.groups import KeyOptions
    from seqdedup.config.jsonkeys import JsonSelector
    from seqdedup.config.normalize import KeySteps

Transform = Callable[[list[bytes]], list[bytes]]
LARGE_BATCH = 2048  # from this many records on, hashes come as a numpy array


class KeyMaker:
    """Compute the key hash of each record of a batch."""

    def __init__(
        self,
        skip_chars: int = 0,
        byte_mode: bool = False,
        transform: Transform | None = None,
        kernel: CEngine | None = None,
        seed: int = 0,
        steps: KeySteps | None = None,
        json: JsonSelector | None = None,
        skip_fields: int = 0,
    ) -> None:
        self.skip_chars = skip_chars
        self.skip_fields = skip_fields
        self.byte_mode = byte_mode
        self.transform = transform
        self.kernel = kernel  # the compiled kernel hashes keys when given
        self.seed = seed
        self.steps = steps if steps else None
        self.json = json
        # One normalisation pass and nothing else done in Python: the kernel normalises
        # while it hashes (and on its chunk path).
        self.kernel_normalize = (
            steps.only_normalize if steps and json is None and transform is None else 0
        )
        self.plain = transform is None and json is None and self.steps is None
        self._hashing = key_hasher(self, kernel)

    def shown_record(self, record: bytes) -> bytes:
        """What ``--top`` shows of a record: with JSON keys, the key compared (the
        fields kept, canonical); otherwise the record itself."""
        return self.keys([record])[0] if self.json is not None else record

    def keys(self, records: Sequence[bytes]) -> list[bytes]:
        """The comparison key of each record, in order."""
        keys: list[bytes] = list(records)
        if self.skip_fields:
            keys = skip_fields(keys, self.skip_fields)
        if self.skip_chars:
            keys = self._skip(keys)
        if self.json is not None:
            keys = self.json(keys)
        if self.steps is not None:
            keys = self.steps.apply(keys)
        if self.transform is not None:
            keys = self.transform(keys)
        return keys

    def hashes(self, records: Sequence[bytes]) -> bytes:
        """A 128-bit hash of each key (two 64-bit lanes, see :mod:`seqdedup.base.hashes`),
        16 bytes per record, lo lane first: the form every stage takes.

        With the kernel: SipHash-2-4-128 keyed with the run's 128-bit seed (the kernel
        skips characters itself). Without: BLAKE2b keyed with the same seed
        (:func:`seqdedup.base.hashes.python_hash_bytes`).
        """
        return self._hashing.hashes(records)

    def hashes_and_sizes(self, records: Sequence[bytes], unit: str) -> tuple[bytes, array[int]]:
        """:meth:`hashes`, and each key's size for a minimum size: its bytes (``unit``
        "bytes") or estimated tokens ("tokens"); the decider adds one for the delimiter.
        Each key is made once (a hash transform runs once per record)."""
        if unit == "bytes":  # (the kernel hashes the keys and counts their bytes)
            found = self._hashing.hashes_and_lengths(records)
            if found is not None:
                return found
        keys = list(records) if self.plain and not self.skip_chars else self.keys(records)
        return self._hashing.key_hashes(keys), self._sizes(keys, unit)

    def key_sizes(self, records: Sequence[bytes], unit: str) -> array[int]:
        """Only the sizes of :meth:`hashes_and_sizes` (a loaded library's records)."""
        return self._sizes(
            records if self.plain and not self.skip_chars else self.keys(records), unit
        )

    def _sizes(self, keys: Sequence[bytes], unit: str) -> array[int]:
        if unit != "tokens":
            return key_sizes(keys, unit)
        return key_sizes(keys, unit, self._hashing.record_tokens)

    @property
    def hashes_encoded(self) -> bool:
        """Whether :meth:`hash_encoded` hashes library rows in the kernel (which checks
        each row's lengths as it reads it)."""
        return self._hashing.encoded

    def hash_encoded_rows(self, rows: list[bytes], separator: bytes) -> bytes:
        """:meth:`hash_encoded` of many rows in one call of the kernel, each row's key
        hashes followed by ``separator`` (only where :attr:`hashes_encoded`)."""
        return self._hashing.encoded_rows(rows, separator)

    def hash_encoded(self, encoded: bytes) -> bytes | None:
        """The key hashes of a library row's records (``library.encode_records``), as
        16-byte values, when the kernel can take them straight from the row; else None
        (decode the records and call :meth:`hashes`)."""
        return self._hashing.encoded_row(encoded) if self._hashing.encoded else None

    def span_hashes(self, data: bytes | mmap, delimiter: bytes) -> bytes | None:
        """The key hashes of the records of ``data`` (split at ``delimiter``; a final
        delimiter ends the last record) where the kernel splits and hashes them itself,
        no Python object per record; else None (split them and call :meth:`hashes`)."""
        return self._hashing.span(data, delimiter)

    def bounds_hashes(
        self, data: bytes | mmap, bounds: Int64s, passed: bytes | bytearray | None = None
    ) -> bytearray | None:
        """:meth:`span_hashes` of records already split (record k is
        ``data[bounds[2k]:bounds[2k+1]]``), writable; ``passed`` (a byte a record): those
        whose byte is not 0 are not hashed (16 zero bytes stand for each: the caller
        writes them)."""
        return self._hashing.bounds(data, bounds, passed)

    def _skip(self, records: list[bytes]) -> list[bytes]:
        n = self.skip_chars
        if self.byte_mode:
            return [record[n:] for record in records]
        # Characters, not bytes: ASCII records (the common case) can be sliced as bytes;
        # others are decoded, with surrogateescape so invalid UTF-8 never fails.
        return [
            record[n:]
            if record.isascii()
            else record.decode("utf-8", "surrogateescape")[n:].encode("utf-8", "surrogateescape")
            for record in records
        ]


class _PythonHashing:
    """Keys hashed in Python: BLAKE2b keyed with the run's seed."""

    encoded = False  # (library rows are decoded, then hashed)

    def __init__(self, maker: KeyMaker) -> None:
        from seqdedup.base.tokens import python_record_tokens  # (a --min-tokens run's)

        self._maker = maker
        self.record_tokens: RecordTokens = python_record_tokens

    def hashes(self, records: Sequence[bytes]) -> bytes:
        maker = self._maker
        skipping = maker.skip_chars or maker.skip_fields
        keys = records if not skipping and maker.plain else maker.keys(records)
        return python_hash_bytes(list(keys), maker.seed)

    def key_hashes(self, keys: list[bytes]) -> bytes:
        return python_hash_bytes(keys, self._maker.seed)

    def hashes_and_lengths(self, records: Sequence[bytes]) -> tuple[bytes, array[int]] | None:
        return None  # (the keys are made in Python, then hashed and measured)

    def encoded_rows(self, rows: list[bytes], separator: bytes) -> bytes:
        raise AssertionError("only where the kernel hashes encoded rows")

    def encoded_row(self, encoded: bytes) -> bytes:
        raise AssertionError("only where the kernel hashes encoded rows")

    def span(self, data: bytes | mmap, delimiter: bytes) -> bytes | None:
        return None  # (the records are split in Python)

    def bounds(
        self, data: bytes | mmap, bounds: Int64s, passed: bytes | bytearray | None
    ) -> bytearray | None:
        return None  # (the records are hashed in Python)


class _KernelHashing:
    """Keys hashed by the kernel (SipHash-2-4-128), which skips characters and fields
    and normalises itself where it can."""

    def __init__(self, maker: KeyMaker, kernel: CEngine) -> None:
        self._maker = maker
        self._kernel = kernel
        token_counts = kernel.token_counts

        def record_tokens(data: bytes, bounds: Int64s) -> array[int]:
            from array import array

            return array("q", token_counts(data, bounds))

        self.record_tokens: RecordTokens = record_tokens
        self.encoded = bool(maker.plain or maker.kernel_normalize)
        # how the kernel makes a key, as its hashers take it
        self._settings = (
            maker.seed,
            maker.skip_chars,
            maker.byte_mode,
            maker.kernel_normalize,
            maker.skip_fields,
        )

    def hashes(self, records: Sequence[bytes]) -> bytes:
        maker = self._maker
        hashes: bytes
        if self.encoded:
            hashes = self._kernel.hash_records(records, *self._settings)
        else:
            hashes = self._kernel.hash_records(maker.keys(records), maker.seed)
        return hashes

    def key_hashes(self, keys: list[bytes]) -> bytes:
        """The hashes of keys already made."""
        hashes: bytes = self._kernel.hash_records(keys, self._maker.seed)
        return hashes

    def hashes_and_lengths(self, records: Sequence[bytes]) -> tuple[bytes, array[int]] | None:
        """Each record's key hash and its key's length in bytes, the keys never made
        (None where the kernel does not make them itself)."""
        if not self.encoded:
            return None
        from array import array

        hashes, lengths = self._kernel.hash_records(records, *self._settings, sizes=True)
        return hashes, array("q", lengths)

    def encoded_rows(self, rows: list[bytes], separator: bytes) -> bytes:
        result: bytes = self._kernel.hash_encoded_rows(rows, separator, *self._settings)
        return result

    def encoded_row(self, encoded: bytes) -> bytes:
        result: bytes = self._kernel.hash_encoded(encoded, *self._settings)
        return result

    def span(self, data: bytes | mmap, delimiter: bytes) -> bytes | None:
        if not self.encoded:
            return None
        found: tuple[bytes, bytes] = self._kernel.split_hash(data, delimiter, *self._settings)
        return found[1]

    def bounds(
        self, data: bytes | mmap, bounds: Int64s, passed: bytes | bytearray | None
    ) -> bytearray | None:
        if not self.encoded:
            return None
        found: bytearray = self._kernel.bounds_hash(data, bounds, *self._settings, passed=passed)
        return found


# (data, bounds) -> each record's estimated tokens: the engine's record_tokens
RecordTokens = Callable[[bytes, "Int64s"], "array[int]"]


def key_sizes(
    keys: Sequence[bytes], unit: str, count_tokens: RecordTokens | None = None
) -> array[int]:
    """Each key's size for a minimum size: its bytes, or ("tokens") its estimated tokens,
    counted by ``count_tokens`` (the engine's ``record_tokens``)."""
    from array import array

    if unit != "tokens":
        return array("q", map(len, keys))
    from itertools import accumulate

    from seqdedup.base.tokens import python_record_tokens

    ends = array("q", accumulate(map(len, keys)))
    bounds = array("q", bytes(16 * len(ends)))  # (key k: bounds[2k] .. bounds[2k + 1])
    bounds[1::2] = ends
    bounds[2::2] = ends[:-1]
    return (count_tokens or python_record_tokens)(b"".join(keys), bounds)


def key_hasher(maker: KeyMaker, kernel: CEngine | None) -> _PythonHashing | _KernelHashing:
    """The key-hash twin of ``maker``: the kernel's where ``kernel`` is given."""
    if kernel is None:
        return _PythonHashing(maker)
    return _KernelHashing(maker, kernel)


def skip_fields(records: list[bytes], count: int) -> list[bytes]:
    """Each record without its first ``count`` fields, as ``uniq -f`` skips them: a
    field is a run of blanks (space, tab) and then a run of other bytes; what follows
    (the blanks before the next field included) is the key."""
    import re

    fields = re.compile(rb"(?:[ \t]*[^ \t]*){%d}" % count)
    # (the pattern matches at the start of every record, if only the empty string)
    return [fields.sub(b"", record, count=1) for record in records]


TextDigest = Callable[[Sequence[bytes]], "array[int]"]


def text_digest(options: KeyOptions, kernel: CEngine | None) -> TextDigest | None:
    """With key options (:attr:`KeyOptions.keyed`): a 64-bit digest of each record's text
    with its timestamps masked, to tell apart copies that count as one sequence (a fold
    line's variants; a marker's run and its occurrence). None: copies are the same text.
    Keyed with the run's secret (the kernel's SipHash with the seed; Python's own
    ``hash``, keyed per process), so no input makes two texts share one on purpose; it
    decides only whether a line says the copies' texts differ (docs/engine.md). The
    kernel masks and hashes a batch in one call; Python uses the regular expressions."""
    if not options.keyed:
        return None
    from array import array

    from seqdedup.config.normalize import CLASSES, normalize_py

    bits = CLASSES["timestamp"]
    if kernel is not None:
        hash_records = kernel.hash_records

        def digests(records: Sequence[bytes]) -> array[int]:
            lanes = array("Q", hash_records(records, SEED, 0, False, bits, 0))
            return lanes[0::2]

        return digests
    return lambda records: array("Q", [hash(normalize_py(r, bits)) & MASK64 for r in records])


def kernel_makes_keys(options: KeyOptions) -> bool:
    """Whether the kernel makes a run's keys itself where it runs: no hash transform,
    no JSON keys, at most one normalising pass (what :func:`key_maker`'s maker answers
    with ``plain or kernel_normalize``), read from the configuration, so that a run is
    planned before its key maker is built."""
    if options.hash_transform or options.json_key or options.json_ignore:
        return False
    if options.stream_by_json is not None:  # (its name is left out of a JSON key)
        return False
    if not options.key_steps:
        return True
    from seqdedup.config.normalize import KeySteps

    steps = KeySteps(options.key_steps)
    return not steps or bool(steps.only_normalize)


def key_maker(
    options: KeyOptions, kernel: CEngine | None, seed: int, transform: Transform | None = None
) -> KeyMaker:
    """The KeyMaker of a run's key options (the hash ``transform`` made by the caller)."""
    steps = json = None
    if options.key_steps:
        from seqdedup.config.normalize import KeySteps

        steps = KeySteps(options.key_steps, kernel)
    ignore = options.json_ignore
    if options.stream_by_json is not None and not options.json_key:
        ignore = (*ignore, options.stream_by_json)  # the stream's name is not in the key
    if options.json_key or ignore:
        from seqdedup.config.jsonkeys import JsonSelector

        json = JsonSelector(options.json_key, ignore, kernel, options.explain)
    return KeyMaker(
        options.skip_chars,
        options.byte_mode,
        transform,
        kernel,
        seed,
        steps,
        json,
        options.skip_fields,
    )


VERIFY_RECORDS = 8  # records checked per-record against the batch run, at the start
OUTPUT_ALLOWANCE = 1 << 20  # a transform may print this much more than it was given ...
OUTPUT_PER_BYTE = 16  # ... plus this many bytes per byte of records (then: an error)
PIPE_CHUNK = 1 << 16
STDERR_KEPT = 1 << 14  # the last bytes of a failing command's stderr, for its message
SHUFFLE_CHECK = 64  # records of each batch run again in a shuffled order


class ShellTransform:
    """``--hash-transform CMD``: the key is CMD's output for the record.

    The meaning is per record (CMD run by the shell with the record on stdin, trailing
    newline of its output dropped), but a process per record costs about a millisecond.
    So CMD is run once per batch, records one per line, when that gives the same keys:
    on the first records of the run both ways are compared (same number of output
    lines, same keys), and a shuffled sample of every batch is run a second time, where
    each output line must follow its record. A command whose output depends on the
    order or on other lines (sort, tac, nl, uniq) fails one of these checks, even on
    input that happens to be sorted, and the rest of the run uses one process per
    record. Records containing a newline always go one by one. A failing command
    raises SeqdedupError with its stderr; so does one that runs longer than ``timeout``
    seconds or prints far more than it was given (``yes``), after its process group
    is ended.
    """

    def __init__(self, command: str, timeout: float | None = DEFAULT_TRANSFORM_TIMEOUT) -> None:
        self.command = command
        self.timeout = timeout  # per run of the command; None: no limit
        self.batch_mode: bool | None = None  # None until verified

    def __call__(self, keys: list[bytes]) -> list[bytes]:
        if not keys:
            return []
        if self.batch_mode is None:
            sample = [key for key in keys[:VERIFY_RECORDS] if b"\n" not in key]
            if sample:
                one_by_one = [self._run_one(key) for key in sample]
                self.batch_mode = self._run_batch(sample) == one_by_one
        if not self.batch_mode:
            return [self._run_one(key) for key in keys]
        lined = [i for i, key in enumerate(keys) if b"\n" not in key]
        out = list(keys)
        batch = self._run_batch([keys[i] for i in lined])
        if batch is not None and not self._follows_records(keys, lined, batch):
            self.batch_mode = False  # order-dependent after all: per record from now on
            return [self._run_one(key) for key in keys]
        if batch is None:  # this batch did not come back line for line
            batch = [self._run_one(keys[i]) for i in lined]
        for i, key in zip(lined, batch, strict=True):
            out[i] = key
        for i, key in enumerate(keys):
            if b"\n" in key:
                out[i] = self._run_one(key)
        return out

    def _follows_records(self, keys: list[bytes], lined: list[int], batch: list[bytes]) -> bool:
        """Whether the batch's output lines follow their records when a shuffled sample
        of the batch (up to SHUFFLE_CHECK records, a fixed shuffle so that runs are
        reproducible) is run again: an order-dependent command gives other lines."""
        if len(lined) < 2:
            return True
        import random

        rng = random.Random(len(lined))
        order = rng.sample(range(len(lined)), min(len(lined), SHUFFLE_CHECK))
        if order == sorted(order):
            order.reverse()
        shuffled = self._run_batch([keys[lined[k]] for k in order])
        return shuffled is not None and all(
            line == batch[k] for line, k in zip(shuffled, order, strict=True)
        )

    def _run(self, data: bytes) -> bytes:
        import subprocess

        # Started and registered under one lock, which the exit handler takes too: a
        # program leaving while another thread starts a command still ends it.
        with _STARTING:
            _watch_exit()
            try:
                # Its own process group (session): on a timeout, too much output,
                # Ctrl-C or SIGTERM the whole group ends, whatever the shell started.
                proc = subprocess.Popen(
                    self.command,
                    shell=True,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    start_new_session=True,
                )
            except OSError as exc:
                raise SeqdedupError(
                    f"--hash-transform: cannot run '{self.command}': {exc}"
                ) from None
            _LIVE_GROUPS.add(proc.pid)
        try:
            out, err = self._exchange(proc, data)
        finally:
            _end_group(proc)
        if proc.returncode != 0:
            detail = " ".join(err.decode("utf-8", "replace").split())
            how = (
                f"was killed by signal {-proc.returncode}"
                if proc.returncode < 0
                else f"failed with exit status {proc.returncode}"
            )
            raise SeqdedupError(
                f"--hash-transform command '{self.command}' {how}"
                + (f": {detail}" if detail else "")
            )
        return out

    def _exchange(self, proc: subprocess.Popen[bytes], data: bytes) -> tuple[bytes, bytes]:
        """Write ``data`` to the command and read its output, both at once (so neither
        pipe can fill up and stall the other), within the time and size limits."""
        import os
        import selectors
        import subprocess
        import time

        stdin, stdout, stderr = proc.stdin, proc.stdout, proc.stderr
        assert stdin is not None and stdout is not None and stderr is not None
        limit = OUTPUT_ALLOWANCE + OUTPUT_PER_BYTE * len(data)
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        out: list[bytes] = []
        out_size = 0
        err = bytearray()
        view = memoryview(data)
        with selectors.DefaultSelector() as selector:
            if data:
                os.set_blocking(stdin.fileno(), False)
                selector.register(stdin, selectors.EVENT_WRITE)
            else:
                stdin.close()
            selector.register(stdout, selectors.EVENT_READ)
            selector.register(stderr, selectors.EVENT_READ)
            while selector.get_map():
                wait = None if deadline is None else deadline - time.monotonic()
                if wait is not None and wait <= 0:
                    raise self._timed_out()
                for key, _ in selector.select(wait):
                    stream = key.fileobj
                    if stream is stdin:
                        try:
                            view = view[os.write(key.fd, view[:PIPE_CHUNK]) :]
                        except BrokenPipeError:  # it stopped reading: its output decides
                            view = view[:0]
                        if not view:
                            selector.unregister(stdin)
                            stdin.close()
                        continue
                    chunk = os.read(key.fd, PIPE_CHUNK)
                    if not chunk:
                        selector.unregister(stream)
                    elif stream is stdout:
                        out.append(chunk)
                        out_size += len(chunk)
                        if out_size > limit:
                            raise SeqdedupError(
                                f"--hash-transform command '{self.command}' printed more than "
                                f"{limit:,} bytes for {len(data):,} bytes of records; it must "
                                "print one line per record"
                            )
                    else:
                        err += chunk
                        del err[:-STDERR_KEPT]
        wait = None if deadline is None else max(deadline - time.monotonic(), 0.0)
        try:
            proc.wait(wait)
        except subprocess.TimeoutExpired:
            raise self._timed_out() from None
        return b"".join(out), bytes(err)

    def _timed_out(self) -> SeqdedupError:
        return SeqdedupError(
            f"--hash-transform command '{self.command}' took more than {self.timeout:g} s "
            "for one batch of records (see --transform-timeout)"
        )

    def _run_one(self, key: bytes) -> bytes:
        out = self._run(key + b"\n")
        return out[:-1] if out.endswith(b"\n") else out

    def _run_batch(self, keys: list[bytes]) -> list[bytes] | None:
        out = self._run(b"\n".join(keys) + b"\n")
        lines = out.split(b"\n")
        if lines[-1] == b"":
            lines.pop()
        return lines if len(lines) == len(keys) else None


# The commands' process groups not yet ended: whatever way the program leaves, none of
# them outlives it (an exit handler, in place before the first command starts, ends
# what is left)
_LIVE_GROUPS: set[int] = set()
# (the low-level lock: `threading` costs 2 ms of every run's start-up, and only a run
# with a hash transform starts a command)
_STARTING = _thread.allocate_lock()


def _watch_exit() -> None:
    if not _LIVE_GROUPS:
        import atexit

        atexit.unregister(_end_live_groups)  # (once, however often the set empties)
        atexit.register(_end_live_groups)


def _end_live_groups() -> None:
    import os
    import signal

    with _STARTING:
        for pgid in list(_LIVE_GROUPS):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
        _LIVE_GROUPS.clear()


def _end_group(proc: subprocess.Popen[bytes]) -> None:
    """End the command's process group (the shell and anything it started, even what
    a finished shell left running) and reap the shell."""
    import os
    import signal

    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    _LIVE_GROUPS.discard(proc.pid)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    proc.wait()


def shell_transform(options: KeyOptions) -> ShellTransform | None:
    """The run's ``--hash-transform`` command, when it has one."""
    if not options.hash_transform:
        return None
    return ShellTransform(options.hash_transform, options.transform_timeout)
