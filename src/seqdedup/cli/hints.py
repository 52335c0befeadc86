"""What a run may have missed: the hint after a run that removed almost nothing, and
the warning about a JSON path that matches nothing.

A first run on a real log often finds nothing because every line carries its own
timestamp (or request id, or counter). When the statistics table is shown and the run
removed under 5% of its records, :class:`InputHead` has kept the start of the input,
and :func:`normalization_hint` runs the same rule over a sample of it with a built-in
normalisation added: when that removes at least 20% more of the sample, the command
says so in one line on standard error. The sample is at most 100,000 records and at
most a 400th of the run's records (at least 1,000), so that the check costs a few
per cent of the run: the timestamp class first, then the classes of ``all`` at once,
then (only when they help) each alone to name it; when they do not, every class of a
line's kind (:mod:`seqdedup.keys.kind`: paths and quoted values too). Keys the user chose
are kept, and ``--normalize all`` is tried added to them. When no class helps, the field
in which near-identical lines differ is named with a ``--mask`` for it.
"""

from __future__ import annotations

from collections.abc import Callable

from seqdedup.config.settings import Config
from seqdedup.keys.kind import KIND_CLASSES
from seqdedup.run.stats import Stats

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
    "path": "paths",
    "quoted": "quoted values",
    # every class: what a line's kind masks, tried when "all" is not enough
    KIND_CLASSES: "timestamps, ids, numbers, paths or quoted values",
}
ALONE = ("uuid", "number", "hex", "ip")  # the classes of "all" besides timestamps, each
# tried alone to name it


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
    records = head.records(config.delimiter, sample_size(stats.total))
    if len(records) < 2:
        return None
    if config.key_steps or config.json_key or config.json_ignore or config.hash_transform:
        return _more_classes_hint(config, records)  # (the user chose the keys)
    base = _removed(config, records, "")
    varying = _varying_fields(records)
    if varying:  # JSON objects: leave out the fields that change from record to record
        share = _removed(config._replace(json_ignore=tuple(varying)), records, "")
        if share - base >= GAIN_AT_LEAST:
            options = " ".join(f"--json-ignore {name}" for name in varying)
            return (
                f"JSON records differ in their {', '.join(varying)} fields; {options} would "
                f"remove {int(share * 100)}% (seqdedup --suggest-window for more)"
            )
    share = _removed(config, records, "timestamp")
    if share - base >= GAIN_AT_LEAST:
        return _line("timestamp", share)
    if _removed(config, records, "all") - base < GAIN_AT_LEAST:
        share = _removed(config, records, KIND_CLASSES)
        if share - base >= GAIN_AT_LEAST:
            return _line(KIND_CLASSES, share)
        return _field_hint(config, records, (("normalize", "all"),), base)
    for name in ALONE:
        share = _removed(config, records, name)
        if share - base >= GAIN_AT_LEAST:
            return _line(name, share)
    return _line("all", _removed(config, records, "all"))


JSON_SHARE = 0.9  # of the sample, at least this share are JSON objects: a JSON log
VARYING_SHARE = 0.9  # a field whose values are this share distinct varies per record
VARYING_MAX = 4  # fields a hint names, at most


def _varying_fields(records: list[bytes]) -> list[str]:
    """In a JSON log, the top-level fields whose values differ from record to record
    (times, ids, counters), most distinct first; empty when the records are not JSON
    objects."""
    import json

    braced = sum(1 for record in records if record.lstrip()[:1] == b"{")
    if braced < max(2, JSON_SHARE * len(records)):  # (no JSON log: nothing parsed)
        return []
    objects = []
    for record in records:
        try:
            value = json.loads(record)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            objects.append(value)
    if len(objects) < max(2, JSON_SHARE * len(records)):
        return []
    values: dict[str, set[str]] = {}
    for value in objects:
        for name, field in value.items():
            values.setdefault(name, set()).add(json.dumps(field, sort_keys=True))
    distinct = sorted(((len(v), name) for name, v in values.items()), reverse=True)
    varying = [name for count, name in distinct if count >= VARYING_SHARE * len(objects)]
    return sorted(varying[:VARYING_MAX])


def _more_classes_hint(config: Config, records: list[bytes]) -> str | None:
    """Keys the user chose that still leave the lines apart (``-w auto --normalize
    timestamp`` on a log with request ids): the line naming ``--normalize all`` added
    to them, when that removes at least 20% more of the sample."""
    added = (*config.key_steps, ("normalize", "all"))
    base = _removed(config, records, steps=config.key_steps)
    share = _removed(config, records, steps=added)
    if share - base < GAIN_AT_LEAST:
        return _field_hint(config, records, added, base)
    return (
        "lines still differ in their ids or numbers; adding --normalize all would remove "
        f"{int(share * 100)}% (seqdedup --suggest-window for more)"
    )


