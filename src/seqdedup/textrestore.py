"""``seqdedup-expand`` with no store: a reduced text restored from itself, where every
marker in it repeats lines the text shows, byte for byte (``a repeat of lines 1-3, byte
for byte``, ``12 copies of lines 5-6, byte for byte``). Each stretch rebuilt is checked
against its reference (the first hex digits of the BLAKE2b digest of its exact bytes),
so a changed text, or a line of the input that merely looks like such a marker, is an
error, never other bytes. Every other marker needs the store (``--from``). Lines end with
a line feed, as ``--budget``'s default delimiter writes them.
"""

from __future__ import annotations

import re

from seqdedup.errors import SeqdedupError
from seqdedup.removed import PREFIX, digest_of

_LINES = rb"lines? (\d+)(?:-(\d+))?"
# a marker that repeats lines shown, byte for byte; its time span or values may follow
_COPY = re.compile(
    rb"\[sd:([0-9a-f]{12,32}): " + _LINES + rb"(?: \(\d+ lines\))?: "
    rb"(?:a repeat of " + _LINES + rb"|\d+ (?:copies of|like) " + _LINES + rb"(?: and \d+ of its"
    rb" lines)?), byte for byte(?:; [^\]]*)?\]"
)
_MARKER = re.compile(rb"\[sd:[0-9a-f]{12,32}: lines? \d+")
# the notes --budget may write first (dropped: they stand for nothing of the input)
_NOTE = re.compile(rb"\[seqdedup: (?:[\d,]+ error events; |the budget of [\d,]+ \w+ is not met)")


def restore_text(reduced: bytes) -> bytes:
    """The original input of a reduced text whose markers all repeat lines it shows,
    byte for byte (see the module); a SeqdedupError naming the first marker that needs
    the store, or that does not match its reference."""
    lines = reduced.split(b"\n")
    ends_delimited = lines[-1] == b""
    if ends_delimited:
        lines.pop()
    at = 0
    while at < min(2, len(lines)) and _NOTE.match(lines[at]):
        at += 1
    original: list[bytes] = []  # the input's lines (1-based: original[n - 1])
    last_line = len(lines) - 1
    for number, line in enumerate(lines[at:], start=at):
        copy = _COPY.fullmatch(line)
        if copy is None:
            if _MARKER.match(line):
                raise SeqdedupError(
                    f"line {number + 1} of the reduced text ({line[:24].decode(errors='replace')}"
                    "...) needs the store its reduction wrote: give --from FILE"
                )
            original.append(line)
            continue
        stretch = _rebuilt(copy, original, number + 1)
        # (the input's last line may have had no line feed: its digest tells)
        whole = b"".join(r + b"\n" for r in stretch)
        reference = copy.group(1).decode()
        if number == last_line and not digest_of(whole).startswith(reference):
            whole = whole[:-1]
            ends_delimited = False
        if not digest_of(whole).startswith(reference):
            raise SeqdedupError(
                f"line {number + 1} of the reduced text: the lines rebuilt for {PREFIX}"
                f"{reference} do not match it (the text was changed): nothing restored"
            )
        original += stretch
    text = b"\n".join(original)
    return text + b"\n" if original and ends_delimited else text


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
