"""What a reduction removed, content-addressed (``--keep-removed FILE``): one SQLite
file, each removed stretch of the input compressed under the BLAKE2b-128 digest of its
exact bytes, and for each reduced text (known by its own digest) where each of its
markers stands and what it stands for. :func:`restore` reads it back.

A reference is ``sd:`` and the first 8 hex digits of the digest (more where another
digest in the store starts the same, as git lengthens an ambiguous prefix). Nothing
expires; a file is written in one transaction per reduction, so it never holds half
of one.
"""

from __future__ import annotations

import hashlib
import mmap
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from seqdedup.base.errors import SeqdedupError
from seqdedup.engine.choice import chosen_engine

PREFIX = "sd:"
SHORT = 7  # hex digits of a reference, at least (as git abbreviates)

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
# Where each marker stands by byte (its first byte, the byte past its delimiter): found
# there on expanding, whatever the delimiter (a store written before: by its line)
BYTE_COLUMNS = ("start", "stop")


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
        import sqlite3  # (here: a reduction without --keep-removed needs none of it)

        self.path = path
        if not create and not path.exists():
            raise SeqdedupError(f"no store at '{path}'")
        try:
            self._db = sqlite3.connect(path, isolation_level=None)
            self._db.executescript(SCHEMA)
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(markers)")}
            for column in BYTE_COLUMNS:
                if column not in columns:
                    self._db.execute(f"ALTER TABLE markers ADD COLUMN {column} INTEGER")
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
        pieces: Mapping[str, bytes],
        reduced: bytes,
        delimiter: bytes,
        original: str,
        markers: list[tuple[int, str | None]],
        marker_bytes: Iterable[tuple[int, int, str | None]] = (),
    ) -> None:
        """One reduction: the removed pieces by digest, the reduced text's digest and
        where its markers stand (by line, and by byte when ``marker_bytes`` gives them),
        in one transaction. A reduced text the store knows already keeps what it
        stands for: reducing a reduced text that comes out unchanged never makes the
        first reduction expand to itself."""
        import zlib

        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
            db.executemany(
                "INSERT OR IGNORE INTO removed (digest, data, size) VALUES (?, ?, ?)",
                ((d, zlib.compress(data, 6), len(data)) for d, data in pieces.items()),
            )
            key = digest_of(reduced)
            added = db.execute(
                "INSERT OR IGNORE INTO reductions (digest, delimiter, original) VALUES (?, ?, ?)",
                (key, delimiter, original),
            ).rowcount
            if added:
                by_byte = list(marker_bytes)
                places = by_byte if by_byte else [(None, None, None)] * len(markers)
                db.executemany(
                    "INSERT INTO markers (reduction, position, digest, start, stop)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (
                        (key, position, digest, start, stop)
                        for (position, digest), (start, stop, _) in zip(
                            markers, places, strict=True
                        )
                    ),
                )
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    def data(self, digest: str) -> bytes:
        """The exact bytes stored under a full digest: decompressed no further than the
        size stored with them, and checked against the digest (a changed or crafted
        stretch is an error, never wrong bytes)."""
        row = self._db.execute(
            "SELECT data, size FROM removed WHERE digest = ?", (digest,)
        ).fetchone()
        if row is None:
            raise SeqdedupError(f"{PREFIX}{digest[:SHORT]} is not in the store '{self.path}'")
        import zlib

        blob, size = row
        inflate = zlib.decompressobj()
        try:
            data = inflate.decompress(blob, max(int(size), 0) + 1)
        except zlib.error:
            data = b""
        if len(data) != size or not inflate.eof or digest_of(data) != digest:
            raise SeqdedupError(
                f"{PREFIX}{digest[:SHORT]} in the store '{self.path}' is damaged (its bytes "
                "do not match their digest): nothing restored"
            )
        return data

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

    def marker_bytes(self, reduced: bytes) -> list[tuple[int, int, str | None]] | None:
        """Where each marker of a reduced text stands by byte, in order (None: the store
        has them by line only, or does not know the text)."""
        rows = self._db.execute(
            "SELECT start, stop, digest FROM markers WHERE reduction = ? ORDER BY start",
            (digest_of(reduced),),
        ).fetchall()
        if not rows or any(start is None for start, _, _ in rows):
            return None
        return [(int(start), int(stop), digest) for start, stop, digest in rows]

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


