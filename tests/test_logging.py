"""seqdedup.logging.FoldingHandler: many threads at once against the rule's oracle, the
timer's releases, flushes at exit (a child process), dictConfig, a failing target."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
import time

import pytest

from seqdedup.logging import BATCH, FoldingHandler, record_key

from conftest import user_env, wait_until
from oracle import interleaved_skipped


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


class Recording(FoldingHandler):
    """The handler, with the order in which records reached it (under its lock)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.seen: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.seen.append(record)
        super().emit(record)


def logger_with(handler: logging.Handler, name: str) -> logging.Logger:
    log = logging.getLogger(name)
    log.handlers[:] = [handler]
    log.setLevel(logging.DEBUG)
    log.propagate = False
    return log


def failing(kind: str) -> None:
    raise ValueError(kind)


@pytest.mark.parametrize("engine", ["c", "python"])
@pytest.mark.parametrize("window", [1, 3, 5])
def test_many_threads_forward_what_the_rule_keeps(engine, window, monkeypatch):
    monkeypatch.setenv("SEQDEDUP_ENGINE", engine)
    target = Collect()
    handler = Recording(target, window, idle=None, max_delay=None, history=None)
    log = logger_with(handler, f"threads-{engine}-{window}")

    def work(worker: int) -> None:
        for attempt in range(30):
            log.info("polling %s", attempt)
            if attempt % 3 == 0:
                try:
                    failing("shared" if attempt % 2 else f"own {worker}")
                except ValueError:
                    log.exception("request failed")
            log.warning("retry %d", attempt % 4)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    handler.flush()
    named = [(str(r.thread), record_key(r)) for r in handler.seen]
    skipped = interleaved_skipped(named, window)
    summaries = [r for r in target.records if hasattr(r, "seqdedup")]
    forwarded = [r for r in target.records if not hasattr(r, "seqdedup")]
    assert forwarded == [r for r, s in zip(handler.seen, skipped, strict=True) if not s]
    assert sum(r.seqdedup["removed"] for r in summaries) == sum(skipped)
    assert all(
        r.seqdedup_copies * r.seqdedup_length + r.seqdedup_extra == r.seqdedup_removed
        for r in summaries
    )
    assert summaries and sum(skipped) > 100


class Clock:
    """The handler's clock (``time.monotonic`` and ``time.time`` inside
    ``seqdedup.logging``), moved by the test: a pause is a step of this clock, so what
    the timer releases depends on the order of events, never on the machine's speed."""

    def __init__(self) -> None:
        self.moved = 0.0
        self.wall = time.time()  # (records are stamped by logging's own clock)

    def monotonic(self) -> float:
        return 1000.0 + self.moved

    def time(self) -> float:
        return self.wall + self.moved

    def advance(self, seconds: float) -> None:
        self.moved += seconds

    def restart(self) -> None:
        """The wall clock set to the real one: a record logged next is (a little
        later than) this clock's now, so its age never runs ahead of the steps."""
        self.wall, self.moved = time.time(), 0.0


@pytest.fixture
def clock(monkeypatch):
    import seqdedup.logging as folding

    moved = Clock()
    monkeypatch.setattr(folding, "time", moved)
    return moved


def test_the_timer_releases_after_a_pause_and_past_the_longest_delay(clock):
    target = Collect()
    handler = FoldingHandler(target, 2, idle=0.2, max_delay=None)
    log = logger_with(handler, "idle")
    for _ in range(3):
        log.info("a")
        log.info("b")
    assert target.records == []  # no pause yet, whatever the timer did meanwhile
    clock.advance(0.2)
    wait_until(lambda: len(target.records) >= 3)
    assert [r.getMessage() for r in target.records[:2]] == ["a", "b"]
    assert target.records[2].seqdedup["removed"] == 4
    handler.close()
    held = Collect()
    slow = FoldingHandler(held, 3, idle=None, max_delay=0.3)
    log = logger_with(slow, "delay")
    clock.restart()  # (records carry logging's own time: the age is this clock's step)
    log.info("first")  # (W - 1 more records of its stream would decide it)
    clock.advance(0.29)
    assert held.records == []  # held while younger than max_delay ...
    clock.advance(1.0)  # (past it, however long the real time between restart and log)
    wait_until(lambda: bool(held.records))  # ... and forwarded once it is that old
    assert [r.getMessage() for r in held.records] == ["first"]
    slow.close()


def test_critical_passes_at_once_and_every_summarises_a_long_run():
    target = Collect()
    handler = FoldingHandler(target, 1, idle=None, max_delay=None, every=4)
    log = logger_with(handler, "every")
    log.info("tick")
    for _ in range(10):
        log.info("tick")
    log.critical("disk full")
    messages = [r.getMessage() for r in target.records]
    assert messages[0] == "tick" and messages[-1] == "disk full"
    parts = [r.seqdedup for r in target.records if hasattr(r, "seqdedup")]
    assert [p["removed"] for p in parts] == [4, 4, 2]
    assert [p["continues"] for p in parts] == [True, True, False]
    handler.close()


