"""The Dask engine against one seqdedup process on the same set of files.

Generates (once, cached) FILES logs of LINES lines each (see genlog.py), then:
- one process: `seqdedup -q -w 10 FILE... > OUT` (all files, one run, the output
  written to a file as the Dask engine's are), without and with `--library-dir L`;
- sequential: the same over each file in turn (what the Dask engine's output equals);
- Dask: `deduplicate_files` on a LocalCluster of 2 worker processes (1 thread each),
  the cluster already up, without (REPEAT times: the median, and the first job on
  freshly started workers apart) and with a library saved: job time, CPU seconds
  (workers + client), peak RSS per worker, bytes workers sent each other and bytes
  spilled to disk;
- stages: the three steps of a job run in this process, one task after another, on
  the same files: nanoseconds per record of each, rows and answers per record.
Checks that the Dask outputs equal the sequential ones.

    python benchmarks/bench_dask.py --files 8 --lines 1000000
"""

from __future__ import annotations

import argparse
import logging
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

GENLOG = Path(__file__).with_name("genlog.py")


def _bytes_moved(dask_worker: Any) -> float:
    """Bytes a worker served to others (task data) plus what its p2p shuffles sent."""
    total = 0.0
    for key, value in dask_worker.digests_total.items():
        if not isinstance(key, tuple) or key[-1] != "bytes":
            continue
        if key[:2] == ("get-data", "memory-read") or (
            key[0] == "p2p" and key[2:4] == ("background-comms", "process")
        ):
            total += value
    return total


def _spilled(dask_worker: Any) -> float:
    """Bytes the worker spilled to disk."""
    spilled = getattr(dask_worker.data, "spilled_total", None)
    return float(getattr(spilled, "disk", 0) or 0)


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_process(
    script: Path, paths: list[Path], library: Path | None, output: Path
) -> tuple[float, float]:
    """Wall and CPU seconds of one seqdedup process over every file, its output written
    to a file (as the Dask engine writes its outputs)."""
    saving = ["--library-dir", str(library)] if library is not None else []
    cpu, started = _children_cpu(), time.perf_counter()
    with open(output, "wb") as sink:
        subprocess.run(
            [str(script), "-q", "-w", "10", *saving, *map(str, paths)], stdout=sink, check=True
        )
    return time.perf_counter() - started, _children_cpu() - cpu


def dask_job(
    client: Any, address: str, paths: list[Path], out: Path, library: Path | None, block_size: int
) -> dict[str, Any]:
    """One job on the running cluster: wall and CPU seconds (workers, client), stats."""
    from seqdedup.dask.job import deduplicate_files

    workers = sum(client.run(_cpu_seconds).values())
    moved = sum(client.run(_bytes_moved).values())
    mine, started = _cpu_seconds(), time.perf_counter()
    stats = deduplicate_files(
        paths, out, scheduler=address, block_size=block_size, window_size=10, library_dir=library
    )
    wall = time.perf_counter() - started
    client_cpu = _cpu_seconds() - mine
    return {
        "wall": wall,
        "client": client_cpu,
        "workers": sum(client.run(_cpu_seconds).values()) - workers,
        "moved": sum(client.run(_bytes_moved).values()) - moved,
        "stats": stats,
    }


