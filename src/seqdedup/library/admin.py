"""Looking after a library: what it holds (:func:`describe_library`), one sequence's
records by its id (:func:`show_sequence`, which expands a ``--fold`` line) and dropping
the material no run has seen for a while (:func:`prune_library`).

Every sequence row remembers the last run that saved or matched it (``last_run``;
rows from before that column existed fall back to the run that first saved them). A
run's time is when it finished. Plain sequence files are the user's own: they are
counted, never pruned.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypedDict

from seqdedup.base.errors import SeqdedupError
from seqdedup.library.store import (
    BUSY_TIMEOUT_S,
    DB_FILES,
    DB_NAME,
    add_last_run,
    check_encoded,
    decode_records,
    open_for_reading,
    plain_files,
)

# When each sequence was last seen: the finishing time of its last run.
_LAST_SEEN = (
    "SELECT s.digest AS id, s.kind, s.length, LENGTH(s.records) AS bytes, r.finished AS seen "
    "FROM sequences s LEFT JOIN runs r ON r.id = COALESCE({last}, s.run_id)"
)


class RunRow(TypedDict):
    """One of a library's runs."""

    run: int
    finished: str
    read: int
    written: int


class LibrarySequence(TypedDict):
    """One of a library's repeated sequences, with its records."""

    id: str  # its digest, in hex
    length: int
    count: int
    records: list[bytes]


class LibraryContents(TypedDict):
    """What a library's page shows of it (:func:`library_contents`)."""

    runs: list[RunRow]
    top: list[LibrarySequence]
    lengths: list[int]


def _last_seen(connection: sqlite3.Connection) -> str:
    columns = {row[1] for row in connection.execute("PRAGMA table_info(sequences)")}
    return _LAST_SEEN.format(last="s.last_run" if "last_run" in columns else "NULL")


def _check_directory(directory: Path) -> None:
    if not directory.is_dir():
        what = "does not exist" if not directory.exists() else "is not a directory"
        raise SeqdedupError(f"library '{directory}' {what}")


def describe_library(directory: Path) -> dict[str, Any]:
    """Size, contents, runs and the age of the oldest material of a library."""
    _check_directory(directory)
    database = directory / DB_NAME
    plain = list(plain_files(directory))
    info: dict[str, Any] = {
        "directory": str(directory),
        "disk_bytes": sum(
            path.stat().st_size for path in directory.iterdir() if path.name in DB_FILES
        ),
        "sequences": {"new": 0, "repeat": 0},
        "records": 0,
        "record_bytes": 0,
        "runs": 0,
        "first_run": None,
        "last_run": None,
        "oldest_last_seen": None,
        "plain_files": len(plain),
        "plain_bytes": sum(path.stat().st_size for path in plain),
    }
    if not database.exists():
        return info
    with _reading(database) as connection:
        if connection is None:
            return info
        query = (
            "SELECT kind, COUNT(*), SUM(length), SUM(bytes), MIN(seen) "
            f"FROM ({_last_seen(connection)}) GROUP BY kind"
        )
        oldest = []
        for kind, count, records, stored, seen in connection.execute(query):
            info["sequences"][kind] = count
            info["records"] += records or 0
            info["record_bytes"] += stored or 0
            if seen is not None:
                oldest.append(seen)
        info["oldest_last_seen"] = min(oldest, default=None)
        _check_lengths(connection, directory)
        runs, first, last = connection.execute(
            "SELECT COUNT(*), MIN(started), MAX(finished) FROM runs"
        ).fetchone()
        info.update(runs=runs, first_run=first, last_run=last)
    return info


def _check_lengths(connection: sqlite3.Connection, directory: Path) -> None:
    """Refuse a row whose record count its records cannot hold (4 bytes of count, 4 of
    length per record): a damaged library is said to be one, not summed as if whole."""
    bad = connection.execute(
        "SELECT hex(digest), length FROM sequences "
        "WHERE length < 0 OR 4 + 4 * length > length(records) LIMIT 1"
    ).fetchone()
    if bad is not None:
        raise SeqdedupError(
            f"library '{directory}' is damaged: sequence {bad[0].lower()} claims "
            f"{bad[1]:,} records, more than it holds"
        )


def show_sequence(directory: Path, prefix: str) -> dict[str, Any]:
    """The sequence whose id (the hex digest) starts with ``prefix``: its id, kind,
    length, sightings and records. One line naming the problem when no sequence or
    more than one has such an id."""
    _check_directory(directory)
    wanted = prefix.strip().lower()
    if len(wanted) < 4 or any(c not in "0123456789abcdef" for c in wanted):
        raise SeqdedupError(
            f"'{prefix}' is not a sequence id: give at least 4 of its hex digits "
            "(a --fold line shows 12)"
        )
    database = directory / DB_NAME
    found: list[tuple[Any, ...]] = []
    if database.exists():
        with _reading(database) as connection:
            if connection is not None:
                found = connection.execute(
                    "SELECT digest, kind, length, count, records FROM sequences "
                    "WHERE lower(hex(digest)) LIKE ? LIMIT 2",
                    (wanted + "%",),
                ).fetchall()
    if not found:
        raise SeqdedupError(f"library '{directory}' holds no sequence with id {wanted}")
    if len(found) > 1:
        raise SeqdedupError(f"id {wanted} is ambiguous in library '{directory}': give more digits")
    digest, kind, length, count, blob = found[0]
    try:
        check_encoded(blob)
    except ValueError as exc:
        raise SeqdedupError(f"library '{directory}': sequence {digest.hex()}: {exc}") from None
    return {
        "id": digest.hex(),
        "kind": kind,
        "length": length,
        "count": count,
        "records": decode_records(blob),
    }


