"""Reduced text back to the original (``seqdedup-expand``): each marker of a reduced
text replaced by the exact bytes it stands for, read from the ``--keep-removed`` store.

The store knows each reduced text by its digest and where its markers stand, so a
reduced text that was changed is refused, and a line of the input that merely looks
like a marker is never taken for one.
"""

from __future__ import annotations

from collections.abc import Iterator

from seqdedup.errors import SeqdedupError
from seqdedup.removed import RemovedStore


def restore(reduced: bytes, store: RemovedStore) -> bytes:
    """The original input of a reduced text, byte for byte."""
    return b"".join(restored_pieces(reduced, store))


def restored_pieces(reduced: bytes, store: RemovedStore) -> Iterator[bytes]:
    """The original input of a reduced text in pieces, in order (written as they come,
    nothing is joined)."""
    known = store.reduction(reduced)
    if known is None:
        raise SeqdedupError(
            f"the reduced text is not one the store '{store.path}' knows (changed after "
            "the reduction, or reduced with another --keep-removed file)"
        )
    delimiter, markers = known
    line = position = taken = 0
    while position < len(reduced):
        found = reduced.find(delimiter, position)
        stop = len(reduced) if found < 0 else found + len(delimiter)
        if line in markers:
            if taken < position:  # (the unmarked lines before it, as one piece)
                yield reduced[taken:position]
            digest = markers[line]
            if digest is not None:  # (None: the note of a budget not met)
                yield store.data(digest)
            taken = stop
        position = stop
        line += 1
    if taken < len(reduced):
        yield reduced[taken:]


def line_range(original: bytes, delimiter: bytes, first: int, last: int) -> bytes:
    """Lines ``first`` .. ``last`` (1-based, inclusive) of the original, each with its
    delimiter as it stands there."""
    out: list[bytes] = []
    position, line = 0, 1
    while position < len(original) and line <= last:
        found = original.find(delimiter, position)
        stop = len(original) if found < 0 else found + len(delimiter)
        if line >= first:
            out.append(original[position:stop])
        position = stop
        line += 1
    return b"".join(out)
