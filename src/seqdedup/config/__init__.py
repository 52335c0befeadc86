"""The validated, immutable configuration (:mod:`seqdedup.config.settings`) and the
small languages its values are written in: ``--normalize`` classes and masks, JSON
paths, marker and fold fields, ``--budget``'s fields, the time limit on patterns.

``from seqdedup.config import Config, FilterRule`` keeps working: the settings' names
are read from here on first use (so importing one of the small languages does not load
the settings)."""

from __future__ import annotations

TYPE_CHECKING = False  # (not typing's: importing typing costs milliseconds at start-up)
if TYPE_CHECKING:
    from seqdedup.config.groups import FilterRule as FilterRule
    from seqdedup.config.settings import Config as Config


def __getattr__(name: str) -> object:
    from importlib import import_module

    if name == "FilterRule":  # (defined with the fields it is one of)
        return import_module("seqdedup.config.groups").FilterRule
    settings = import_module("seqdedup.config.settings")  # (a from-import asks this hook)
    try:
        return getattr(settings, name)
    except AttributeError:
        raise AttributeError(f"module 'seqdedup.config' has no attribute {name!r}") from None