def _field_hint(
    config: Config, records: list[bytes], steps: tuple[tuple[str, str], ...], base: float
) -> str | None:
    """When no class helps: the field in which the most lines of the sample differ
    while the rest of their keys (``steps`` applied) is the same, and a ``--mask`` for
    it, named when it removes at least 20% more of the sample."""
    from seqdedup.config.normalize import KeySteps
    from seqdedup.keys.fields import SEARCH, differing_field

    field = differing_field(KeySteps(steps).apply(records[:SEARCH]))
    if field is None:
        return None
    share = _removed(config, records, steps=(*steps, ("mask", field.pattern)))
    if share - base < GAIN_AT_LEAST:
        return None
    options = " ".join(_option(step) for step in (*steps, ("mask", field.pattern)))
    return (
        f"lines differ in one field ({field.shown()}, ...); {options} would remove "
        f"{int(share * 100)}% (seqdedup --suggest-window for more)"
    )


def _option(step: tuple[str, str]) -> str:
    kind, value = step
    return f"--{kind} '{value}'" if kind == "mask" else f"--{kind} {value}"


def _line(name: str, share: float) -> str:
    what = CLASSES.get(name, "timestamps, ids or numbers")
    return (
        f"lines differ only in their {what}; --normalize {name} would remove "
        f"{int(share * 100)}% (seqdedup --suggest-window for more)"
    )


def _removed(
    config: Config,
    records: list[bytes],
    normalize: str = "",
    steps: tuple[tuple[str, str], ...] | None = None,
) -> float:
    """The share of ``records`` the run's rule removes, with ``normalize`` as its keys'
    steps (or ``steps`` when given; nothing reported, nothing saved)."""
    from seqdedup.run.assembled import count_removed

    if steps is None:
        steps = (("normalize", normalize),) if normalize else ()
    return count_removed(config.quiet()._replace(key_steps=steps), records) / len(records)


JSON_CHECKED = 10_000  # records a --json-key/--json-ignore path should match one of


class JsonPathCheck:
    """``--json-key``/``--json-ignore`` paths that matched no record of the first
    JSON_CHECKED: a tap on the input (``on_chunk``) that, once it has seen them (or the
    input ended before), hands one warning per such path to ``say``. A path written
    with commas (``ts,request_id``) is one field name with commas in it: the warning
    says to give the option once per field."""

    def __init__(self, config: Config, say: Callable[[str], None]) -> None:
        from seqdedup.config.jsonkeys import parse_path

        option = "--json-key" if config.json_key else "--json-ignore"
        texts = config.json_key or config.json_ignore
        self._paths = [(text, parse_path(text, option)) for text in dict.fromkeys(texts)]
        self._option, self._delimiter, self._say = option, config.delimiter, say
        self._parts: list[bytes] = []
        self._seen = 0
        self.done = not self._paths

    def __call__(self, chunk: bytes) -> None:
        if self.done:
            return
        self._parts.append(chunk)
        self._seen += chunk.count(self._delimiter)
        if self._seen >= JSON_CHECKED:
            self.finish()

    def finish(self) -> None:
        """Check what was seen (at the end of input, when it had fewer records)."""
        if self.done:
            return
        self.done = True
        records = b"".join(self._parts).split(self._delimiter, JSON_CHECKED)[:JSON_CHECKED]
        if records and not records[-1]:
            records.pop()  # (what follows the last delimiter: no record)
        self._parts = []
        missing = _unmatched(self._paths, records)
        for text in missing:
            line = f"{self._option} '{text}' matched no field of the first {len(records):,} records"
            if "," in text:
                fields = " ".join(f"{self._option} {part}" for part in text.split(",") if part)
                line += f" (one path per option: {fields})"
            self._say(line)


def _unmatched(paths: list[tuple[str, tuple[str, ...]]], records: list[bytes]) -> list[str]:
    """The texts of the paths no JSON object among ``records`` holds."""
    import json

    from seqdedup.config.jsonkeys import path_in

    left = dict(paths)
    for record in records:
        if not left:
            break
        try:
            value = json.loads(record)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            left = {text: path for text, path in left.items() if not path_in(value, path)}
    return list(left)