def median_job(jobs: list[dict[str, Any]]) -> dict[str, Any]:
    """The job of median wall time (its CPU and bytes with it)."""
    return sorted(jobs, key=lambda job: job["wall"])[len(jobs) // 2]


def stages(paths: list[Path], block_size: int, work: Path) -> dict[str, float]:
    """The job's three steps in this process, timed apart (seconds), with counts."""
    from seqdedup.config.settings import Config
    from seqdedup.dask.job import _reader, owner_count, plan_parts
    from seqdedup.dask.partitions import first_pass, owner_answers, second_pass, write_part

    config = Config(max_history=None, window_size=10)
    reader = _reader(config)
    parts = plan_parts([str(p) for p in paths], config.delimiter, block_size)
    owners = owner_count(sum(p.end - p.start for p in parts), len(parts))
    out = work / "stages"
    out.mkdir()
    started = time.perf_counter()
    firsts = [first_pass(reader, part, 10, owners) for part in parts]
    first = time.perf_counter() - started
    started = time.perf_counter()
    answers = [
        owner_answers(reader.engine, [rows[b] for _, rows in firsts], b"") for b in range(owners)
    ]
    owner = time.perf_counter() - started
    started = time.perf_counter()
    records = 0
    for part, (state, _) in zip(parts, firsts, strict=True):
        mine = [answers[b][part.number] for b in range(owners)]
        written = second_pass(reader, part, state, mine, 10, False, None)
        (out / "p").touch()
        write_part(reader, part, written, str(out / "p"), 0)
        records += written.records
    second = time.perf_counter() - started
    rows = sum(len(bucket) for _, buckets in firsts for bucket in buckets) // 24
    replies = sum(len(a) for answer in answers for a in answer) // 16
    return {
        "records": records,
        "first": first,
        "owner": owner,
        "second": second,
        "rows": rows,
        "replies": replies,
        "parts": len(parts),
        "owners": owners,
    }


def _job_line(job: dict[str, Any], total: int, one_wall: float, one_cpu: float) -> str:
    """A Dask job's figures beside one process's."""
    cpu = job["workers"] + job["client"]
    return (
        f"LocalCluster 2 workers x 1 thread (up): {job['wall']:.2f} s "
        f"({total / job['wall']:,.0f} records/s, {job['wall'] / one_wall:.2f}x one process), "
        f"{cpu:.2f} s CPU (workers {job['workers']:.2f}, client {job['client']:.2f}; "
        f"{cpu / total * 1e9:.0f} ns/record, {cpu / one_cpu:.2f}x one process)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--block-size", type=int, default=64 << 20)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument(
        "--malloc-trim",
        action="store_true",
        help="workers with Dask's default MALLOC_TRIM_THRESHOLD_=65536 (seqdedup-dask's "
        "own local cluster starts them without)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="runs without a library, each way (the median is reported; the Dask job's "
        "first, on freshly started workers, also apart)",
    )
    args = parser.parse_args()
    from distributed import Client, LocalCluster

    inputs = args.workdir / f"seqdedup-dask-bench-{args.files}x{args.lines}"
    inputs.mkdir(exist_ok=True)
    paths = []
    for k in range(args.files):
        path = inputs / f"app-{k}.log"
        if not path.exists():
            subprocess.run(
                [sys.executable, str(GENLOG), str(path), str(args.lines), str(k + 10)], check=True
            )
        paths.append(path)
    work = Path(tempfile.mkdtemp(prefix="seqdedup-dask-bench-"))
    script = Path(sys.executable).parent / "seqdedup"
    plains = [one_process(script, paths, None, work / "one.out") for _ in range(args.repeat)]
    plain = sorted(plains)[len(plains) // 2]  # (median wall, its CPU)
    saving = one_process(script, paths, work / "one-lib", work / "one-lib.out")
    seq_out = work / "sequential"
    seq_out.mkdir()
    started = time.perf_counter()
    for path in paths:
        with open(seq_out / path.name, "wb") as out:
            subprocess.run(
                [str(script), "-q", "-w", "10", "--library-dir", str(work / "seq-lib"), str(path)],
                stdout=out,
                check=True,
            )
    sequential = time.perf_counter() - started
    seq_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    import dask

    from seqdedup.dask.scheduler import local_worker_environ

    trimmed = args.malloc_trim  # Dask's default worker environment, or the local one's
    with (
        dask.config.set({} if trimmed else local_worker_environ()),
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.CRITICAL,  # (closing the cluster is no news)
        ) as cluster,
        Client(cluster) as client,
    ):
        address = cluster.scheduler_address
        plain_jobs = []
        for k in range(args.repeat):
            plain_jobs.append(
                dask_job(client, address, paths, work / f"d{k}", None, args.block_size)
            )
            if k:  # (the first run's output is kept for the comparison below)
                shutil.rmtree(work / f"d{k}")
        jobs = {
            "no library": median_job(plain_jobs),
            "--library-dir": dask_job(
                client, address, paths, work / "dask", work / "dask-lib", args.block_size
            ),
        }
        peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        spilled = client.run(_spilled)
    same = all(
        (seq_out / p.name).read_bytes() == (work / "dask" / p.name).read_bytes()
        and (work / "d0" / p.name).read_bytes() == (work / "dask" / p.name).read_bytes()
        for p in paths
    )
    stats = jobs["--library-dir"]["stats"]
    total = stats.total
    steps = stages(paths, args.block_size, work)
    print(
        f"input: {len(paths)} files x {args.lines:,} lines = {total:,} records, "
        f"{sum(p.stat().st_size for p in paths) / 1e6:.0f} MB"
    )
    print(
        f"sequential seqdedup --library-dir, file by file: {sequential:.1f} s "
        f"({total / sequential:,.0f} records/s), peak {seq_peak:.0f} MB"
    )
    runs = {"no library": f" (median of {args.repeat})", "--library-dir": ""}
    for (name, job), (one_wall, one_cpu) in zip(jobs.items(), (plain, saving), strict=True):
        print(
            f"{name}: one seqdedup process, all files{runs[name]}: {one_wall:.2f} s "
            f"({total / one_wall:,.0f} records/s), {one_cpu:.2f} s CPU "
            f"({one_cpu / total * 1e9:.0f} ns/record)"
        )
        print(f"{name}: Dask{runs[name]}: " + _job_line(job, total, one_wall, one_cpu))
        if name == "no library":
            first = plain_jobs[0]
            print("no library: Dask, first job: " + _job_line(first, total, one_wall, one_cpu))
            walls = ", ".join(f"{j['wall']:.2f}" for j in plain_jobs)
            cpus = ", ".join(f"{j['workers'] + j['client']:.2f}" for j in plain_jobs)
            print(f"no library: Dask, every job in order: {walls} s; CPU {cpus} s")
    print("peak RSS per worker: " + ", ".join(f"{v:.0f} MB" for v in peaks.values()))
    print(
        "bytes moved per job (Dask's metrics: data served by workers + p2p shuffle comms): "
        + ", ".join(f"{name} {job['moved'] / total:.1f}" for name, job in jobs.items())
        + f" bytes/record; spilled to disk: {sum(spilled.values()) / 1e6:.0f} MB"
    )
    n = steps["records"]
    print(
        f"stages in one process ({steps['parts']} partitions, {steps['owners']} owners): "
        f"first pass {steps['first'] / n * 1e9:.0f} ns/record, owners "
        f"{steps['owner'] / n * 1e9:.0f} ns/record ({steps['rows'] / n:.2f} rows/record, "
        f"{steps['owner'] / max(1, steps['rows']) * 1e9:.0f} ns/row), second pass "
        f"{steps['second'] / n * 1e9:.0f} ns/record; answers for "
        f"{steps['replies'] / n:.2%} of records"
    )
    print(f"skipped {stats.skipped:,} of {total:,}; outputs identical to sequential: {same}")
    shutil.rmtree(work)
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
