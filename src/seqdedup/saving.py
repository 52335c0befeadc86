"""What a run saves into its library (README: The library; docs/design.md, section 5).

New material (records covered by windows seen for the first time) is staged as
stretches; each repeated piece is staged with its content, unless the library saved to
holds it already. With other libraries loaded too, duplicate runs are staged whole, so
that the library saved to stands on its own.
"""

from __future__ import annotations

import sys
from bisect import bisect_right
from pathlib import Path
from typing import TYPE_CHECKING

from seqdedup.attribution import Piece, PieceContent
from seqdedup.library import LibraryWriter, Stretches

if TYPE_CHECKING:
    from seqdedup.library import LoadedLibrary

MAX_BUFFERED_PIECE = 200_000  # skipped records held for saving one repeated piece
STRETCH_CHUNK = 16_384  # new material is staged at least this often (records)


class RunSaver:
    """Stage what a run observes, batch by batch; :meth:`commit` lands it."""

    def __init__(
        self,
        directory: Path,
        window_size: int,
        library: LoadedLibrary | None,
        whole_runs: bool,
    ) -> None:
        self._writer = LibraryWriter(directory)
        self._library = library
        self._new = Stretches(self._writer, "new", window_size, STRETCH_CHUNK)
        self._whole_runs = (
            Stretches(self._writer, "repeat", window_size, STRETCH_CHUNK) if whole_runs else None
        )
        self._waiting = PieceContent(MAX_BUFFERED_PIECE)  # records awaiting their piece
        self._held_spans: list[tuple[int, int]] = []  # records held pieces covered
        self._stream_start = 0  # the current input stream's first tracked record

    def new_stream(self, first: int) -> None:
        """A new input stream starts at tracked record ``first``: nothing saved spans
        the boundary (it would make windows that never occurred)."""
        for stretches in (self._new, self._whole_runs):
            if stretches is not None:
                stretches.end()
        self._stream_start = first

    def observe(
        self,
        tracked: list[bytes],
        keep: list[bool],
        new_material: list[bool],
        first: int,
        pieces: list[Piece],
    ) -> None:
        """Take the next decided tracked records (the first is tracked record
        ``first``), which of them first-seen windows cover, and the pieces closed."""
        self._new.add(tracked, new_material, True)
        if self._whole_runs is not None:
            # A window across two pieces may repeat another library: keep runs whole.
            self._whole_runs.add(tracked, keep, False)
        waiting = self._waiting
        if self._whole_runs is None:
            waiting.add(first, tracked, keep)
        for piece in pieces:
            content = waiting.take(piece)
            if self._library is not None and self._held(piece):
                continue  # the library holds it already: counted, not saved
            if self._whole_runs is None and content is not None:
                self._writer.add(content, "repeat")
        # A huge run: its content is saved as new material where it first occurred.
        waiting.trim()

    def _held(self, piece: Piece) -> bool:
        """Whether the library saved to holds the piece already: it repeats a held
        library sequence (that sequence's count goes up), or it repeats records of this
        run that held pieces covered. (Their windows are library windows, or windows
        across two pieces, which this run saves as new material or finds elsewhere.)"""
        spans = self._held_spans
        held = False
        if piece.source_start < 0:
            assert self._library is not None
            digest = self._library.held_digest(piece.source_start)
            if digest is not None:
                if digest:
                    self._writer.seen(digest)
                held = True
        elif spans:
            at = bisect_right(spans, (piece.source_start, sys.maxsize)) - 1
            # (A source overlapping the piece repeats itself: its part before the piece
            # is what must be held.)
            end = min(piece.source_end, piece.start - 1)
            held = at >= 0 and spans[at][0] <= piece.source_start and end <= spans[at][1]
        if held:
            if spans and spans[-1][1] + 1 >= piece.start and spans[-1][1] >= self._stream_start:
                spans[-1] = (spans[-1][0], piece.end)
            else:
                spans.append((piece.start, piece.end))
        return held

    def commit(self, config: dict[str, object], statistics: dict[str, object]) -> int:
        """Stage the open stretches and land everything; return the sequences saved."""
        try:
            for stretches in (self._new, self._whole_runs):
                if stretches is not None:
                    stretches.end()
        except BaseException:
            self._writer.discard()  # nothing is left behind by a failed save
            raise
        return self._writer.commit(config, statistics)

    def discard(self) -> None:
        """Save nothing (a failed or interrupted run)."""
        self._writer.discard()
