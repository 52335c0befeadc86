"""The Dask engine against the sequential command on the same set of files.

Generates (once, cached) FILES logs of LINES lines each (see genlog.py), then:
- sequential: `seqdedup -q -w 10 --library-dir L FILE` over each file in turn;
- Dask: `deduplicate_files` on a LocalCluster of 2 worker processes (1 thread each).
Prints wall time of both, peak RSS per worker, bytes workers sent each other (per
record), and checks that the outputs are identical.

    python benchmarks/bench_dask.py --files 8 --lines 1000000
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GENLOG = Path(__file__).with_name("genlog.py")


def _bytes_moved(dask_worker: object) -> float:
    """Bytes a worker served to others (task data) plus what its p2p shuffles sent."""
    total = 0.0
    for key, value in dask_worker.digests_total.items():  # type: ignore[attr-defined]
        if not isinstance(key, tuple) or key[-1] != "bytes":
            continue
        if key[:2] == ("get-data", "memory-read") or (
            key[0] == "p2p" and key[2:4] == ("background-comms", "process")
        ):
            total += value
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--block-size", type=int, default=64 << 20)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()))
    args = parser.parse_args()
    from distributed import Client, LocalCluster

    from seqdedup.cluster import deduplicate_files

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

    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        started = time.perf_counter()
        stats = deduplicate_files(
            paths,
            work / "dask",
            scheduler=cluster.scheduler_address,
            block_size=args.block_size,
            window_size=10,
            library_dir=work / "dask-lib",
        )
        distributed_time = time.perf_counter() - started
        peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        sent = client.run(_bytes_moved)
    same = all(
        (seq_out / p.name).read_bytes() == (work / "dask" / p.name).read_bytes() for p in paths
    )
    total = stats.total
    print(
        f"input: {len(paths)} files x {args.lines:,} lines = {total:,} records, "
        f"{sum(p.stat().st_size for p in paths) / 1e6:.0f} MB"
    )
    print(
        f"sequential seqdedup --library-dir, file by file: {sequential:.1f} s "
        f"({total / sequential:,.0f} records/s), peak {seq_peak:.0f} MB"
    )
    print(
        f"Dask, LocalCluster 2 workers x 1 thread: {distributed_time:.1f} s "
        f"({total / distributed_time:,.0f} records/s)"
    )
    print("peak RSS per worker: " + ", ".join(f"{v:.0f} MB" for v in peaks.values()))
    moved = sum(sent.values())
    print(
        f"bytes moved (Dask's metrics: data served by workers + p2p shuffle comms): "
        f"{moved / 1e6:.0f} MB = {moved / total:.1f} bytes/record"
    )
    print(f"skipped {stats.skipped:,} of {total:,}; outputs identical to sequential: {same}")
    shutil.rmtree(work)
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