@contextlib.contextmanager
def _reading(database: Path) -> Iterator[sqlite3.Connection | None]:
    connection = open_for_reading(database)
    try:
        yield connection
    except sqlite3.Error as exc:
        raise SeqdedupError(f"library database '{database}' cannot be read: {exc}") from None
    finally:
        if connection is not None:
            connection.close()


def prune_library(
    directory: Path, unseen_days: float, dry_run: bool = False, now: datetime | None = None
) -> dict[str, Any]:
    """Delete the sequences no run has saved or matched in the last ``unseen_days``
    days, in one transaction, then give the space back (VACUUM)."""
    _check_directory(directory)
    if not unseen_days >= 0:
        raise SeqdedupError("--unseen-days must be a number of days, 0 or more")
    database = directory / DB_NAME
    try:
        moment = (now or datetime.now(UTC)) - timedelta(days=unseen_days)
    except OverflowError:  # before the year 1 (inf, 1e12 days): nothing is that old
        moment = datetime.min.replace(tzinfo=UTC)
    cutoff = moment.isoformat(timespec="seconds")
    result: dict[str, Any] = {
        "directory": str(directory),
        "cutoff": cutoff,
        "sequences": 0,
        "records": 0,
        "dry_run": dry_run,
        "disk_bytes_before": 0,
        "disk_bytes_after": 0,
    }
    if not database.exists():
        return result
    result["disk_bytes_before"] = result["disk_bytes_after"] = database.stat().st_size
    try:
        connection = sqlite3.connect(database, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        try:
            tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
            if not {"sequences", "runs"} <= tables:
                raise SeqdedupError(
                    f"'{database}' is not a seqdedup library (it has no sequences and runs "
                    "tables): nothing pruned"
                )
            connection.execute("BEGIN IMMEDIATE")  # one writer at a time, like a save
            add_last_run(connection)
            stale = f"SELECT id, length FROM ({_last_seen(connection)}) WHERE seen < ?"
            rows = connection.execute(stale, (cutoff,)).fetchall()
            result["sequences"] = len(rows)
            result["records"] = sum(length for _, length in rows)
            if dry_run or not rows:
                connection.execute("ROLLBACK")
                return result
            connection.executemany(
                "DELETE FROM sequences WHERE digest = ?", ((i,) for i, _ in rows)
            )
            connection.execute("COMMIT")
            connection.execute("VACUUM")
        finally:
            connection.close()
    except sqlite3.Error as exc:
        raise SeqdedupError(f"library '{database}' cannot be pruned: {exc}") from None
    result["disk_bytes_after"] = database.stat().st_size
    return result


def library_contents(directory: Path, limit: int) -> LibraryContents:
    """What a report page shows of a library: its runs (records read and written by
    each), its ``limit`` repeated sequences that removed the most records (length times
    sightings) with their records, and the lengths of all its repeated sequences."""
    _check_directory(directory)
    database = directory / DB_NAME
    contents: LibraryContents = {"runs": [], "top": [], "lengths": []}
    if not database.exists():
        return contents
    with _reading(database) as connection:
        if connection is None:
            return contents
        _check_lengths(connection, directory)
        for run, finished, statistics in connection.execute(
            "SELECT id, finished, statistics FROM runs ORDER BY id"
        ):
            lines = _run_lines(statistics)
            contents["runs"].append(
                {"run": run, "finished": finished, "read": lines[0], "written": lines[1]}
            )
        rows = connection.execute(
            "SELECT digest, length, count, records FROM sequences WHERE kind = 'repeat' "
            "ORDER BY length * count DESC, rowid LIMIT ?",
            (limit,),
        ).fetchall()
        for digest, length, count, blob in rows:
            try:
                check_encoded(blob)
            except ValueError as exc:
                raise SeqdedupError(
                    f"library '{directory}': sequence {digest.hex()}: {exc}"
                ) from None
            contents["top"].append(
                {
                    "id": digest.hex(),
                    "length": length,
                    "count": count,
                    "records": decode_records(blob),
                }
            )
        contents["lengths"] = [
            length
            for (length,) in connection.execute(
                "SELECT length FROM sequences WHERE kind = 'repeat'"
            )
        ]
    return contents


def _run_lines(statistics: str) -> tuple[int, int]:
    """Records read and written by a run, from its saved statistics (0 where absent)."""
    import json

    try:
        lines = json.loads(statistics)["statistics"]["lines"]
        return int(lines["total"]), int(lines["emitted"])
    except (ValueError, KeyError, TypeError):
        return 0, 0
