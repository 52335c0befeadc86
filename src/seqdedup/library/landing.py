"""How a run's staged sequences land in its library (docs/only-new.md, "How a save
lands").

A run stages into a file shaped as a library (the same schema, one row per distinct
content, its sightings counted in place), so that everything staged is written once:

* a library that does not exist yet *is* the staging file, finished (the run's row
  added), synced and linked into place under the library's name: nothing is copied,
  and the name appears whole or not at all;
* into a library that exists (or appeared while the run went on) the rows are merged
  in one transaction, each distinct content once.

A sequence staged under an id of its own (a folded run's, ``kind`` 'named' while
staged) counts no sighting: where the library holds it already only its ``last_run``
changes.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path

from seqdedup.base.stopping import signals_held

# One row per distinct content while staging: a content staged again counts one more
# sighting; a named sequence's row gives way to the first sighting of the same content
# (as if the sightings had landed first) and never adds one itself.
STAGE_UPSERT = (
    "INSERT INTO sequences (digest, records, length, kind, count, run_id) "
    "VALUES (?, ?, ?, ?, 1, 1) ON CONFLICT(digest) DO UPDATE SET "
    "count = CASE WHEN excluded.kind = 'named' THEN count WHEN kind = 'named' THEN 1 "
    "ELSE count + 1 END, "
    "records = CASE WHEN kind = 'named' THEN excluded.records ELSE records END, "
    "length = CASE WHEN kind = 'named' THEN excluded.length ELSE length END, "
    "kind = CASE WHEN kind = 'named' THEN excluded.kind ELSE kind END"
)
RUN_ROW = "INSERT INTO runs (started, finished, config, statistics) VALUES (?, ?, ?, ?)"
SIGHTINGS = "UPDATE sequences SET count = count + ?, last_run = ? WHERE digest = ?"


def settle_staged(
    staging: sqlite3.Connection, absorbed: Iterable[str], named: Iterable[bytes]
) -> tuple[list[bytes], int]:
    """Finish the staging file's rows: other staging files' rows landed in it, named
    rows made library rows. Return the digests staged only under an id (no sighting)
    and how many distinct sequences the run saves."""
    with staging:
        named = [*named]
        for other in absorbed:
            named += land_file(staging, other)
        named_only = [
            digest
            for digest in dict.fromkeys(named)
            if staging.execute(
                "UPDATE sequences SET kind = 'repeat' WHERE digest = ? AND kind = 'named'",
                (digest,),
            ).rowcount
        ]
        saved = int(staging.execute("SELECT COUNT(*) FROM sequences").fetchone()[0])
    return named_only, saved


def publish_fresh(
    staging: sqlite3.Connection,
    staging_path: str,
    target: Path,
    run_row: tuple[str, str, str, str],
    on_committed: Callable[[], None] | None,
) -> bool:
    """Make the finished staging file the library ``target``, which does not exist:
    the run's row added, the file synced, then linked under the library's name (which
    fails if another run made the library meanwhile: False, the file left as it is).
    Closes ``staging``."""
    with staging:
        staging.execute(RUN_ROW, run_row)
    staging.close()
    descriptor = os.open(staging_path, os.O_RDONLY)
    try:
        os.fsync(descriptor)  # (the staging file is written without syncs)
    finally:
        os.close(descriptor)
    with signals_held():  # interrupted exactly when not saved
        try:
            os.link(staging_path, target)
        except OSError:  # made meanwhile, or no hard links here: merged instead
            return False
        if on_committed is not None:
            on_committed()
    with contextlib.suppress(OSError):  # the new name is lasting
        descriptor = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
    return True


def merge_staged(
    connection: sqlite3.Connection, run_id: int | None, named_only: list[bytes]
) -> None:
    """Merge the settled staging file (attached as ``staging``) into the library's
    sequences, in the transaction the caller holds: a content the library holds counts
    the run's sightings of it; a named-only row adds none."""
    connection.execute("CREATE TEMP TABLE IF NOT EXISTS named_only (digest BLOB PRIMARY KEY)")
    connection.execute("DELETE FROM temp.named_only")
    connection.executemany("INSERT INTO temp.named_only VALUES (?)", ((d,) for d in named_only))
    connection.execute(
        "INSERT INTO sequences (digest, records, length, kind, count, run_id) "
        "SELECT digest, records, length, kind, count, ? FROM staging.sequences "
        "WHERE digest NOT IN (SELECT digest FROM temp.named_only) ORDER BY rowid "
        "ON CONFLICT(digest) DO UPDATE SET count = count + excluded.count, last_run = ?",
        (run_id, run_id),
    )
    connection.execute(
        "INSERT INTO sequences (digest, records, length, kind, count, run_id) "
        "SELECT digest, records, length, 'repeat', 1, ? FROM staging.sequences "
        "WHERE digest IN (SELECT digest FROM temp.named_only) ORDER BY rowid "
        "ON CONFLICT(digest) DO UPDATE SET last_run = ?",
        (run_id, run_id),
    )


def land_file(connection: sqlite3.Connection, path: str) -> list[bytes]:
    """Stage a Dask worker's staging file (rows of the plain ``staged`` table, one per
    sequence staged) into the staging file of ``connection``, as if staged there; the
    digests it names under an id. (Read from the file: a database attached in a
    transaction cannot be detached in it, and SQLite attaches at most 10.)"""
    named: list[bytes] = []
    with contextlib.closing(sqlite3.connect(path)) as staged:
        rows = staged.execute("SELECT digest, records, length, kind FROM staged ORDER BY rowid")
        for batch in iter(lambda: rows.fetchmany(512), []):
            connection.executemany(STAGE_UPSERT, batch)
            named.extend(digest for digest, _, _, kind in batch if kind == "named")
    return named
