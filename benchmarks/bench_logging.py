"""Benchmark of seqdedup.logging.FoldingHandler: CPU per logging call, beside the same
call through a plain StreamHandler, in one run, interleaved (medians).

    python benchmarks/bench_logging.py

Records that are not repeats (each message new) cost the handler its key and the
engine's decision; repeated tracebacks (a 12-record block over and over) are folded.
Both write to /dev/null through the same formatter.
"""

from __future__ import annotations

import logging
import os
import statistics
import time

from seqdedup.logging import FoldingHandler

CALLS = 50_000


def cpu_per_call(log: logging.Logger, repeated: bool) -> float:
    start = time.process_time()
    for k in range(CALLS):
        if repeated:
            log.warning("step %d of the retry block", k % 12)
        else:
            log.warning("request %d served", k)
    for handler in log.handlers:
        handler.flush()
    return (time.process_time() - start) / CALLS * 1e6


def logger(name: str, folding: bool) -> logging.Logger:
    sink = logging.StreamHandler(open(os.devnull, "w"))  # noqa: SIM115
    sink.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    log = logging.getLogger(name)
    log.handlers[:] = [FoldingHandler(sink, 5, include_args=True) if folding else sink]
    log.propagate = False
    return log


def main() -> None:
    for repeated in (False, True):
        plain, folding = [], []
        for run in range(9):
            plain.append(cpu_per_call(logger(f"plain{run}{repeated}", False), repeated))
            folding.append(cpu_per_call(logger(f"folding{run}{repeated}", True), repeated))
        kind = "repeated blocks" if repeated else "records that are not repeats"
        a, b = statistics.median(plain), statistics.median(folding)
        print(
            f"{kind}: StreamHandler {a:.2f} us/call, FoldingHandler {b:.2f} us/call ({b / a:.2f}x)"
        )


if __name__ == "__main__":
    main()
