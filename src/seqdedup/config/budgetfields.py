"""--budget's settings: the levels of line kept verbatim (--verbatim) and the fields in
which copies of one event may differ (--event-fields), checked; what ``--budget host``
means where the calling host is known."""

from __future__ import annotations

from collections.abc import Mapping

from seqdedup.base.errors import UsageError

# --verbatim's levels (budget.input's patterns), all of them the default: errors,
# warnings, and lines with no level word that hold an error word ("words")
VERBATIM_LEVELS = ("error", "warning", "words")


EVENT_FIELDS = ("timestamp", "uuid", "ip", "hex", "number", "pid", "port")


def parse_levels(text: str) -> tuple[str, ...]:
    """``error,warning,words`` -> the levels, checked; ``none``: only what --keep
    names."""
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


# Claude Code's shell (its Bash tool sets CLAUDECODE=1) keeps this many characters of a
# command's output, standard error included, and cuts the middle out of the rest;
# BASH_MAX_OUTPUT_LENGTH changes it, up to its own bound
CLAUDE_CODE_OUTPUT = 30_000
CLAUDE_CODE_OUTPUT_MOST = 150_000
STDERR_ROOM = 1_000  # characters left for what the command says on standard error


def host_budget(environ: Mapping[str, str]) -> tuple[int, str]:
    """``--budget host``: the budget and what it counts (a tokenizer's name) for the
    host the command runs under; a one-line error where none is known."""
    if environ.get("CLAUDECODE") == "1":
        limit = CLAUDE_CODE_OUTPUT
        given = environ.get("BASH_MAX_OUTPUT_LENGTH", "").strip()
        if given.isdigit() and int(given) > 0:
            limit = min(int(given), CLAUDE_CODE_OUTPUT_MOST)
        return max(limit - STDERR_ROOM, 1), "characters"
    raise UsageError(
        "--budget host: the calling host is not one seqdedup knows (Claude Code's shell "
        "sets CLAUDECODE=1); give a number of tokens instead, e.g. --budget 8k"
    )
