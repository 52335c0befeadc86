"""Benchmark of ``seqdedup loops``: the loops found on real transcripts and on planted
ones, beside two baselines of the kind agents ship, and the speed of finding them.

    python benchmarks/bench_loops.py --transcripts DIR [--calls 100000]

``--transcripts``: a folder of agent transcripts (any format ``seqdedup loops`` reads),
e.g. ``tests/data/transcripts``. The baselines, exactly as stated:

- **B1**: period 1, 5 identical consecutive actions;
- **B2**: period 1 or 2 within the last 20 actions, 3 repeats (identical actions).

Planted (``genloops.py``): loops of period 1-8, 16, 32 and 64, 3 to 10 iterations,
timestamps, durations and call ids new in each copy, clean or with one stray call in a
copy, between stretches of ordinary work; and legitimate repetition (polling whose
answer changes, a test rerun after an edit, one command over several files, silent
commands), which must give nothing. Speed: CPU seconds to read the real transcripts
(MB/s) and to find the loops of ``--calls`` generated calls (calls/s, after reading);
the hook's time per call, start-up included.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from genloops import legitimate, planted, session  # type: ignore[import-not-found]
from seqdedup import Call, find_loops
from seqdedup.loops.transcripts import read_transcript

PERIODS = [1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 64]


def b1(calls: Sequence[Call]) -> list[int]:
    """Where B1 fires: the 5th of 5 identical consecutive actions."""
    return [i for i in range(4, len(calls)) if len({c[:2] for c in calls[i - 4 : i + 1]}) == 1]


def b2(calls: Sequence[Call]) -> list[int]:
    """Where B2 fires: the last 20 actions end with a block of 1 or 2 actions 3 times."""
    fired = []
    for i in range(len(calls)):
        window = [c[:2] for c in calls[max(0, i - 19) : i + 1]]
        for p in (1, 2):
            tail = window[-3 * p :]
            if len(tail) == 3 * p and tail[:p] * 3 == tail:
                fired.append(i)
                break
    return fired


def planted_cases() -> list[tuple[str, list[Call], tuple[int, int]]]:
    """(name, calls, where the planted loop is) for every planted loop."""
    cases = []
    for period in PERIODS:
        for iterations in range(3, 11):
            for inserted in (False, True):
                rng = random.Random(period * 100 + iterations * 2 + inserted)
                before, loop = session(rng, 10), planted(period, iterations, inserted, rng)
                calls = [*before, *loop, *session(rng, 10)]
                name = f"period {period}, {iterations} iterations{', a stray call' * inserted}"
                cases.append((name, calls, (len(before), len(before) + len(loop) - 1)))
    return cases


def detection_table() -> list[str]:
    cases = planted_cases()
    found = {"ours": 0, "B1": 0, "B2": 0}
    missed_by_baselines = []
    for name, calls, (first, last) in cases:
        ours = any(lp.first <= last and lp.last >= first for lp in find_loops(calls))
        base1 = any(first <= i <= last for i in b1(calls))
        base2 = any(first <= i <= last for i in b2(calls))
        found["ours"] += ours
        found["B1"] += base1
        found["B2"] += base2
        if ours and not (base1 or base2):
            missed_by_baselines.append(name)
    alarms = {"ours": 0, "B1": 0, "B2": 0}
    for calls in legitimate().values():
        alarms["ours"] += bool(find_loops(calls))
        alarms["B1"] += bool(b1(calls))
        alarms["B2"] += bool(b2(calls))
    rows = [
        "| planted (loops) | found: ours | B1 | B2 | legitimate shapes flagged: ours | B1 | B2 |",
        "|---|---|---|---|---|---|---|",
        f"| {len(cases)} | {found['ours']} | {found['B1']} | {found['B2']} | "
        f"{alarms['ours']} of {len(legitimate())} | {alarms['B1']} | {alarms['B2']} |",
    ]
    rows.append(
        f"\nMissed by both baselines, found by ours: {len(missed_by_baselines)} of {len(cases)}"
    )
    return rows


def real_table(folder: Path) -> tuple[list[str], float, int]:
    rows = ["| transcript | calls | ours | B1 | B2 |", "|---|---|---|---|---|"]
    parse_seconds, size = 0.0, 0
    for path in sorted(folder.iterdir()):
        if not path.is_file() or path.suffix not in (".traj", ".json", ".jsonl"):
            continue
        data = path.read_bytes()
        start = time.process_time()
        transcript = read_transcript(data, path.name)
        parse_seconds += time.process_time() - start
        size += len(data)
        calls = transcript.calls
        ours = [
            f"period {lp.period} x{lp.iterations} {transcript.unit}s "
            f"{calls[lp.first].record}-{calls[lp.last].record}"
            for lp in find_loops(calls)
        ]
        base1 = [calls[i].record for i in b1(calls)]
        base2 = [calls[i].record for i in b2(calls)]
        rows.append(
            f"| {path.name} | {len(calls)} | {'; '.join(ours) or '-'} | "
            f"{', '.join(base1) or '-'} | {', '.join(base2) or '-'} |"
        )
    return rows, parse_seconds, size


def speed(count: int, gap: int, runs: int = 5) -> str:
    """Finding the loops of ``count`` generated calls with a loop every ``gap`` calls or
    so (masking included, reading not): the median CPU of ``runs`` (a shared machine's
    CPU seconds move by a third from run to run)."""
    import statistics

    rng = random.Random(1)
    calls: list[Call] = []
    while len(calls) < count:
        calls += session(rng, rng.randrange(gap // 2, gap * 3 // 2))
        calls += planted(rng.choice(PERIODS[:8]), rng.randrange(3, 6), rng.random() < 0.5, rng)
    calls = calls[:count]
    taken = []
    for _ in range(runs):
        start = time.process_time()
        loops = find_loops(calls)
        taken.append(time.process_time() - start)
    seconds = statistics.median(taken)
    return (
        f"{count:,} generated calls, a loop every ~{gap} ({len(loops)} loops): "
        f"{seconds:.2f} s of CPU (median of {runs}; {min(taken):.2f}-{max(taken):.2f}), "
        f"{count / seconds:,.0f} calls/s (masking included)"
    )


def hook_latency(runs: int = 30) -> list[str]:
    """Wall time of one ``seqdedup loops --hook`` call (a PreToolUse, start-up included)
    on a session of 300 ordinary calls and on one of 256 alike calls (a loop: the
    rule's most work), beside ``python -c pass``, interleaved; medians of ``runs``."""
    import json
    import os
    import statistics
    import subprocess
    import tempfile

    from seqdedup.loops.hook import SessionState, seen_call

    command = [str(Path(sys.executable).parent / "seqdedup"), "loops", "--hook"]
    state = tempfile.mkdtemp(prefix="bench-loops-hook-")
    env = {**os.environ, "XDG_STATE_HOME": state}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # (as users run it: byte code kept)
    sessions = {
        "300 ordinary calls": session(random.Random(5), 300),
        "256 alike calls": [Call("Bash", "cat src/f.py", "out 1")] * 256,
    }
    rows = []
    for name, calls in sessions.items():
        with SessionState(Path(state) / "seqdedup" / "loops", name) as kept:
            kept.calls = [seen_call(c.tool, c.action, c.result) for c in calls]
            kept.save()
        event = {"session_id": name, "hook_event_name": "PreToolUse", "tool_name": "Bash"}
        event["tool_input"] = {"command": calls[-1].action}
        stdin = json.dumps(event).encode()
        hook, bare = [], []
        for _ in range(runs + 1):  # (the first of each: a warm-up, not counted)
            start = time.perf_counter()
            subprocess.run(command, input=stdin, env=env, capture_output=True, check=True)
            hook.append(time.perf_counter() - start)
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
            bare.append(time.perf_counter() - start)
        rows.append(
            f"hook, {name}: median {statistics.median(hook[1:]) * 1000:.0f} ms a call "
            f"(fastest {min(hook[1:]) * 1000:.0f}); python -c pass "
            f"{statistics.median(bare[1:]) * 1000:.0f} ms"
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transcripts", type=Path, required=True)
    parser.add_argument("--calls", type=int, default=100_000)
    args = parser.parse_args()
    rows, parse_seconds, size = real_table(args.transcripts)
    print("\n".join(rows))
    rate = size / 1e6 / parse_seconds
    print(f"\nread {size / 1e6:.1f} MB in {parse_seconds:.2f} s: {rate:.1f} MB/s\n")
    print("\n".join(detection_table()))
    print("\n" + speed(args.calls, 100))
    print(speed(args.calls, 1000))
    print("\n".join(hook_latency()))


if __name__ == "__main__":
    main()
