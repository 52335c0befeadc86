"""seqdedup.logging.FoldingHandler: many threads at once against the rule's oracle, the
timer's releases, flushes at exit (a child process), dictConfig, a failing target."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
import time

import pytest

from seqdedup.logging import FoldingHandler, record_key

from conftest import user_env
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


def test_the_timer_releases_after_a_pause_and_past_the_longest_delay():
    target = Collect()
    handler = FoldingHandler(target, 2, idle=0.2, max_delay=None)
    log = logger_with(handler, "idle")
    for _ in range(3):
        log.info("a")
        log.info("b")
    deadline = time.monotonic() + 10
    while len(target.records) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [r.getMessage() for r in target.records[:2]] == ["a", "b"]
    assert target.records[2].seqdedup["removed"] == 4
    handler.close()
    held = Collect()
    slow = FoldingHandler(held, 3, idle=None, max_delay=0.3)
    log = logger_with(slow, "delay")
    started = time.monotonic()
    log.info("first")  # (W - 1 more records of its stream would decide it)
    while not held.records and time.monotonic() - started < 10:
        time.sleep(0.05)
    assert [r.getMessage() for r in held.records] == ["first"]
    assert time.monotonic() - started >= 0.3  # (held for max_delay first)
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
    log = logger_with(handler, "broken")
    for _ in range(300):  # (a batch is handed on at 256 records)
        log.error("boom")
    log.critical("still running")
    handler.close()


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
