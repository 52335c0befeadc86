"""Latency of a live run: how long a record with a key never seen takes from the write
into the pipe to the read of it from the output, after records that may start a repeat.

    python benchmarks/bench_live.py [--rounds 30]

For each option set and engine: one live process (as ``tail -f log | seqdedup``), 200
lines of history, then ``--rounds`` times two lines already seen (they wait: they may
start a repeat) and a new one; the new line's latency, min / median / max in ms. The
machine is shared: compare rows of one run, not runs.
"""

from __future__ import annotations

import argparse
import os
import select
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

OPTIONS = [
    ["-w", "5"],
    ["-w", "auto"],
    ["-w", "auto", "--normalize", "all"],
    ["-w", "1", "--min-bytes", "200"],
]


def command() -> list[str]:
    script = Path(sys.executable).parent / "seqdedup"
    found = str(script) if script.exists() else shutil.which("seqdedup")
    return [found] if found else [sys.executable, "-m", "seqdedup"]


def read_line(fd: int, deadline: float) -> bytes:
    got = b""
    while not got.endswith(b"\n"):
        if not select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
            raise SystemExit("no output within 10 s")
        got += os.read(fd, 1)
    return got


def name(k: int) -> str:
    """``k`` in letters no normaliser masks (no hex digits, no numbers)."""
    letters = "ghijklmnopqrstuvwxyz"
    out = ""
    while True:
        k, digit = divmod(k, len(letters))
        out += letters[digit]
        if not k:
            return out


def latencies(options: list[str], engine: str, rounds: int) -> list[float]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env["SEQDEDUP_ENGINE"] = engine
    proc = subprocess.Popen(
        [*command(), "-q", *options], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
    )
    assert proc.stdin is not None and proc.stdout is not None
    fd = proc.stdout.fileno()
    history = [f"worker {name(k)} handled request in time\n".encode() for k in range(200)]
    proc.stdin.write(b"".join(history))
    proc.stdin.flush()
    for _ in history:
        read_line(fd, time.monotonic() + 10)
    out = []
    for k in range(rounds):
        proc.stdin.write(history[2 * k] + history[2 * k + 1])  # seen: may start a repeat
        proc.stdin.flush()
        time.sleep(0.05)  # (they are read and held)
        new = f"panic: runtime error in round {name(k)}\n".encode()
        started = time.monotonic()
        proc.stdin.write(new)
        proc.stdin.flush()
        while read_line(fd, started + 10) != new:
            pass
        out.append((time.monotonic() - started) * 1000)
    proc.stdin.close()
    proc.wait(10)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores")
    print(f"{'options':<34} {'engine':<7} {'min ms':>7} {'median':>7} {'max':>7}")
    for options in OPTIONS:
        for engine in ("c", "python"):
            ms = latencies(options, engine, args.rounds)
            print(
                f"{' '.join(options):<34} {engine:<7} {min(ms):7.2f} "
                f"{statistics.median(ms):7.2f} {max(ms):7.2f}"
            )


if __name__ == "__main__":
    main()
