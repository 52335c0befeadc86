"""How a command stops on a signal: SIGINT (Ctrl-C), SIGTERM and SIGHUP.

The console scripts install :func:`stop_on_termination_signals`: a signal then ends the
command at once, as ``KeyboardInterrupt`` (exit 130) or :class:`Terminated` (128 + N).
While a run reads its input inside :func:`graceful`, the *first* signal only asks it to
stop (:func:`requested`): reading ends as at the end of input, and the run decides,
writes and (on live input) saves what it read. A wait for input is cut short
(:func:`wait_readable`, :func:`pause`): waiting consumes nothing, so nothing read is
lost; a run busy deciding sees the request at its next read. A second signal ends the
command at once. Signals ignored by whoever started the command (``nohup``) stay
ignored. With ``--output FILE``, SIGHUP reopens the file instead
(:func:`reopen_on_hangup`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from seqdedup.base.errors import Terminated

_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")
_graceful = False  # a run reading its input: the first signal only asks it to stop
_requested: int | None = None  # the first signal's number, once one came
_waiting = False  # the main thread waits for input (safe to cut short)
_settled = False  # the run's outcome is fixed (its library committed)
_deferring = False  # the command is starting: its first signal waits for started()
_early: int | None = None  # that signal
# --output FILE: SIGHUP asks the output to be reopened (logrotate), not the run to stop
_on_hangup: Callable[[], None] | None = None


class _WaitCut(BaseException):
    """Raised by the handler into a wait for input (only there): the wait ends."""


def _on_signal(signum: int, frame: object) -> None:
    global _requested, _early
    if _deferring and _early is None:
        _early = signum  # (acted on by started(), once the run knows its output)
        return
    if _on_hangup is not None and signum == _hangup_number():
        _on_hangup()  # (sets a flag: the file is reopened before the next write)
        return
    if _graceful and _requested is None:
        _requested = signum
        if _waiting:
            raise _WaitCut
        return
    if _settled:  # what the run was asked to save is saved
        raise SystemExit(0 if _requested is None else 128 + _requested)
    import signal

    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(signum)


def reopen_on_hangup(callback: Callable[[], None] | None) -> None:
    """With ``--output FILE``: SIGHUP calls ``callback`` (which asks the output to be
    reopened) instead of stopping the run, as daemons do for logrotate."""
    global _on_hangup
    _on_hangup = callback


def _hangup_number() -> int | None:
    import signal

    return getattr(signal, "SIGHUP", None)


def _signal_numbers() -> list[int]:
    import signal

    return [getattr(signal, name) for name in _SIGNALS if hasattr(signal, name)]


def stop_on_termination_signals(defer_first: bool = False) -> None:
    """Install the signal table (the console scripts only; see the module docstring),
    then let through the signals :mod:`seqdedup.cli.launch` held back meanwhile.
    ``defer_first``: a first signal before :func:`started` waits for it (the run does
    not know yet whether SIGHUP reopens its output or ends it)."""
    import signal

    from seqdedup.base import signalmask

    global _requested, _settled, _graceful, _deferring, _early
    _requested, _settled, _graceful = None, False, False
    _deferring, _early = defer_first, None
    for signum in _signal_numbers():
        # A signal ignored by whoever started us (nohup, a background job) stays so.
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _on_signal)
    try:
        signalmask.release()  # (a signal held back meanwhile arrives now)
    except KeyboardInterrupt:  # the command ends before it began: the table's status
        raise SystemExit(130) from None
    except Terminated as stop:
        raise SystemExit(128 + stop.signum) from None


def started() -> None:
    """The run knows where its output goes (``--output``'s reopen is in place): a
    signal that came while it started is acted on now, as it would have been then:
    SIGHUP with ``--output`` reopens it; any other ends the command before it reads
    (inside :func:`graceful`: asks the run to stop)."""
    global _deferring, _early
    _deferring = False
    early, _early = _early, None
    if early is not None:
        _on_signal(early, None)


@contextlib.contextmanager
def graceful() -> Iterator[None]:
    """While reading: the first signal asks the run to stop instead of ending it.
    Where Python's own Ctrl-C handler is in place (a program using the library), it is
    replaced for the while, so that Ctrl-C ends a followed file as its end would."""
    import signal
    import sys

    global _graceful, _requested
    # (no thread but the main one runs where `threading` was never imported: a one-line
    # run does not pay for importing it)
    threading = sys.modules.get("threading")
    if threading is not None and threading.current_thread() is not threading.main_thread():
        yield  # (handlers can only be changed, and only run, in the main thread)
        return
    replaced = {}
    for signum in _signal_numbers():
        if signal.getsignal(signum) is signal.default_int_handler:
            replaced[signum] = signal.signal(signum, _on_signal)
    global _settled
    _requested, _graceful, _settled = None, True, False  # (a new run: nothing saved yet)
    started()  # (a signal while the command started: now the first, asking to stop)
    try:
        yield
    finally:
        _graceful = False
        for signum, handler in replaced.items():
            signal.signal(signum, handler)


def requested() -> int | None:
    """The signal that asked the run to stop, if one did."""
    return _requested


def wait_readable(fd: int, timeout: float | None) -> bool | None:
    """Wait until ``fd`` has input (True) or ``timeout`` seconds passed (False); None
    when the run was asked to stop, before or during the wait."""
    import select

    global _waiting
    try:
        try:
            # Waiting first, then the flag: a signal after the test cuts the wait
            # short (it raises _WaitCut), one before it is seen by the test.
            _waiting = True
            if _requested is not None:
                return None
            ready = bool(select.select([fd], [], [], timeout)[0])
        finally:
            _waiting = False
    except _WaitCut:
        _waiting = False
        return None
    return ready


def pause(seconds: float) -> bool:
    """Sleep; False (at once) when the run was asked to stop, before or during it."""
    import time

    global _waiting
    try:
        try:
            _waiting = True  # (first, as in wait_readable)
            if _requested is not None:
                return False
            time.sleep(seconds)
        finally:
            _waiting = False
    except _WaitCut:
        _waiting = False
        return False
    return True


def settle() -> None:
    """The run's library was committed: a signal from now on ends the command with the
    status it has (0, or 128 + N after a stop was asked), never as interrupted."""
    global _settled
    _settled = True


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold Ctrl-C, SIGTERM and SIGHUP back while the statement that fixes the run's
    outcome runs and is recorded (:func:`settle`): a run is then reported interrupted
    exactly when its library is unchanged."""
    import signal

    try:
        before = signal.pthread_sigmask(signal.SIG_BLOCK, _signal_numbers())
    except (AttributeError, OSError, ValueError):  # no pthread_sigmask (Windows)
        before = None
    try:
        yield
    finally:
        if before is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)


def signal_name(signum: int) -> str:
    import signal

    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"
