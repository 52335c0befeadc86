"""--budget's settings: the levels of line kept verbatim (--verbatim) and the fields in
which copies of one event may differ (--event-fields), checked."""

from __future__ import annotations

from seqdedup.errors import UsageError

VERBATIM_LEVELS = ("error", "warning")  # --verbatim's levels (budgetinput's patterns)


EVENT_FIELDS = ("timestamp", "uuid", "ip", "hex", "number", "pid", "port")


def parse_levels(text: str) -> tuple[str, ...]:
    """``error,warning`` -> the levels, checked; ``none``: only what --keep names."""
    return _names(text, "--verbatim", "level", VERBATIM_LEVELS)


def parse_event_fields(text: str) -> tuple[str, ...]:
    """``timestamp,pid`` -> the field names, checked; ``none``: events by exact text."""
    return _names(text, "--event-fields", "field", EVENT_FIELDS)


def _names(text: str, option: str, noun: str, known: tuple[str, ...]) -> tuple[str, ...]:
    """A comma-separated list of ``known`` names (or ``none``: the empty tuple)."""
    names = tuple(name.strip().lower() for name in text.split(",") if name.strip())
    if names == ("none",):
        return ()
    choices = ", ".join(known)
    for name in names:
        if name not in known:
            raise UsageError(f"{option}: unknown {noun} '{name}' (use {choices}, or none)")
    if not names:
        raise UsageError(f"{option}: name at least one {noun} ({choices}), or none")
    return names
