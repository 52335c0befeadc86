"""``seqdedup-dask``: the Dask engine from the command line (see :mod:`seqdedup.dask.job`).

Same option names as ``seqdedup`` where they apply; one output file per input file in
``--output-dir``; statistics per file and for the whole set on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence
from typing import TextIO

from seqdedup.base.errors import UsageError, exit_status
from seqdedup.base.stopping import stop_on_termination_signals
from seqdedup.cli.arguments import interpret
from seqdedup.cli.options import build_parser, check_refused

PROG = "seqdedup-dask"
MIN_BLOCK_SIZE = 1 << 20

_NOT_HERE = {
    "hash_transform": "--hash-transform",
    "transform_timeout": "--transform-timeout",
    "annotate": "--annotate",
    "annotation_format": "--annotation-format",
    "explain": "--explain",
    "progress": "--progress",
    "top": "--top",
    "max_history": "--max-history",
    "unlimited_history": "--unlimited-history",
    "show_keys": "--show-keys",
    "max_candidates": "--max-candidates",
    "unlimited_candidates": "--unlimited-candidates",
    "max_unique_sequences": "--max-unique-sequences",
    "unlimited_unique_sequences": "--unlimited-unique-sequences",
    "budget": "--budget",
    "output": "--output",
    "report": "--report",
    "keep": "--keep",
    "keep_removed": "--keep-removed",
    "max_input": "--max-input",
    "fold": "--fold",
    "fold_format": "--fold-format",
    "fold_every": "--fold-every",
    "fold_idle": "--fold-idle",
    "stream_by": "--stream-by",
    "stream_by_json": "--stream-by-json",
    "stream_idle": "--stream-idle",
    "max_streams": "--max-streams",
    "per_stream": "--per-stream",
    "color": "--color",
    "follow": "--follow",
    "from_start": "--from-start",
    "suggest_window": "--suggest-window",
    "sample": "--sample",
}


def _cluster_options(parser: argparse.ArgumentParser) -> None:
    """What only seqdedup-dask has: where outputs go, which scheduler, partitions."""
    cluster = parser.add_argument_group("cluster")
    cluster.add_argument(
        "--output-dir",
        required=True,
        metavar="DIR",
        help="where each input file's output goes, under the same name",
    )
    cluster.add_argument(
        "--scheduler",
        default="local",
        metavar="local|sync|ADDRESS",
        help="a local 2-worker cluster (default), the synchronous "
        "scheduler, or a running scheduler's address",
    )
    cluster.add_argument(
        "--connect-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how long a scheduler given by address has to answer (default 10)",
    )
    cluster.add_argument(
        "--block-size",
        type=int,
        default=64 << 20,
        metavar="BYTES",
        help="partition size (default 64 MiB)",
    )


def cluster_parser() -> argparse.ArgumentParser:
    """``seqdedup-dask``'s parser (its man page is drawn from it too)."""
    parser = build_parser(PROG, many_inputs=True, refused=_NOT_HERE)
    _cluster_options(parser)
    return parser


def main(argv: Sequence[str] | None = None, stderr: TextIO | None = None) -> int:
    err = stderr if stderr is not None else sys.stderr
    parser = cluster_parser()
    if argv is None:
        from seqdedup.cli.completion import answer

        answer(parser)

    def body() -> int:
        args = parser.parse_args(argv)
        check_refused(parser, args, _NOT_HERE)
        if args.block_size < MIN_BLOCK_SIZE:
            # (Tiny partitions make a job's planning and overlaps grow faster than its
            # input: 1,000 lines in bytes-long partitions never finished.)
            raise UsageError(f"--block-size must be at least {MIN_BLOCK_SIZE:,} bytes (1 MiB)")
        if not 0 < args.connect_timeout < float("inf"):
            raise UsageError("--connect-timeout must be a number of seconds above 0")
        config, settings = interpret(args)
        from seqdedup.dask.job import deduplicate_files

        stats = deduplicate_files(
            args.input_files,
            args.output_dir,
            config,
            scheduler=args.scheduler,
            block_size=args.block_size,
            connect_timeout=args.connect_timeout,
            decompress=settings.decompress,
        )
        if not settings.quiet:
            _write_stats(stats, settings.stats_format, err)
        return 0

    return exit_status(PROG, body, err)


def _write_stats(stats: object, fmt: str, stream: TextIO) -> None:
    from seqdedup.dask.job import JobStats

    assert isinstance(stats, JobStats)
    rows = [(f.path, f.total, f.emitted, f.skipped, f.redundancy_pct) for f in stats.files]
    total = stats.total
    redundancy = 100.0 * stats.skipped / total if total else 0.0
    if fmt == "json":
        import json

        document = {
            "statistics": {
                "lines": {"total": total, "emitted": stats.emitted, "skipped": stats.skipped},
                "redundancy_pct": round(redundancy, 1),
                "library": {"loaded": stats.library_loaded, "saved": stats.library_saved},
                "files": [
                    {
                        "path": path,
                        "lines": {"total": t, "emitted": e, "skipped": s},
                        "redundancy_pct": round(r, 1),
                    }
                    for path, t, e, s, r in rows
                ],
            }
        }
        stream.write(json.dumps(document, indent=2) + "\n")
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Deduplication statistics")
    for name in ("File", "Total lines", "Emitted", "Skipped", "Redundancy"):
        table.add_column(name, justify="left" if name == "File" else "right")
    for path, t, e, s, r in rows:
        table.add_row(path, f"{t:,}", f"{e:,}", f"{s:,}", f"{r:.1f}%")
    table.add_row(
        "all files",
        f"{total:,}",
        f"{stats.emitted:,}",
        f"{stats.skipped:,}",
        f"{redundancy:.1f}%",
        style="bold",
    )
    Console(file=stream, highlight=False).print(table)


def entry_point() -> None:
    stop_on_termination_signals()
    status = main()
    from seqdedup.base.errors import Terminated
    from seqdedup.dask.scheduler import end_helper_processes

    with contextlib.suppress(KeyboardInterrupt, Terminated):  # (its status stands)
        end_helper_processes()  # (after a job that succeeded, failed or was stopped)
    sys.exit(status)
