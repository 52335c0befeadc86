"""The one error type of seqdedup; the CLI maps it to exit status 1 in one place."""


class SeqdedupError(Exception):
    """A user-facing failure: the message is one readable line, never a traceback."""


class UsageError(SeqdedupError):
    """An invalid option or combination of options (detected before any output)."""
