"""What a log line says, as a reader quotes it: its message, without the timestamp it
starts with or the syslog header after that (``host sshd[123]: ``); fold lines and
``--budget``'s markers name a line by it."""

from __future__ import annotations

import re

from seqdedup.base.errors import visible

# A syslog header after the time: the host and the program with its pid
_SYSLOG_HEAD = re.compile(r"\S+ [\w./()-]+\[[0-9]+\]: ")


def message_of(record: bytes, first_time: str, width: int) -> str:
    """The message of ``record`` (``first_time``: the timestamp found in it, "" for
    none): runs of spaces as one, control characters escaped, at most ``width``
    characters ("..." after a cut)."""
    text = record.decode("utf-8", "replace")
    at = text.find(first_time) if first_time else -1
    if 0 <= at <= 2 and not text[:at].strip("[( "):  # (the time starts the record)
        text = text[at + len(first_time) :].lstrip(" ]|,:-\t")
        head = _SYSLOG_HEAD.match(text)
        text = text[head.end() :] if head else text
    text = visible(" ".join(text.split()))
    return text if len(text) <= width else text[: width - 3].rstrip() + "..."
