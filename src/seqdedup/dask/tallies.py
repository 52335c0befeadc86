"""The Dask engine's exchanges verified: each leg's rows counted and digested (keyed) by
the sender, checked by the receiver."""

from __future__ import annotations

from hashlib import blake2b
from typing import TYPE_CHECKING

from seqdedup.base.errors import SeqdedupError

if TYPE_CHECKING:
    pass


# -- what crosses the network, verified ------------------------------------------------
ROW_BYTES = 24  # a first pass's row: fingerprint lanes and position (int64 triples)


ANSWER_BYTES = 16  # an owner's answer: row and earliest position (int64 pairs)


TALLY_SALT = 0x7461_6C6C_7920_6F66_2072_6F77_7320_7365  # (apart from every other keyed hash)


Tally = tuple[int, bytes]  # rows, and a keyed BLAKE2b-128 of their bytes


def tally(rows: bytes, width: int, seed: int) -> Tally:
    """What a task sends, counted by the sender and again by the receiver: the number
    of rows and a digest of their bytes keyed with the job's secret (rows travel as one
    bytes object, in order). A row lost, added or changed on the way changes it, with
    probability 1 - 2^-128 for a change no one chose knowing the secret."""
    key = (seed ^ TALLY_SALT).to_bytes(16, "little")
    return len(rows) // width, blake2b(rows, digest_size=16, key=key).digest()


def check_arrived(rows: bytes, sent: Tally, width: int, seed: int, what: str) -> None:
    """Refuse what did not arrive as it was sent: the job ends with one line rather
    than write an output short of what the rule keeps (or with more removed)."""
    got = tally(rows, width, seed)
    if len(rows) % width or got != sent:
        change = "changed" if got[0] == sent[0] else f"{sent[0]:,} sent, {got[0]:,} received"
        raise SeqdedupError(
            f"the Dask job's rows did not arrive as sent ({what}: {change}); nothing was written"
        )


def tallies(buckets: list[bytes], width: int, seed: int) -> list[Tally]:
    """The tally of each of a task's outgoing buckets (made where they were made)."""
    return [tally(bucket, width, seed) for bucket in buckets]
