"""What a reduction removed, content-addressed (``--keep-removed FILE``): one SQLite
file, each removed stretch of the input compressed under the BLAKE2b-128 digest of its
exact bytes, and for each reduced text (known by its own digest) where each of its
markers stands and what it stands for. :func:`restore` reads it back.

A reference is ``sd:`` and the first 12 hex digits of the digest (more where another
digest in the store starts the same, as git lengthens an ambiguous prefix). Nothing
expires; a file is written in one transaction per reduction, so it never holds half
of one.
"""

from __future__ import annotations

import hashlib
import mmap
import sqlite3
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path

from seqdedup.errors import SeqdedupError
from seqdedup.records import record_bounds

PREFIX = "sd:"
SHORT = 12  # hex digits of a reference, at least

SCHEMA = """
CREATE TABLE IF NOT EXISTS removed (
    digest TEXT PRIMARY KEY,   -- blake2b-128 of the exact bytes, 32 hex digits
    data   BLOB NOT NULL,      -- the bytes, zlib-compressed
    size   INTEGER NOT NULL    -- their length uncompressed
);
CREATE TABLE IF NOT EXISTS reductions (
    digest    TEXT PRIMARY KEY, -- blake2b-128 of the reduced text
    delimiter BLOB NOT NULL,
    original  TEXT NOT NULL     -- blake2b-128 of the input it was made from
);
CREATE TABLE IF NOT EXISTS markers (
    reduction TEXT NOT NULL,    -- reductions.digest
    position  INTEGER NOT NULL, -- the marker's line in the reduced text (0-based)
    digest    TEXT,             -- what it stands for (NULL: a note, dropped on expanding)
    PRIMARY KEY (reduction, position)
);
"""