def test_a_failing_target_never_raises_into_the_application(monkeypatch):
    class Broken(logging.Handler):
        def handle(self, record: logging.LogRecord) -> bool:
            raise OSError("disk gone")

    monkeypatch.setattr(logging, "raiseExceptions", False)
    handler = FoldingHandler(Broken(), 1, idle=None, max_delay=None)
    reported: list[str] = []
    monkeypatch.setattr(handler, "handleError", lambda r: reported.append(r.getMessage()))
    log = logger_with(handler, "broken")
    for k in range(300):  # (a batch is handed on at 256 records)
        log.error(f"boom {k}")
    log.critical("still running")  # (the application goes on: nothing was raised)
    handler.close()
    # every record was offered to the target, and each failure reported once
    assert reported == [f"boom {k}" for k in range(300)] + ["still running"]


CHILD = """
import logging.config, sys
logging.config.dictConfig({
    "version": 1,
    "handlers": {
        "console": {"class": "logging.StreamHandler", "stream": "ext://sys.stdout",
                    "formatter": "plain"},
        "folding": {"()": "seqdedup.logging.FoldingHandler", "target": "console",
                    "window": 2, "idle": None},
    },
    "formatters": {"plain": {"format": "%(levelname)s %(message)s"}},
    "root": {"handlers": ["folding"], "level": "INFO"},
})
for _ in range(4):
    logging.info("connect")
    logging.error("refused")
logging.info("gave up")
for _ in range(3):
    logging.warning("still down")
"""


def test_a_process_that_exits_writes_what_was_held_through_dict_config():
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, env=user_env(), timeout=60
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == ["INFO connect", "ERROR refused"]
    assert lines[2].startswith(
        "ERROR seqdedup: 6 repeated records folded (3 copies of a sequence of 2"
    )
    # (three in a row at W = 2: two windows that overlap, no repeat)
    assert lines[3:] == ["INFO gave up", *["WARNING still down"] * 3]


# -- hostile ground: locks, raising targets, fork, filters, storms -----------------------

DEADLOCK = """
import logging, sys, threading, time
from seqdedup.logging import FoldingHandler

class Shipper(logging.Handler):
    # a target that logs through a logger reaching the same FoldingHandler (an HTTP
    # client that logs), and that another thread also writes to directly
    def __init__(self):
        super().__init__()
        self.count = 0
    def emit(self, record):
        self.count += 1
        if record.name != "client":
            logging.getLogger("client").info("shipped %d", self.count)
        time.sleep(0.0005)

target = Shipper()
folding = FoldingHandler(target, 2, idle=0.001, max_delay=0.002)
for name in ("app", "client"):
    log = logging.getLogger(name)
    log.handlers[:] = [folding]
    log.setLevel(logging.INFO)
    log.propagate = False

def app():
    log = logging.getLogger("app")
    for k in range(3000):
        log.info("request %d", k)

def direct():
    for k in range(3000):
        target.handle(logging.makeLogRecord({"name": "console", "msg": f"direct {k}"}))

threads = [threading.Thread(target=app), threading.Thread(target=direct)]
for t in threads:
    t.start()
for t in threads:
    t.join()
folding.flush()
print("done", target.count)
"""


