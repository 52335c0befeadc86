"""``--progress``: one line on standard error, redrawn at most ten times a second, with
the bytes read (and the percent done, when the inputs' size is known) and the records
kept and skipped so far (rich's progress display, imported only when it is shown)."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from seqdedup.run.stats import Stats


def progress_wanted(stdout_fd: int, stderr: TextIO) -> bool:
    """A live progress line only on a terminal, and never when stdout is a pipe."""
    import os
    import stat

    try:
        piped = stat.S_ISFIFO(os.fstat(stdout_fd).st_mode)
        return stderr.isatty() and not piped
    except (OSError, ValueError):
        return False


class ProgressLine:
    """Records read, rate, redundancy and (for a file) percent done, on stderr.

    Transient: the line is removed when the run ends, before the statistics.
    """

    def __init__(self, stream: TextIO, total_bytes: int | None) -> None:
        import time

        from rich.console import Console
        from rich.progress import BarColumn, Progress, ProgressColumn, TextColumn

        self._clock = time.monotonic
        self._started = self._clock()
        columns: list[ProgressColumn] = [
            TextColumn("{task.fields[records]:>12,} records"),
            TextColumn("{task.fields[rate]:>10,.0f}/s"),
            TextColumn("redundancy {task.fields[redundancy]:5.1f}%"),
        ]
        if total_bytes:
            columns += [BarColumn(), TextColumn("{task.percentage:>3.0f}%")]
        self._progress = Progress(
            *columns, console=Console(file=stream), transient=True, auto_refresh=False
        )
        self._task = self._progress.add_task(
            "seqdedup", total=total_bytes or None, records=0, rate=0.0, redundancy=0.0
        )
        self._last_refresh = 0.0

    def __enter__(self) -> ProgressLine:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def update(self, bytes_read: int, stats: Stats) -> None:
        now = self._clock()
        if now - self._last_refresh < 0.1:  # at most ten redraws a second
            return
        self._last_refresh = now
        elapsed = max(now - self._started, 1e-9)
        self._progress.update(
            self._task,
            completed=bytes_read,
            records=stats.total,
            rate=stats.total / elapsed,
            redundancy=stats.redundancy_pct,
        )
        self._progress.refresh()
