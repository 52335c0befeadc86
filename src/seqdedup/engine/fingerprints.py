"""The Python engine's window fingerprints: a polynomial in each key-hash lane modulo the
prime 2^61-1, with bases drawn from the run's seed (the kernel's, in Python; with numpy
for large batches)."""

from __future__ import annotations

from collections.abc import Sequence
from operator import mul
from typing import TYPE_CHECKING

from seqdedup.base.hashes import MASK64, hash_ints, hash_lanes

if TYPE_CHECKING:
    from seqdedup.base.hashes import Hashes, Lanes


_MASK31 = (1 << 31) - 1
_MASK30 = (1 << 30) - 1
PRIME = (1 << 61) - 1  # the fingerprints' field: a polynomial of degree W-1 has < W roots


def _splitmix64(z: int) -> int:
    z = (z + 0x9E3779B97F4A7C15) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def coefficients(width: int, seed: int) -> list[int]:
    """The fingerprint coefficients of ``width`` records, ``width`` per lane (low lane
    first): the powers B**(width-1), ..., B, 1 modulo :data:`PRIME` of a base per lane
    drawn from that lane's 64 bits of the run's ``seed`` (from 2 to p - 2), as the
    kernel draws them, so that both roll from one window's fingerprint to the next."""
    out: list[int] = []
    for lane_seed in (seed & MASK64, seed >> 64 & MASK64):
        base = 2 + _splitmix64(lane_seed ^ 0x5851F42D4C957F2D) % (PRIME - 3)
        powers = [1] * width  # (one multiplication each: a wide window is built at once)
        for k in range(1, width):
            powers[k] = powers[k - 1] * base % PRIME
        out += reversed(powers)
    return out


def fingerprints_py(hashes: Hashes, count: int, coeffs: Sequence[int]) -> list[int]:
    """Fingerprints of the first ``count`` windows of key hashes in any 128-bit form, as
    128-bit ints (lo | hi << 64): the first in full, then each rolled from the one
    before, as the kernel does. A 1-record window's fingerprint is its key hash."""
    width = len(coeffs) // 2
    if count <= 0:
        return []
    values = hash_ints(hashes)[: count + width - 1]
    if width == 1:
        return values
    lows = [value & PRIME for value in values]  # each lane's low 61 bits, as the kernel
    highs = [value >> 64 & PRIME for value in values]
    low_factors, high_factors = coeffs[:width], coeffs[width:]
    low = sum(map(mul, lows[:width], low_factors)) % PRIME
    high = sum(map(mul, highs[:width], high_factors)) % PRIME
    top_low, top_high = low_factors[0], high_factors[0]
    base_low, base_high = low_factors[width - 2], high_factors[width - 2]
    out = [low | high << 64]
    for j in range(1, count):
        come = j + width - 1
        low = ((low - lows[j - 1] * top_low) * base_low + lows[come]) % PRIME
        high = ((high - highs[j - 1] * top_high) * base_high + highs[come]) % PRIME
        out.append(low | high << 64)
    return out


NUMPY_MAX_WIDTH = 64  # above this, W products per window cost more than rolling in Python


def _mulmod_np(a: Lanes, b: int) -> Lanes:
    """a * b mod PRIME for a uint64 array ``a`` and an int ``b``, all at most PRIME, in
    31-bit halves so that no product leaves 64 bits (2^61 = 1 and 2^62 = 2 mod p)."""
    import numpy as np

    a1, a0 = a >> np.uint64(31), a & np.uint64(_MASK31)
    b1, b0 = np.uint64(b >> 31), np.uint64(b & _MASK31)
    middle = a1 * b0 + a0 * b1  # below 2^62: middle * 2^31 = (middle >> 30) + (its rest) * 2^31
    total = (a1 * b1 << np.uint64(1)) + (middle >> np.uint64(30))
    total += (middle & np.uint64(_MASK30)) << np.uint64(31)
    total += a0 * b0  # below 2^64 in all
    return _reduce_np(total)


def _reduce_np(values: Lanes) -> Lanes:
    import numpy as np

    prime = np.uint64(PRIME)
    folded = (values & prime) + (values >> np.uint64(61))  # below 2^61 + 8
    return np.where(folded >= prime, folded - prime, folded)


def fingerprints_np(hashes: Hashes, count: int, coeffs: Sequence[int]) -> Lanes:
    """The fingerprints of :func:`fingerprints_py` for W from 2 to NUMPY_MAX_WIDTH,
    each the sum of its W products at once over all windows (numpy): an (n, 2) uint64
    array of lanes."""
    import numpy as np

    width = len(coeffs) // 2
    lanes = hash_lanes(hashes)[: count + width - 1] & np.uint64(PRIME)
    out = np.zeros((count, 2), dtype=np.uint64)
    prime = np.uint64(PRIME)
    for lane in (0, 1):
        acc = out[:, lane]
        for k in range(width):
            acc += _mulmod_np(lanes[k : k + count, lane], coeffs[lane * width + k])
            acc[...] = np.where(acc >= prime, acc - prime, acc)
    return out
