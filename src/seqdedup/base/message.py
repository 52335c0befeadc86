"""What a log line says, as a reader quotes it: its message, without the timestamp it
starts with or the syslog header after that (``host sshd[123]: ``); fold lines and
``--budget``'s markers name a line by it."""

from __future__ import annotations

import re

from seqdedup.base.errors import visible

# A syslog header after the time: the host and the program with its pid
_SYSLOG_HEAD = re.compile(r"\S+ [\w./()-]+\[[0-9]+\]: ")
# Numbers before the first word (a process and a thread id, as logcat writes them)
_LEADING_NUMBERS = re.compile(r"(?:[0-9]+ +)+(?=[^0-9 ])")


def message_of(record: bytes, first_time: str, width: int, kind: bool = False) -> str:
    """The message of ``record`` (``first_time``: the timestamp found in it, "" for
    none): runs of spaces as one, control characters escaped, at most ``width``
    characters ("..." after a cut). ``kind``: as it names a kind of line, without the
    numbers before its first word (values, which a kind does not hold)."""
    text = record.decode("utf-8", "replace")
    at = text.find(first_time) if first_time else -1
    if 0 <= at <= 2 and not text[:at].strip("[( "):  # (the time starts the record)
        text = text[at + len(first_time) :].lstrip(" ]|,:-\t")
        head = _SYSLOG_HEAD.match(text)
        text = text[head.end() :] if head else text
    if kind:
        text = text.lstrip()
        numbers = _LEADING_NUMBERS.match(text)
        text = text[numbers.end() :] if numbers else text
    text = visible(" ".join(text.split()))
    if len(text) <= width:
        return text
    cut = text[: width - 3]
    if kind and " " in cut[width // 2 :]:  # (whole words: a word cut costs more tokens)
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip() + "..."
