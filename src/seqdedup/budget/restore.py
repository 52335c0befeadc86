"""``seqdedup-expand`` with no store: a reduced text restored from itself, where every
marker in it repeats lines the text shows, byte for byte (``a repeat of lines 1-3, byte
for byte``, ``12 copies of lines 5-6, byte for byte``). Only a text whose first line
vouches for it (see :mod:`seqdedup.budget.removed`) has markers: below that line, the notes are
dropped, each marker is rebuilt and checked against its reference (the first hex digits
of the BLAKE2b digest of its exact bytes), and escaped input lines are unescaped. A text
without that line is an input that fit as it stood, given back unchanged; if it holds a
line that reads as a marker it is refused instead (a reduction of another version, or a
forged line), never restored as other bytes. Every marker that is not a copy needs the
store (``--from``). Lines end with a line feed, as ``--budget``'s default delimiter
writes them.
"""

from __future__ import annotations

import re

from seqdedup.base.errors import SeqdedupError
from seqdedup.budget.removed import ESCAPE, PREFIX, digest_of, unescaped, vouched_body

_LINES = rb"lines? (\d+)(?:-(\d+))?"
# a marker that repeats lines shown, byte for byte; its time span or values may follow
_COPY = re.compile(
    rb"\[sd:([0-9a-f]{7,32}):? " + _LINES + rb"(?: \(\d+ lines\))?: "
    rb"(?:a repeat of " + _LINES + rb"|\d+ (?:copies of|like) " + _LINES + rb"(?: and \d+ of its"
    rb" lines)?), byte for byte(?:; [^\]]*)?\]"
)
_MARKER = re.compile(rb"\[sd:[0-9a-f]{7,32}:? lines? \d+")


def restore_text(reduced: bytes) -> bytes:
    """The original input of a reduced text whose markers all repeat lines it shows,
    byte for byte (see the module); a SeqdedupError naming the first marker that needs
    the store, or that does not match its reference."""
    body = vouched_body(reduced, b"\n")
    if body is None:
        forged = next(
            (n for n, line in enumerate(reduced.split(b"\n")) if _MARKER.match(line)), None
        )
        if forged is not None:
            raise SeqdedupError(
                f"line {forged + 1} reads as a marker, but the text does not start with the "
                "line seqdedup --budget writes to vouch for its markers: nothing restored"
            )
        return reduced
    lines = body.split(b"\n")
    ends_delimited = lines[-1] == b""
    if ends_delimited:
        lines.pop()
    original: list[bytes] = []  # the input's lines (1-based: original[n - 1])
    last_line = len(lines) - 1
    for number, line in enumerate(lines):
        if line.startswith(b"[seqdedup"):  # a note (an input line would be escaped)
            continue
        if not line.startswith(b"[sd:") or line.startswith(ESCAPE):
            original.append(line)
            continue
        copy = _COPY.fullmatch(line)
        if copy is None:
            raise SeqdedupError(
                f"line {number + 2} of the reduced text ({line[:24].decode(errors='replace')}"
                "...) needs the store its reduction wrote: give --from FILE"
            )
        stretch = _rebuilt(copy, original, number + 2)
        # (the input's last line may have had no line feed: its digest tells)
        whole = b"".join(r + b"\n" for r in stretch)
        reference = copy.group(1).decode()
        if number == last_line and not digest_of(whole).startswith(reference):
            whole = whole[:-1]
            ends_delimited = False
        if not digest_of(whole).startswith(reference):
            raise SeqdedupError(
                f"line {number + 2} of the reduced text: the lines rebuilt for {PREFIX}"
                f"{reference} do not match it (the text was changed): nothing restored"
            )
        original += stretch
    text = b"\n".join(original)
    return unescaped(text + b"\n" if original and ends_delimited else text, b"\n")


def _rebuilt(copy: re.Match[bytes], original: list[bytes], number: int) -> list[bytes]:
    """The lines a copy marker stands for, from the lines restored before it."""
    first = int(copy.group(2))
    last = int(copy.group(3) or first)
    source = int(copy.group(4) or copy.group(6))
    source_last = int(copy.group(5) or copy.group(7) or source)
    if first != len(original) + 1 or last < first or not 1 <= source <= source_last < first:
        raise SeqdedupError(
            f"line {number} of the reduced text: its marker does not follow the lines "
            "before it (the text was changed): nothing restored"
        )
    period = source_last - source + 1
    block = original[source - 1 : source_last]
    return [block[k % period] for k in range(last - first + 1)]
