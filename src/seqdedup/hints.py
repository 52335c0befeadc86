"""What a run may have missed: the hint after a run that removed almost nothing.

A first run on a real log often finds nothing because every line carries its own
timestamp (or request id, or counter). When the statistics table is shown and the run
removed under 5% of its records, :class:`InputHead` has kept the start of the input,
and :func:`normalization_hint` runs the same rule over a sample of it with a built-in
normalisation added: when that removes at least 20% more of the sample, the command
says so in one line on standard error. The sample is at most 100,000 records and at
most a 400th of the run's records (at least 1,000), so that the check costs a few
per cent of the run: the timestamp class first, then all classes at once, then (only
when all of them help) each class alone to name it.
"""

from __future__ import annotations

from seqdedup.config import Config
from seqdedup.report import Stats

HEAD_BYTES = 16 << 20  # the start of the input kept for the check
SAMPLE_MAX = 100_000  # records of the sample, at most
SAMPLE_SHARE = 400  # and at most this fraction of the run's records (1/N) ...
SAMPLE_MIN = 1_000  # ... but at least this many
REMOVED_BELOW = 0.05  # the hint only follows a run that removed less than this share
GAIN_AT_LEAST = 0.20  # and only when a normalisation removes this much more of the sample
# The classes a hint names, most common first, and how a line says what differs
CLASSES = {
    "timestamp": "timestamps",
    "uuid": "UUIDs",
    "number": "numbers",
    "hex": "hexadecimal ids",
    "ip": "IP addresses",
}


class InputHead:
    """The first HEAD_BYTES of the input as it is decided (an ``on_chunk`` tap)."""

    def __init__(self, limit: int = HEAD_BYTES) -> None:
        self._parts: list[bytes] = []
        self._room = limit

    def __call__(self, chunk: bytes) -> None:
        if self._room > 0:
            self._parts.append(chunk[: self._room])
            self._room -= len(chunk)

    def records(self, delimiter: bytes, count: int) -> list[bytes]:
        """Its first ``count`` records (joining only the chunks that hold them)."""
        taken, seen = 0, 0
        while taken < len(self._parts) and seen < count:
            seen += self._parts[taken].count(delimiter)
            taken += 1
        head = b"".join(self._parts[:taken])
        return head.split(delimiter, count)[:count] if count else []


def sample_size(total: int) -> int:
    return min(SAMPLE_MAX, total, max(SAMPLE_MIN, total // SAMPLE_SHARE))


def normalization_hint(config: Config, stats: Stats, head: InputHead) -> str | None:
    """The line to say after this run (without the program's name), or None."""
    if not stats.total or stats.skipped >= REMOVED_BELOW * stats.total:
        return None
    if config.key_steps or config.json_key or config.json_ignore or config.hash_transform:
        return None  # (the user chose the keys)
    records = head.records(config.delimiter, sample_size(stats.total))
    if len(records) < 2:
        return None
    base = _removed(config, records, "")
    share = _removed(config, records, "timestamp")
    if share - base >= GAIN_AT_LEAST:
        return _line("timestamp", share)
    if _removed(config, records, "all") - base < GAIN_AT_LEAST:
        return None
    for name in list(CLASSES)[1:]:
        share = _removed(config, records, name)
        if share - base >= GAIN_AT_LEAST:
            return _line(name, share)
    return _line("all", _removed(config, records, "all"))


def _line(name: str, share: float) -> str:
    what = CLASSES.get(name, "timestamps, ids or numbers")
    return (
        f"lines differ only in their {what}; --normalize {name} would remove "
        f"{int(share * 100)}% (seqdedup --suggest-window for more)"
    )


def _removed(config: Config, records: list[bytes], normalize: str) -> float:
    """The share of ``records`` the run's rule removes, with ``normalize`` added to
    its keys (nothing reported, nothing saved)."""
    from seqdedup.api import Deduplicator

    steps = (("normalize", normalize),) if normalize else ()
    quiet = config._replace(
        key_steps=steps,
        inputs=("-",),
        annotate=False,
        annotation_format=None,
        explain=False,
        fold=False,
        fold_format=None,
        top=0,
        library_dir=None,
        read_sequences=(),
        sequence_stats=False,
    )
    dedup = Deduplicator(quiet)
    dedup.feed(records)
    dedup.flush()
    return dedup.stats.skipped / len(records)
