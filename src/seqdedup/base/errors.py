"""The one error type of seqdedup; the CLIs map it to exit status 1 in one place."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import TextIO


class SeqdedupError(Exception):
    """A user-facing failure: the message is one readable line, never a traceback."""


class UsageError(SeqdedupError):
    """An invalid option or combination of options (detected before any output)."""


class InvalidValue(UsageError, ValueError):
    """A value outside an option's bounds, given on the command line or to the Python
    API (where it is a ValueError, raised before any work, in the command line's words)."""


def whole_number(name: str, value: object, least: int, most: int | None = None) -> int:
    """``value`` as an int of at least ``least`` (and at most ``most``), else
    InvalidValue naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidValue(f"{name} must be a whole number, got {value!r}")
    if value < least:
        raise InvalidValue(f"{name} must be at least {least}, got {value}")
    if most is not None and value > most:
        raise InvalidValue(f"{name} must be at most {most:,}, got {value:,}")
    return value


class OutputError(SeqdedupError):
    """Standard output cannot be written."""


# The program found itself inconsistent (a bug, never bad input): sysexits' EX_SOFTWARE.
EXIT_INTERNAL = 70


def internal_error(prog: str, exc: BaseException) -> str:
    """The one line for an internal inconsistency (an AssertionError, raised where an
    invariant of the engine or of attribution failed), asking for a report."""
    what = visible(str(exc)) or type(exc).__name__
    return f"{prog}: internal error: {what}; please report this bug with the command line\n"


class Terminated(BaseException):
    """SIGTERM or SIGHUP ended the command at once (see :mod:`seqdedup.base.stopping`): it
    exits with 128 + the signal number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_CONTROL = {code: f"\\x{code:02x}" for code in (*range(0x20), 0x7F)}


def visible(text: str) -> str:
    """Text as a terminal should show it: control characters (ANSI escapes, carriage
    returns, newlines: a file name may hold any of them) as visible ``\\xNN`` escapes,
    never acted on."""
    return text.translate(_CONTROL)


def exit_status(
    prog: str,
    body: Callable[[], int],
    stderr: TextIO,
    own_stdout: bool = True,
    error: int = 1,
) -> int:
    """Run a command's body; turn what ends it into an exit status: a SeqdedupError is
    one line and ``error`` (1; ``seqdedup diff``'s is 2, as diff's and cmp's), an
    internal inconsistency one line and 70, Ctrl-C 130, SIGTERM and
    SIGHUP 128 + N, --help/--version their own, a closed output pipe a quiet 0. With
    ``own_stdout`` (the process's own standard output, not one a test passed in), an
    output that failed is silenced, so that the interpreter's last flush stays quiet."""
    try:
        return body()
    except SeqdedupError as exc:
        stderr.write(f"{prog}: {visible(str(exc))}\n")  # one line, whatever it names
        if isinstance(exc, OutputError) and own_stdout:
            silence_stdout()
        return error
    except AssertionError as exc:  # an invariant failed: a bug, reported as one
        stderr.write(internal_error(prog, exc))
        return EXIT_INTERNAL
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        return 130
    except Terminated as exc:
        return 128 + exc.signum
    except MemoryError:
        stderr.write(f"{prog}: out of memory\n")
        return error
    except BrokenPipeError as closed:  # the reader of stdout went away (| head): a quiet end
        if own_stdout:
            silence_stdout()
        return closed.status if isinstance(closed, ReaderGone) else 0


class ReaderGone(BrokenPipeError):
    """The reader closed the pipe after the answer was decided: a quiet end that keeps
    the answer's exit status (``seqdedup diff | head`` under ``pipefail``: 1 when
    something changed)."""

    def __init__(self, status: int) -> None:
        super().__init__(f"the reader went; status {status}")
        self.status = status


def silence_stdout() -> None:
    """Keep the interpreter's final flush of stdout from failing again (noisily)."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