def test_a_target_that_logs_back_never_deadlocks_with_the_timer():
    """The timer forwards with no lock of ours held: it waits for the target's lock
    while a thread that holds that lock logs back into the handler, and both go on."""
    done = subprocess.run(
        [sys.executable, "-c", DEADLOCK],
        capture_output=True,
        text=True,
        env=user_env(),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("done "), done.stdout


def test_a_target_that_raises_on_one_record_gets_every_other_one(monkeypatch):
    class Picky(Collect):
        def emit(self, record: logging.LogRecord) -> None:
            if record.getMessage() == "line 100":
                raise OSError("cannot write this one")
            super().emit(record)

    target = Picky()
    handler = FoldingHandler(target, 1, idle=None, max_delay=None, every=None)
    reported: list[logging.LogRecord] = []
    monkeypatch.setattr(handler, "handleError", reported.append)
    log = logger_with(handler, "picky")
    log.setLevel(logging.INFO)
    for k in range(201):
        log.info(f"line {k}")
    handler.flush()
    assert [r.getMessage() for r in target.records] == [f"line {k}" for k in range(201) if k != 100]
    assert [r.getMessage() for r in reported] == ["line 100"]


FORKED = """
import logging, os, sys, time
from seqdedup.logging import FoldingHandler
target = logging.FileHandler(sys.argv[1])
target.setFormatter(logging.Formatter("%(process)d %(message)s"))
folding = FoldingHandler(target, 2, idle=0.05, max_delay=0.2)
log = logging.getLogger("forked")
log.handlers[:] = [folding]
log.setLevel(logging.INFO)
log.info("parent before")
pid = os.fork()
if pid == 0:
    for k in range(30):
        log.info(f"child {k}")
    deadline = time.monotonic() + 60  # (the child's own timer forwards what it holds)
    while b"child 29" not in open(sys.argv[1], "rb").read() and time.monotonic() < deadline:
        time.sleep(0.01)
    os._exit(0)
os.waitpid(pid, 0)
log.info("parent after")
"""


def test_a_forked_child_forwards_what_it_logged_before_a_hard_exit(tmp_path):
    """multiprocessing's fork workers end with os._exit: the child's own timer (started
    after the fork) forwards its records after the pause; what the parent held stays
    the parent's (no line twice)."""
    out = tmp_path / "log.txt"
    done = subprocess.run(
        [sys.executable, "-c", FORKED, str(out)],
        capture_output=True,
        text=True,
        env=user_env(),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    messages = [line.split(" ", 1)[1] for line in out.read_text().splitlines()]
    assert sorted(messages) == sorted(
        ["parent before", "parent after", *(f"child {k}" for k in range(30))]
    )


def test_a_summary_carries_the_extra_fields_a_filter_gave_and_its_thread():
    """A filter on the FoldingHandler supplies ``req``; the target's format names it. A
    summary made later (by a flush on another thread) formats, with the folded thread's
    name and the last replaced record's fields."""

    class Request(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            record.req = getattr(record, "req", "req-7")
            return True

    lines: list[str] = []

    class Lines(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(self.format(record))

    target = Lines()
    target.setFormatter(logging.Formatter("%(req)s %(threadName)s %(message)s"))
    handler = FoldingHandler(target, 2, idle=None, max_delay=None, every=None)
    handler.addFilter(Request())
    log = logger_with(handler, "extra")
    log.setLevel(logging.INFO)

    def work() -> None:
        for _ in range(4):
            log.info("connect")
            log.error("refused")

    worker = threading.Thread(target=work, name="worker-1")
    worker.start()
    worker.join()
    handler.flush()  # (from the main thread)
    assert lines[:2] == ["req-7 worker-1 connect", "req-7 worker-1 refused"]
    assert lines[2].startswith("req-7 worker-1 seqdedup: 6 repeated records folded")


def test_a_storm_that_never_pauses_is_summarised_while_it_lasts(clock):
    """By default a run that goes on gets an interim summary every 60 seconds; with
    ``every=0.2`` a storm without a pause gets one each 0.2 s while it lasts, and none
    before (the handler's clock moved by the test)."""
    assert FoldingHandler(Collect(), idle=None, max_delay=None).__dict__["_every"] == 60.0
    target = Collect()
    handler = FoldingHandler(target, 1, idle=None, max_delay=None, every=0.2)
    log = logger_with(handler, "storm")
    log.setLevel(logging.INFO)
    log.info("first")

    def interim() -> list[logging.LogRecord]:
        return [r for r in target.records if getattr(r, "seqdedup_continues", False)]

    for _ in range(BATCH):  # (a batch is decided at once: the storm's run starts at 0)
        log.info("again")
    for summaries in (1, 2):
        clock.advance(0.19)
        for _ in range(BATCH):
            log.info("again")
        assert len(interim()) == summaries - 1  # (0.19 s of this interval so far)
        clock.advance(0.02)
        wait_until(lambda n=summaries: len(interim()) == n)
    handler.close()
    summaries = interim()
    assert all(r.getMessage().startswith("seqdedup: ") for r in summaries)


def test_a_summary_names_the_levels_it_replaced():
    """At the highest level it replaces (an ERROR among INFO records makes it ERROR),
    and saying which levels, so folded INFO lines do not read as errors."""
    target = Collect()
    handler = FoldingHandler(target, 2, idle=None, max_delay=None, every=None)
    log = logger_with(handler, "levels")
    log.setLevel(logging.INFO)
    for _ in range(4):
        log.info("connect")
        log.error("refused")
    handler.flush()
    summary = target.records[2]
    assert summary.levelname == "ERROR"
    assert summary.getMessage().endswith("; replaced 3 INFO, 3 ERROR)")
    assert summary.seqdedup_levels == {"INFO": 3, "ERROR": 3}


def test_shutdown_holding_the_lock_stops_the_timer_at_once():
    """logging.shutdown holds each handler's lock while it closes it; close() waits for
    the timer thread, which must not wait for that lock: it has ended by the time close()
    returns (it used to be still blocked on the lock when close() gave up waiting for it,
    5 s later, at every exit). 20 handlers, short timers, records just logged."""
    for round_ in range(20):
        target = Collect()
        handler = FoldingHandler(target, 2, idle=0.001, max_delay=0.01)
        log = logger_with(handler, f"shutdown-{round_}")
        for k in range(50):
            log.info("record %d", k % 7)
        timer = handler._timer
        assert timer is not None and timer.is_alive()
        handler.acquire()  # (as logging.shutdown does)
        try:
            handler.flush()
            handler.close()
            assert not timer.is_alive()
        finally:
            handler.release()
        # every record forwarded or counted in a summary before the end
        summaries = [r for r in target.records if hasattr(r, "seqdedup")]
        removed = sum(r.seqdedup["removed"] for r in summaries)
        assert len(target.records) - len(summaries) + removed == 50
