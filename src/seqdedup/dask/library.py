"""The Dask job's library (``seqdedup-dask -r/-l``): what it loads, as the keys each
owner counts as earliest, and what it saves, the new material its partitions staged.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from seqdedup.config.groups import LibraryOptions, RuleOptions
from seqdedup.dask.partitions import Reader, window_fingerprints, window_keys
from seqdedup.dask.stretches import size_rule, stretch_library


def library_keys(
    options: LibraryOptions,
    rule: RuleOptions,
    keys_made: dict[str, object],
    delimiter: bytes,
    reader: Reader,
    owners: int,
) -> tuple[list[bytes], int]:
    """The keys of the loaded libraries' windows (int64 pairs, see
    partitions.window_keys) under the ``rule``, per owner, and how many sequences were
    loaded (each library used only when its keys were made as ``keys_made`` says)."""
    import numpy as np

    width = rule.window_size
    directories = list(options.read_sequences)
    if options.library_dir is not None and options.library_dir.exists():
        directories.append(options.library_dir)
    fps: list[Any] = []
    loaded = 0
    sequences: list[list[bytes]] = []  # (a minimum size: stretched below)
    if directories:
        from seqdedup.library.load import load_library

        for directory in directories:
            for sequence in load_library(directory, delimiter, keys=keys_made):
                loaded += 1
                if rule.min_size:
                    sequences.append(sequence.records)
                    continue
                hashes = reader.hash_bytes(sequence.records)
                count = len(hashes) // 16 - width + 1
                if count > 0:
                    prints = window_fingerprints(reader.engine, hashes, count, width, reader.seed)
                    fps.append(window_keys(reader.engine, hashes, prints, width, reader.seed))
    if rule.min_size:
        return stretch_library(reader, size_rule(rule), sequences, owners), loaded
    values = np.concatenate(fps) if fps else np.zeros((0, 2), dtype=np.int64)
    owner = values[:, 0].view(np.uint64) % np.uint64(owners)
    return [values[owner == b].tobytes() for b in range(owners)], loaded


def save_library(
    library_dir: Path,
    configuration: dict[str, object],
    staging_dir: Path,
    document: dict[str, object],
) -> int:
    """Land the staged new material in the library, with the job's ``configuration``
    and statistics (``document``); the staging folder is removed whatever happens."""
    from seqdedup.library.save import LibraryWriter

    writer = LibraryWriter(library_dir)
    try:
        for staged in sorted(staging_dir.iterdir(), key=lambda p: int(p.name)):
            writer.absorb(staged)
        from seqdedup.base.stopping import settle

        return writer.commit(configuration, document, settle)
    finally:
        writer.discard()
        shutil.rmtree(staging_dir, ignore_errors=True)
