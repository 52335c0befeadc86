"""The termination signals held back while a command starts (:mod:`seqdedup.cli.launch`
holds them, :mod:`seqdedup.base.stopping` releases them once its handlers are in place).
Imports nothing but the interpreter's C signal module: it runs before anything else."""

from __future__ import annotations

# (_signal, the C module under signal: signal itself imports enum, a millisecond more)
import _signal  # type: ignore[import-not-found]

_HELD = ("SIGINT", "SIGTERM", "SIGHUP")
_before: set[int] | None = None  # the mask before the hold, until released


def hold() -> None:
    """Block the termination signals (they wait, pending, until :func:`release`)."""
    global _before
    numbers = {getattr(_signal, name) for name in _HELD if hasattr(_signal, name)}
    try:
        _before = _signal.pthread_sigmask(_signal.SIG_BLOCK, numbers)
    except (AttributeError, OSError, ValueError):  # (no pthread_sigmask: Windows)
        _before = None


def release() -> None:
    """The mask as it was before :func:`hold` (a signal that came meanwhile is
    delivered now, to the handlers just installed). Nothing without a hold."""
    global _before
    if _before is not None:
        before, _before = _before, None
        _signal.pthread_sigmask(_signal.SIG_SETMASK, before)
