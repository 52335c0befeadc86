"""Generate a realistic application log for the benchmark.

Unique INFO lines carry request ids and timestamps (so they never repeat), and about
30% of the lines fall inside stack-trace blocks of 5-40 lines drawn from a small pool,
so the same block recurs many times, interleaved with new material.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

SERVICES = ["auth", "billing", "search", "gateway", "orders", "users", "cache"]
ACTIONS = ["GET /api/v1/items", "POST /api/v1/orders", "GET /healthz", "PUT /api/v1/users"]


def _stack_trace(rng: random.Random, n: int) -> list[str]:
    exc = rng.choice(["ValueError", "KeyError", "TimeoutError", "ConnectionResetError"])
    lines = [f"ERROR Traceback (most recent call last): {exc} in worker {rng.randrange(64)}"]
    for depth in range(n - 2):
        mod = rng.choice(SERVICES)
        lines.append(
            f'  File "/srv/app/{mod}/handler_{rng.randrange(50)}.py", line {rng.randrange(900)},'
            f" in process_{depth}"
        )
    retries, code = rng.randrange(1, 9), rng.randrange(900)
    lines.append(f"{exc}: request failed after {retries} retries (code {code})")
    return lines


def log_lines(n_lines: int, seed: int = 1, trace_share: float = 0.30) -> list[str]:
    """``n_lines`` lines of about 100 bytes each (without newlines)."""
    rng = random.Random(seed)
    pool = [_stack_trace(rng, rng.randint(5, 40)) for _ in range(200)]
    mean_trace = sum(map(len, pool)) / len(pool)
    # Probability per line of starting a trace so that ~trace_share of lines are traces.
    p_trace = trace_share / (mean_trace * (1 - trace_share) + trace_share)
    lines: list[str] = []
    sec = 0
    while len(lines) < n_lines:
        if rng.random() < p_trace:
            lines += rng.choice(pool)[: n_lines - len(lines)]
            continue
        sec += 1
        clock = f"{sec // 3600 % 24:02d}:{sec // 60 % 60:02d}:{sec % 60:02d}"
        lines.append(
            f"2026-11-22T{clock}.{len(lines) % 1000:03d}Z "
            f"INFO {rng.choice(SERVICES)} {rng.choice(ACTIONS)} "
            f"request_id={rng.getrandbits(64):016x} took {rng.randrange(1, 999)}ms status=200"
        )
    return lines


def generate(path: Path, n_lines: int, seed: int = 1, trace_share: float = 0.30) -> None:
    """Write ``n_lines`` lines of about 100 bytes each to ``path``."""
    with path.open("w") as out:
        out.writelines(line + "\n" for line in log_lines(n_lines, seed, trace_share))


def interleaved_lines(
    n_lines: int, sources: int = 4, seed: int = 1
) -> tuple[list[bytes], list[str]]:
    """The log cut into ``sources`` consecutive parts, each line prefixed with its pod
    (``[pod-N] ``, as ``kubectl logs --prefix`` writes), the parts interleaved in random
    bursts of 1-3 lines: what several pods of one service write into one merged log."""
    rng = random.Random(seed + 1)
    lines = log_lines(n_lines, seed)
    size = -(-len(lines) // sources)
    pods = [f"pod-{n + 1}" for n in range(sources)]
    parts = [lines[k * size : (k + 1) * size] for k in range(sources)]
    taken = [0] * sources
    out: list[bytes] = []
    while any(taken[k] < len(parts[k]) for k in range(sources)):
        k = rng.choice([k for k in range(sources) if taken[k] < len(parts[k])])
        burst = parts[k][taken[k] : taken[k] + rng.randint(1, 3)]
        taken[k] += len(burst)
        out += (f"[{pods[k]}] {line}".encode() for line in burst)
    return out, pods


def generate_json(path: Path, n_lines: int, seed: int = 1, trace_share: float = 0.30) -> None:
    """The same log as JSON lines (a structured logger's output): every line an object
    with its own timestamp and request id, the message as in the text log (the access
    lines' durations make them new); a stack trace is a run of objects whose ``msg``
    repeats while ``ts`` and ``trace_id`` change."""
    import json

    rng = random.Random(seed)
    pool = [_stack_trace(rng, rng.randint(5, 40)) for _ in range(200)]
    mean_trace = sum(map(len, pool)) / len(pool)
    p_trace = trace_share / (mean_trace * (1 - trace_share) + trace_share)
    written = 0
    with path.open("w") as out:
        while written < n_lines:
            sec = written // 7
            ts = f"2026-11-22T{sec // 3600 % 24:02d}:{sec // 60 % 60:02d}:{sec % 60:02d}Z"
            if rng.random() < p_trace:
                block = rng.choice(pool)[: n_lines - written]
                trace = f"{rng.getrandbits(64):016x}"
                for line in block:
                    entry = {"ts": ts, "level": "error", "trace_id": trace, "msg": line}
                    out.write(json.dumps(entry) + "\n")
                written += len(block)
                continue
            entry = {
                "ts": ts,
                "level": "info",
                "service": rng.choice(SERVICES),
                "msg": f"{rng.choice(ACTIONS)} took {rng.randrange(1, 999)}ms status=200",
                "request_id": f"{rng.getrandbits(64):016x}",
            }
            out.write(json.dumps(entry) + "\n")
            written += 1


USAGE = "usage: genlog.py OUTPUT [LINES [SEED [TRACE_SHARE [text|json|interleaved]]]]"

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):  # (never a file named --help)
        sys.exit(USAGE)
    lines = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    share = float(sys.argv[4]) if len(sys.argv) > 4 else 0.30
    kind = sys.argv[5] if len(sys.argv) > 5 else "text"
    if kind == "interleaved":  # four pods' lines, interleaved in bursts
        merged = interleaved_lines(lines, 4, seed)[0]
        Path(sys.argv[1]).write_bytes(b"".join(line + b"\n" for line in merged))
    else:
        (generate_json if kind == "json" else generate)(Path(sys.argv[1]), lines, seed, share)


def ci_log_lines(n_jobs: int = 680, seed: int = 3) -> list[str]:
    """A CI run's log: ``n_jobs`` jobs, each a few steps and, for most, the same failing
    traceback under an ``ERROR job failed`` line that differs only in its timestamp;
    one job in five hits a disk quota on its own volume (distinct errors)."""
    rng = random.Random(seed)
    trace = [
        "Traceback (most recent call last):",
        '  File "/ci/runner/job.py", line 88, in run',
        "    step.execute(workspace)",
        '  File "/ci/runner/steps.py", line 214, in execute',
        "    raise StepFailed(self.name, code)",
        "runner.steps.StepFailed: step 'test' exited with status 1",
    ]
    lines: list[str] = []
    sec = 0
    for job in range(n_jobs):
        for step in ("checkout", "restore cache", "build", "test"):
            sec += rng.randrange(1, 20)
            stamp = f"2026-11-22T{sec // 3600 % 24:02d}:{sec // 60 % 60:02d}:{sec % 60:02d}Z"
            lines.append(f"{stamp} INFO job {job} step {step} started on runner-{job % 12}")
        if job % 5 == 0:
            lines.append(f"{stamp} ERROR disk quota exceeded on vol-{job // 5} (job {job})")
        if rng.random() < 0.9:
            lines.append(f"{stamp} ERROR job failed")
            lines += trace
        else:
            lines.append(f"{stamp} INFO job {job} passed in {rng.randrange(30, 900)}s")
    return lines
