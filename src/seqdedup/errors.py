"""The one error type of seqdedup; the CLI maps it to exit status 1 in one place."""


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
