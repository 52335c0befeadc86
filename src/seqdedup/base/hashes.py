"""128-bit key hashes and fingerprints: the Python engine's keyed hash, and the three
forms a 128-bit value travels in between the engines, converted at the edges.

A record's key hash and a window's fingerprint are 128 bits: two 64-bit lanes. Both
engines move them in one of three forms, which every consumer accepts:

* a list of Python ints, each taken modulo 2**128 (lo | hi << 64);
* a buffer of native 64-bit words, two per value, lo first (the kernel's ``bytes``,
  ``array("Q")``);
* a numpy array of shape (n, 2), lo and hi (the Python engine's large batches).
"""

from __future__ import annotations

import os
from array import array
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from hashlib import blake2b

    import numpy as np
    import numpy.typing as npt

    # The three forms of a batch of 128-bit values (key hashes, window fingerprints):
    Words: TypeAlias = bytes | array[int] | memoryview  # native 64-bit lanes, lo first
    Lanes: TypeAlias = npt.NDArray[np.uint64]  # shape (n, 2): lo, hi (numpy)
    Hashes: TypeAlias = Words | list[int] | Lanes  # (a list: ints lo | hi << 64)
    # Where windows start (record indices): a list, an array("q") or int64s
    Starts: TypeAlias = list[int] | array[int] | npt.NDArray[np.int64]
    Int64s: TypeAlias = npt.NDArray[np.int64]  # numpy int64s (positions, lanes as int64)
    Flags: TypeAlias = npt.NDArray[np.bool_]  # numpy flags, one per record

# Record keys are hashed with this per-process random seed: the 128-bit key of the key
# hash, a pseudo-random function (SipHash-2-4-128 in the kernel, keyed BLAKE2b in Python),
# and the source of the window fingerprints' bases. No input can be crafted to collide
# without it (docs/engine.md, "Identity of windows").
SEED = int.from_bytes(os.urandom(16), "little")

MASK64 = (1 << 64) - 1
MASK128 = (1 << 128) - 1
# The Python engine's key hash: BLAKE2b keyed with a 128-bit seed (the run's, or one
# derived from it, as the kernel keys SipHash), 16 bytes (a pseudo-random function of the
# key for whoever does not know the seed). Made on first use: the kernel's runs never
# import hashlib.
_keyed: dict[int, blake2b] = {}


def _keyed_state(seed: int) -> blake2b:
    state = _keyed.get(seed)
    if state is None:
        from hashlib import blake2b

        state = _keyed[seed] = blake2b(digest_size=16, key=(seed & MASK128).to_bytes(16, "little"))
    return state


def python_hash_bytes(keys: list[bytes], seed: int = SEED) -> bytes:
    """The Python engine's 128-bit key hashes, 16 bytes each (lo lane first), keyed with
    ``seed``: hashes under two seeds are two functions, as the kernel's are (a kind's
    hash and an event's of the same text are never taken for each other)."""
    copy = _keyed_state(seed).copy
    out = []
    for key in keys:
        state = copy()
        state.update(key)
        out.append(state.digest())
    return b"".join(out)


def python_hash128(key: bytes) -> int:
    """The same hash of one key, as an int (lo | hi << 64)."""
    return int.from_bytes(python_hash_bytes([key]), "little")


def hash_ints(values: Hashes) -> list[int]:
    """128-bit values in any form, as a list of ints from 0 to 2**128 - 1."""
    if isinstance(values, list):
        return [value & MASK128 for value in values]
    words = hash_words(values)
    return [lo | hi << 64 for lo, hi in zip(words[0::2], words[1::2], strict=True)]


def hash_words(values: Hashes) -> array[int]:
    """128-bit values in any form, as an ``array("Q")`` of lanes (two per value)."""
    words = array("Q")
    if isinstance(values, list):
        for value in values:
            words.append(value & MASK64)
            words.append(value >> 64 & MASK64)
        return words
    raw = values if isinstance(values, bytes) else values.tobytes()
    if len(raw) % 16:
        raise ValueError("128-bit values: the buffer is not a whole number of 16-byte values")
    words.frombytes(raw)
    return words


def hash_bytes(values: Hashes) -> bytes:
    """128-bit values in any form, as 16 bytes each (the kernel's own bytes as they
    are, without a copy)."""
    return values if isinstance(values, bytes) else hash_words(values).tobytes()


def hash_lanes(values: Hashes) -> Lanes:
    """128-bit values in any form, as a numpy uint64 array of shape (n, 2)."""
    import numpy as np

    if isinstance(values, np.ndarray) and values.ndim == 2:
        return values.astype(np.uint64, copy=False)
    if isinstance(values, list):
        masked = [value & MASK128 for value in values]
        lanes = np.empty((len(masked), 2), dtype=np.uint64)
        lanes[:, 0] = np.fromiter((v & MASK64 for v in masked), np.uint64, len(masked))
        lanes[:, 1] = np.fromiter((v >> 64 for v in masked), np.uint64, len(masked))
        return lanes
    return np.frombuffer(hash_words(values), dtype=np.uint64).reshape(-1, 2)
