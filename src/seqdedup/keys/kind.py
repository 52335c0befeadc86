"""The kind of a line: its key with every class masked.

Timestamps, uuids, IP addresses, hex ids, numbers, paths and quoted values are each
replaced by their placeholder (``--normalize all,path,quoted``, after the run's own key
steps), so that lines which differ only in such values are one kind::

    2026-12-06 10:00:01 open /var/log/a.log user="bob" took 12 ms
    2026-12-06 10:00:02 open /srv/b.log user="ann" took 7 ms

are both ``<TIMESTAMP> open <PATH> user=<QUOTED> took <NUMBER> ms``. The budget counts
and shows kinds of line with it, and ``seqdedup diff`` tells a kind never seen from a
known kind with new values (docs/keys.md, "The kind of a line").
"""

from __future__ import annotations

from types import ModuleType

from seqdedup.config.settings import Config
from seqdedup.keys.maker import KeyMaker, key_maker

KIND_CLASSES = "all,path,quoted"  # every class of --normalize


def kind_config(config: Config) -> Config:
    """The run's key steps, then every class masked: the key of a line's kind."""
    return config._replace(key_steps=(*config.key_steps, ("normalize", KIND_CLASSES)))


def kind_keys(config: Config, kernel: ModuleType | None) -> KeyMaker:
    """The key maker of the kinds of a run's records (``.keys(records)``)."""
    return key_maker(kind_config(config), kernel, 0)


def kind_of(record: bytes) -> bytes:
    """The kind of one record with no key options (the definition, in Python)."""
    from seqdedup.config.normalize import EVERY, normalize_py  # (not at a run's start)

    return normalize_py(record, EVERY)
