"""Generated agent transcripts for ``seqdedup loops``: ordinary work, planted loops, and
legitimate repetition that is not a loop (the benchmark and the tests share them).

Every call of ordinary work is new (its own words: numbers are masked, so words make
calls differ). A planted loop repeats a block of ``period`` calls, each copy with new
timestamps, durations and call ids (all masked), one copy with a stray call inside when
asked. Call ids have one width: a run of 8 or more digits is masked as a hex id and a
shorter one as a number, so ids of different widths would make different calls.
"""

from __future__ import annotations

import random

from seqdedup import Call

WORDS = ["view", "edit", "run", "check", "diff", "undo", "grep", "test"]


def _word(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(8))


def session(rng: random.Random, calls: int) -> list[Call]:
    """Ordinary work: each call new (its own file, its own output)."""
    out = []
    for _ in range(calls):
        verb = rng.choice(["cat", "grep -n TODO", "python -m pytest", "ls"])
        out.append(
            Call("bash", f"{verb} src/{_word(rng)}.py", f"{verb}: {_word(rng)} {_word(rng)}")
        )
    return out


def planted(period: int, iterations: int, inserted: bool, rng: random.Random) -> list[Call]:
    """A block of ``period`` calls (each distinct) repeated ``iterations`` times."""
    out = []
    for copy in range(iterations):
        block = []
        for k in range(period):
            stamp = f"2026-12-06T10:{copy:02d}:{k % 60:02d}Z"
            name = f"{WORDS[k % 8]} {'abcdefgh'[k // 8]}"
            block.append(
                Call(
                    "bash",
                    f"{name} --id {rng.randrange(10**8, 10**9)}",  # (one width: see the module)
                    f"[{stamp}] {name} done in {rng.randrange(1000)} ms",
                )
            )
        if inserted and copy == iterations // 2:
            block.insert(rng.randrange(period), Call("bash", "echo stray thought", "stray thought"))
        out += block
    return out


def legitimate() -> dict[str, list[Call]]:
    """Repetition that is progress, not a loop."""
    polling = [
        Call("bash", "kubectl get pod web", f"web {s}")
        for s in ("Pending", "ContainerCreating", "Running")
    ]
    rerun = [
        Call("edit", "file_path=a.py", "ok"),
        Call("bash", "pytest -x", "2 failed"),
        Call("edit", "file_path=a.py", "ok 2"),
        Call("bash", "pytest -x", "1 failed"),
        Call("edit", "file_path=b.py", "ok"),
        Call("bash", "pytest -x", "passed"),
    ]
    files = [Call("bash", f"wc -l src/{n}.py", f"{len(n)} lines, {n}") for n in ("a", "bb", "ccc")]
    silent = [Call("bash", f"touch out/{n}.txt", "") for n in ("x", "y", "z", "w", "v")]
    return {"polling": polling, "rerun after edit": rerun, "each file": files, "silent": silent}
