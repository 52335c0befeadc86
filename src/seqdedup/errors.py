"""The one error type of seqdedup; the CLIs map it to exit status 1 in one place."""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO


class SeqdedupError(Exception):
    """A user-facing failure: the message is one readable line, never a traceback."""


class UsageError(SeqdedupError):
    """An invalid option or combination of options (detected before any output)."""


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: the run stops like on Ctrl-C (nothing saved) and
    exits with 128 + the signal number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def stop_on_termination_signals() -> None:
    """Turn SIGTERM and SIGHUP into :class:`Terminated` (the console scripts only)."""
    import signal

    def terminate(signum: int, frame: object) -> None:
        raise Terminated(signum)

    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):  # not every platform has SIGHUP
            signal.signal(getattr(signal, name), terminate)


def exit_status(prog: str, body: Callable[[], int], stderr: TextIO) -> int:
    """Run a command's body; turn what ends it into an exit status: a SeqdedupError is
    one line and 1, Ctrl-C 130, SIGTERM/SIGHUP 128 + N, --help/--version their own."""
    try:
        return body()
    except SeqdedupError as exc:
        stderr.write(f"{prog}: {exc}\n")
        return 1
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        return 130
    except Terminated as exc:
        return 128 + exc.signum