# -- what only --budget writes ---------------------------------------------------------
# A reduced text that differs from its input starts with a line only --budget writes:
# the first 12 hex digits of the BLAKE2b digest of everything after it. An input record
# that begins as a marker or a note would ("[sd:", "[seqdedup") is escaped on the way in
# (ESCAPE before it, taken off on the way out), so below that first line every unescaped
# "[sd:" line is a marker and every "[seqdedup" line a note, and an input line can never
# be read as either. A text without that first line is shown as it is (it can only be an
# input that fit unchanged); one whose first line does not match the rest is refused.

ESCAPE = b"[sd:esc] "
OWN_STARTS = (b"[sd:", b"[seqdedup")  # how markers, notes and the first line begin
CHECK_DIGITS = 12
_VOUCH = re.compile(rb"\[seqdedup: reduced text ([0-9a-f]{12})\]")


def vouching_line(body: bytes) -> bytes:
    """The first line of a reduced text whose lines after it are ``body``."""
    check = digest_of(body)[:CHECK_DIGITS]
    return f"[seqdedup: reduced text {check}]".encode()


def vouched_body(reduced: bytes, delimiter: bytes) -> bytes | None:
    """What follows the first line of a reduced text that starts with the line only
    --budget writes (None: it does not start so); an error when that line does not match
    what follows it (the text was changed, cut or joined to another)."""
    line, found, body = reduced.partition(delimiter)
    match = _VOUCH.fullmatch(line)
    if match is None or not found:
        return None
    if digest_of(body)[:CHECK_DIGITS] != match.group(1).decode():
        raise SeqdedupError(
            "the reduced text does not match its first line (changed, cut or joined to "
            "another after the reduction): nothing restored"
        )
    return body


def escaped(data: bytes | mmap.mmap, delimiter: bytes) -> bytes | mmap.mmap:
    """``data`` with ESCAPE before every record that begins as a marker or a note would
    (the same object when none does: the common case costs a search)."""
    if all(data.find(start) < 0 for start in OWN_STARTS):
        return data
    records = bytes(data).split(delimiter)
    return delimiter.join(ESCAPE + r if r.startswith(OWN_STARTS) else r for r in records)


def unescaped(data: bytes, delimiter: bytes) -> bytes:
    """``data`` with ESCAPE taken off every record that begins with it (once)."""
    if data.find(ESCAPE) < 0:
        return data
    records = data.split(delimiter)
    return delimiter.join(r.removeprefix(ESCAPE) for r in records)


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
    nothing is joined). Each piece starts where a record does, so escaped records are
    unescaped piece by piece."""
    known = store.reduction(reduced)
    if known is None:
        raise SeqdedupError(
            f"the reduced text is not one the store '{store.path}' knows (changed after "
            "the reduction, or reduced with another --keep-removed file)"
        )
    delimiter, markers = known
    placed = store.marker_bytes(reduced)
    if placed is None:  # (a store written before markers were kept by byte)
        bounds = chosen_engine().record_bounds(reduced, delimiter)
        placed = [
            (bounds[2 * line], bounds[2 * line + 1] + len(delimiter), markers[line])
            for line in sorted(markers)
            if 2 * line < len(bounds)
        ]
    # every stretch read and checked before the first byte is handed out: a damaged
    # store writes nothing
    stretches = {digest: store.data(digest) for _, _, digest in placed if digest is not None}
    taken = 0
    for start, stop, digest in placed:
        if taken < start:  # (the unmarked lines before it, as one piece)
            yield unescaped(reduced[taken:start], delimiter)
        if digest is not None:  # (None: a note or the first line, dropped)
            yield unescaped(stretches[digest], delimiter)
        taken = min(stop, len(reduced))
    if taken < len(reduced):
        yield unescaped(reduced[taken:], delimiter)


def line_range(original: bytes, delimiter: bytes, first: int, last: int) -> bytes:
    """Lines ``first`` .. ``last`` (1-based, inclusive) of the original, each with its
    delimiter as it stands there."""
    bounds = chosen_engine().record_bounds(original, delimiter)
    count = len(bounds) // 2
    if first > last or first > count:
        return b""
    start, end = bounds[2 * (first - 1)], bounds[2 * (min(last, count) - 1) + 1]
    return original[start : min(end + len(delimiter), len(original))]
