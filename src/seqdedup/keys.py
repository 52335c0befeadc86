"""Records -> keys -> 64-bit key hashes.

A key is what a record is compared by: the record after ``skip_chars`` leading
characters (bytes in byte mode) are dropped, then, with a hash transform, the
command's output for it. Keys are always bytes, so equal text gives equal keys whatever
path produced them; records themselves are never altered.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

Transform = Callable[[list[bytes]], list[bytes]]


class KeyMaker:
    """Compute the key hash of each record of a batch."""

    def __init__(
        self, skip_chars: int = 0, byte_mode: bool = False, transform: Transform | None = None
    ) -> None:
        self.skip_chars = skip_chars
        self.byte_mode = byte_mode
        self.transform = transform

    def keys(self, records: Sequence[bytes]) -> list[bytes]:
        """The comparison key of each record, in order."""
        keys: list[bytes] = list(records)
        if self.skip_chars:
            keys = self._skip(keys)
        if self.transform is not None:
            keys = self.transform(keys)
        return keys

    def hashes(self, records: Sequence[bytes]) -> list[int]:
        """Python's 64-bit SipHash of each key (randomised per process, cached by bytes)."""
        if not self.skip_chars and self.transform is None:
            return list(map(hash, records))
        return list(map(hash, self.keys(records)))

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
