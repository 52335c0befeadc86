"""--budget's settings: the levels of line kept verbatim (--verbatim) and the fields in
which copies of one event may differ (--event-fields), checked."""

from __future__ import annotations

from seqdedup.errors import UsageError

VERBATIM_LEVELS = ("error", "warning")  # --verbatim's levels (budgetinput's patterns)


EVENT_FIELDS = ("timestamp", "uuid", "ip", "hex", "number", "pid", "port")


def parse_levels(text: str) -> tuple[str, ...]:
    """``error,warning`` -> the levels, checked; ``none``: only what --keep names."""
    names = tuple(name.strip().lower() for name in text.split(",") if name.strip())
    if names == ("none",):
        return ()
    for name in names:
        if name not in VERBATIM_LEVELS:
            raise UsageError(f"--verbatim: unknown level '{name}' (use error, warning, or none)")
    if not names:
        raise UsageError("--verbatim: name a level (error, warning), or none")
    return names


def parse_event_fields(text: str) -> tuple[str, ...]:
    """``timestamp,pid`` -> the field names, checked; ``none``: events by exact text."""
    names = tuple(name.strip().lower() for name in text.split(",") if name.strip())
    if names == ("none",):
        return ()
    for name in names:
        if name not in EVENT_FIELDS:
            known = ", ".join(EVENT_FIELDS)
            raise UsageError(f"--event-fields: unknown field '{name}' (use {known}, or none)")
    if not names:
        raise UsageError("--event-fields: name at least one field, or none")
    return names
