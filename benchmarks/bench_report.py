"""Benchmark of --report: what gathering the page's data costs beside the same run with
the statistics and --top 20, and what writing the page costs (time and size), on the
generated 1,000,000-line log and on real text (the machine's man pages and standard
library, 1,000,000 lines each, as bench.py builds them).

    python benchmarks/bench_report.py [--lines N] [--runs K]

Both runs are in this process, interleaved, CPU time (time.process_time), medians of K:
the run is `-w 10 --top 20` with the statistics' sequence count (what the CLI does
without -q) on a named file (unlimited history). "gathering" is the run with the
page's picture fed, before the page is written; "page" is writing it (the Vega bundle
read from the user's cache, as every page after the first does).
"""

from __future__ import annotations

import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import arguments, build  # type: ignore[import-not-found]
from seqdedup.api import Deduplicator, feed_inputs
from seqdedup.config.settings import Config
from seqdedup.page.html import ReportPage, vega_script


def one_run(path: Path, config: Config, page_path: Path | None) -> tuple[float, float, float, int]:
    """CPU of the run (with the picture when ``page_path``); CPU, wall time and size of
    writing the page."""
    page = ReportPage(str(page_path), config) if page_path is not None else None
    dedup = Deduplicator(config) if page is None else page.run(None)
    sink = io.BytesIO()
    tap = page.picture if page is not None else None
    start = time.process_time()
    with path.open("rb") as source:
        stats = feed_inputs(dedup, [source], sink, None, False, tap)
    ran = time.process_time() - start
    if page is None:
        return ran, 0.0, 0.0, 0
    start, wall = time.process_time(), time.perf_counter()
    size = page.write(stats, len(sink.getvalue()))
    return ran, time.process_time() - start, time.perf_counter() - wall, size


def measure(name: str, path: Path, runs: int) -> None:
    config = Config(window_size=10, top=20, max_history=None, inputs=(str(path),))
    base, gathered, written, walls, sizes = [], [], [], [], []
    with tempfile.TemporaryDirectory() as folder:
        page_path = Path(folder) / "run.html"
        for _ in range(runs):
            base.append(one_run(path, config, None)[0])
            ran, page_cpu, page_wall, size = one_run(path, config, page_path)
            gathered.append(ran)
            written.append(page_cpu)
            walls.append(page_wall)
            sizes.append(size)
    b, g = statistics.median(base), statistics.median(gathered)
    print(
        f"{name:40} {b:8.2f} {g:10.2f} {g / b:7.2f}x {statistics.median(written):9.2f} "
        f"{statistics.median(walls):9.2f} {max(sizes) / 1e6:8.2f}"
    )


def main() -> None:
    args = arguments(__doc__)
    vega_script()  # (the first page bundles Vega once; the cache serves the rest)
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        corpora = build(work, args.lines)
        heads = ("run CPU", 8), ("+picture", 10), ("ratio", 8), ("page CPU", 9), ("page s", 9)
        heads += (("page MB", 8),)
        print(f"{'corpus':40}" + "".join(f" {head:>{width}}" for head, width in heads))
        for name, path in corpora:
            measure(name, path, args.runs)


if __name__ == "__main__":
    main()