def digest_of(data: bytes | memoryview | mmap.mmap) -> str:
    """The BLAKE2b-128 digest of exact bytes, as 32 hex digits (no key, no seed: the
    same in every run)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def shortest_prefixes(digests: Iterable[str], others: Iterable[str] = ()) -> dict[str, str]:
    """Each digest's reference: the shortest prefix of at least SHORT digits that no
    other digest (of ``digests`` or ``others``) starts with."""
    ordered = sorted({*digests, *others})
    wanted = set(digests)
    out: dict[str, str] = {}
    for at, digest in enumerate(ordered):
        if digest not in wanted:
            continue
        shared = 0
        for near in (
            ordered[at - 1] if at else "",
            ordered[at + 1] if at + 1 < len(ordered) else "",
        ):
            pairs = enumerate(zip(digest, near, strict=False))
            common = next((k for k, (a, b) in pairs if a != b), len(near))
            shared = max(shared, common)
        out[digest] = PREFIX + digest[: max(SHORT, shared + 1)]
    return out


class RemovedStore:
    """A ``--keep-removed`` file (created when missing)."""

    def __init__(self, path: Path, create: bool = True) -> None:
        self.path = path
        if not create and not path.exists():
            raise SeqdedupError(f"no store at '{path}'")
        try:
            self._db = sqlite3.connect(path, isolation_level=None)
            self._db.executescript(SCHEMA)
        except sqlite3.Error as exc:
            raise SeqdedupError(f"'{path}' is not a seqdedup store: {exc}") from None

    def close(self) -> None:
        self._db.close()

    def neighbours(self, digests: Iterable[str]) -> list[str]:
        """The stored digests next to each of ``digests`` in sorted order (what a
        reference must be told apart from)."""
        found: list[str] = []
        for digest in digests:
            for sql in (
                "SELECT digest FROM removed WHERE digest < ? ORDER BY digest DESC LIMIT 1",
                "SELECT digest FROM removed WHERE digest > ? ORDER BY digest LIMIT 1",
            ):
                row = self._db.execute(sql, (digest,)).fetchone()
                if row is not None:
                    found.append(row[0])
        return found

    def save(
        self,
        pieces: dict[str, bytes],
        reduced: bytes,
        delimiter: bytes,
        original: str,
        markers: list[tuple[int, str | None]],
    ) -> None:
        """One reduction: the removed pieces by digest, the reduced text's digest and
        where its markers stand, in one transaction."""
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
            db.executemany(
                "INSERT OR IGNORE INTO removed (digest, data, size) VALUES (?, ?, ?)",
                ((d, zlib.compress(data, 6), len(data)) for d, data in pieces.items()),
            )
            key = digest_of(reduced)
            db.execute(
                "INSERT OR REPLACE INTO reductions (digest, delimiter, original) VALUES (?, ?, ?)",
                (key, delimiter, original),
            )
            db.execute("DELETE FROM markers WHERE reduction = ?", (key,))
            db.executemany(
                "INSERT INTO markers (reduction, position, digest) VALUES (?, ?, ?)",
                ((key, position, digest) for position, digest in markers),
            )
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    def data(self, digest: str) -> bytes:
        """The exact bytes stored under a full digest."""
        row = self._db.execute("SELECT data FROM removed WHERE digest = ?", (digest,)).fetchone()
        if row is None:
            raise SeqdedupError(f"{PREFIX}{digest[:SHORT]} is not in the store '{self.path}'")
        return zlib.decompress(row[0])

    def resolve(self, reference: str) -> str:
        """The full digest a reference (``sd:`` and at least 4 hex digits) names; an
        error when none or several do."""
        prefix = reference.removeprefix(PREFIX).lower()
        if len(prefix) < 4 or any(c not in "0123456789abcdef" for c in prefix):
            raise SeqdedupError(f"'{reference}' is no reference (sd: and hex digits)")
        rows = self._db.execute(
            "SELECT digest FROM removed WHERE digest >= ? AND digest < ? LIMIT 2",
            (prefix, prefix + "g"),
        ).fetchall()
        if not rows:
            raise SeqdedupError(f"{reference} is not in the store '{self.path}'")
        if len(rows) > 1:
            raise SeqdedupError(f"{reference} is ambiguous in the store '{self.path}'")
        digest: str = rows[0][0]
        return digest

    def reduction(self, reduced: bytes) -> tuple[bytes, dict[int, str | None]] | None:
        """The delimiter and markers of a reduced text this store knows, else None."""
        key = digest_of(reduced)
        row = self._db.execute(
            "SELECT delimiter FROM reductions WHERE digest = ?", (key,)
        ).fetchone()
        if row is None:
            return None
        markers = dict(
            self._db.execute("SELECT position, digest FROM markers WHERE reduction = ?", (key,))
        )
        return bytes(row[0]), markers

    def size(self) -> int:
        """The bytes the file takes."""
        pages = self._db.execute("PRAGMA page_count").fetchone()[0]
        return int(pages) * int(self._db.execute("PRAGMA page_size").fetchone()[0])

    def prune(self, limit: int) -> None:
        """Drop the oldest pieces (and the reductions that name them) until the file's
        contents fit in ``limit`` bytes (the MCP server's cap)."""
        db = self._db
        total = db.execute("SELECT COALESCE(SUM(LENGTH(data)), 0) FROM removed").fetchone()[0]
        if total <= limit:
            return
        db.execute("BEGIN IMMEDIATE")
        for rowid, digest, length in db.execute(
            "SELECT rowid, digest, LENGTH(data) FROM removed ORDER BY rowid"
        ).fetchall():
            if total <= limit:
                break
            db.execute("DELETE FROM removed WHERE rowid = ?", (rowid,))
            db.execute(
                "DELETE FROM reductions WHERE digest IN "
                "(SELECT reduction FROM markers WHERE digest = ?)",
                (digest,),
            )
            total -= length
        db.execute("COMMIT")
        db.execute("VACUUM")


# -- reduced text back to the original (seqdedup-expand) ----------------------------
# Each marker replaced by the exact bytes it stands for. The store knows each reduced
# text by its digest and where its markers stand, so a reduced text that was changed
# is refused, and a line of the input that merely looks like a marker is never taken
# for one.


def restore(reduced: bytes, store: RemovedStore) -> bytes:
    """The original input of a reduced text, byte for byte."""
    return b"".join(restored_pieces(reduced, store))


def restored_pieces(reduced: bytes, store: RemovedStore) -> Iterator[bytes]:
    """The original input of a reduced text in pieces, in order (written as they come,
    nothing is joined)."""
    known = store.reduction(reduced)
    if known is None:
        raise SeqdedupError(
            f"the reduced text is not one the store '{store.path}' knows (changed after "
            "the reduction, or reduced with another --keep-removed file)"
        )
    delimiter, markers = known
    bounds, taken = record_bounds(reduced, delimiter), 0
    for line in sorted(markers):
        if 2 * line >= len(bounds):
            break
        position, stop = bounds[2 * line], bounds[2 * line + 1] + len(delimiter)
        if taken < position:  # (the unmarked lines before it, as one piece)
            yield reduced[taken:position]
        digest = markers[line]
        if digest is not None:  # (None: the note of a budget not met)
            yield store.data(digest)
        taken = min(stop, len(reduced))
    if taken < len(reduced):
        yield reduced[taken:]


def line_range(original: bytes, delimiter: bytes, first: int, last: int) -> bytes:
    """Lines ``first`` .. ``last`` (1-based, inclusive) of the original, each with its
    delimiter as it stands there."""
    bounds = record_bounds(original, delimiter)
    count = len(bounds) // 2
    if first > last or first > count:
        return b""
    start, end = bounds[2 * (first - 1)], bounds[2 * (min(last, count) - 1) + 1]
    return original[start : min(end + len(delimiter), len(original))]
