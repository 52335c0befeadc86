"""The validated, immutable configuration (:mod:`seqdedup.config.settings`) and the
small languages its values are written in: ``--normalize`` classes and masks, JSON
paths, marker and fold fields, ``--budget``'s fields, the time limit on patterns.

``from seqdedup.config import Config, FilterRule`` keeps working: the settings' names
are read from here on first use."""

from __future__ import annotations

TYPE_CHECKING = False  # (not typing's: importing typing costs milliseconds at start-up)
if TYPE_CHECKING:
    from typing import Any


def __getattr__(name: str) -> Any:
    from seqdedup.config import settings

    try:
        return getattr(settings, name)
    except AttributeError:
        raise AttributeError(f"module 'seqdedup.config' has no attribute {name!r}") from None
