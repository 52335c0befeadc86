"""The Dask scheduler a job runs on: none (one process), synchronous, the address of a
running one, or a local cluster of two worker processes started and stopped here
(Ctrl-C blocked in its workers, signals while it starts held, and every process it
started ended with the command)."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from typing import Any

from seqdedup.base.errors import SeqdedupError, Terminated, UsageError


def local_worker_environ() -> dict[str, object]:
    """Dask's configuration for the workers of a local cluster: Dask's nanny starts
    workers with MALLOC_TRIM_THRESHOLD_=65536, which makes glibc map and unmap every
    large buffer (each pass allocates several per partition): first passes ran 1.6x
    slower with it. A local cluster lives for one job, so its workers start without."""
    import dask

    environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ", {}))
    environ.pop("MALLOC_TRIM_THRESHOLD_", None)
    return {"distributed.nanny.pre-spawn-environ": environ}


class Scheduler:
    """Pick the Dask scheduler; a "local" cluster is started and stopped here."""

    def __init__(self, name: str | None, connect_timeout: float = 10.0) -> None:
        self.name = name
        self.connect_timeout = connect_timeout
        self._client: Any = None
        self._cluster: Any = None

    def __enter__(self) -> dict[str, object]:
        if self.name is None:
            return {}
        if self.name in ("sync", "synchronous"):
            # Dask's own synchronous scheduler, given as the function: named by its
            # string, Dask imports distributed (0.3 s) to look for a client first.
            from dask.local import get_sync

            return {"scheduler": get_sync}
        try:
            from distributed import Client
        except ImportError:
            raise SeqdedupError(
                "a distributed scheduler needs the optional extra: pip install 'seqdedup[dask]'"
            ) from None

        # Dask's p2p shuffle reports every shuffle at WARNING level; that is not news.
        logging.getLogger("distributed.shuffle").setLevel(logging.ERROR)
        # A job stopped by Ctrl-C leaves the client's futures unretrieved, which asyncio
        # reports when they are collected (at any moment): errors come to us as results.
        logging.getLogger("asyncio").setLevel(logging.CRITICAL)
        try:
            if self.name == "local":
                self._start_local()
            else:
                self._client = Client(self.name, timeout=self.connect_timeout)
        except ValueError as exc:  # no port, an unknown scheme: not an address at all
            raise UsageError(
                f"--scheduler '{self.name}' is not a scheduler address ({exc}): use local, "
                "sync or tcp://HOST:PORT"
            ) from None
        except (OSError, TimeoutError) as exc:
            raise SeqdedupError(f"cannot reach the Dask scheduler '{self.name}': {exc}") from None
        return {"scheduler": self._client}

    def _start_local(self) -> None:
        """A cluster of two worker processes on this machine. Ctrl-C reaches the whole
        process group: the workers start with it blocked, so that this process alone
        stops the job and closes the cluster, without their tracebacks; a signal while
        the cluster starts is held until it has (a second or two), then stops the run,
        and what had started is closed."""
        import dask
        from distributed import Client, LocalCluster

        # (Dask's nanny copies its settings into this process's environment, which
        # workers inherit: an earlier cluster may have left the variable.)
        trim = os.environ.pop("MALLOC_TRIM_THRESHOLD_", None)
        from multiprocessing import resource_tracker

        try:
            # multiprocessing's resource tracker unblocks Ctrl-C in the thread that starts
            # it, so that thread's workers would see it: it is started here, first.
            resource_tracker.ensure_running()
            with (
                _signals_deferred(),
                dask.config.set(local_worker_environ()),
                _restored("MALLOC_TRIM_THRESHOLD_", trim),
            ):
                self._cluster = LocalCluster(
                    n_workers=2,
                    threads_per_worker=1,
                    processes=True,
                    # (None still binds the scheduler's HTTP server to port 8787, and a
                    # warning when that port is taken: any free port, said nowhere)
                    dashboard_address=":0",
                    # A cancelled task is a WARNING there, and a worker that outlives the
                    # scheduler stopped by Ctrl-C logs heartbeat ERRORs: what a job needs
                    # to say comes to this process as results and errors.
                    silence_logs=logging.CRITICAL,
                )
                self._client = Client(self._cluster)
        except BaseException:
            self.__exit__(KeyboardInterrupt)  # (stopped while it started: close what did)
            raise

    def __exit__(self, kind: object, *exc: object) -> None:
        if kind is not None:  # stopped (Ctrl-C, an error): closing mid-job is no news
            logging.getLogger("distributed").setLevel(logging.CRITICAL)
        if self._client is not None:
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()


@contextlib.contextmanager
def _restored(name: str, value: str | None) -> Iterator[None]:
    """The environment variable ``name`` set back to ``value`` (if any) afterwards."""
    try:
        yield
    finally:
        if value is not None:
            os.environ[name] = value


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """While a local cluster starts: Ctrl-C blocked, which the threads started meanwhile
    and the worker processes they start inherit (across exec too), so that the workers
    never see it; Ctrl-C (which a thread started earlier, a maths library's, may still
    receive), SIGTERM and SIGHUP only noted. Afterwards the first one noted stops the
    run as it would have."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted: list[int] = []
    previous = {}
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        signum = getattr(signal, name, None)
        if signum is not None and signal.getsignal(signum) is not signal.SIG_IGN:
            previous[signum] = signal.signal(signum, lambda number, _: noted.append(number))
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)  # (one held comes now: noted)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if noted:
            if noted[0] == signal.SIGINT:
                raise KeyboardInterrupt
            raise Terminated(noted[0])


def end_helper_processes(within: float = 5.0) -> None:
    """multiprocessing's resource tracker, which a local cluster's processes use, ends
    only when every process holding its pipe has: after this one, on its own. The
    command (never the library: a program's own resources may be tracked there)
    closes its end and waits, at most ``within`` seconds, for the tracker to end, so
    that nothing it started outlives it. (Private parts of multiprocessing, hence the
    care: without them, or if a process still holds the pipe, it ends a moment after.)"""
    import sys
    import time

    if "multiprocessing.resource_tracker" not in sys.modules:
        return
    tracker = getattr(sys.modules["multiprocessing.resource_tracker"], "_resource_tracker", None)
    fd, pid = getattr(tracker, "_fd", None), getattr(tracker, "_pid", None)
    if not isinstance(fd, int) or not isinstance(pid, int):
        return
    with contextlib.suppress(OSError):
        os.close(fd)
    tracker._fd = tracker._pid = None  # type: ignore[union-attr]
    deadline = time.monotonic() + within
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(pid, os.WNOHANG) == (0, 0) and time.monotonic() < deadline:
            time.sleep(0.01)
