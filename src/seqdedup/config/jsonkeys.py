"""``--json-key`` and ``--json-ignore``: compare JSON-object records by some fields, or
by all but some.

A path is dotted (``msg``, ``error.type``); a component that is a whole number indexes
an array (``items.0.id``). Keys are canonical JSON text (object keys sorted, no spaces):

* ``--json-key P...``: an object of the given paths and their values, in the order
  given; a path the record lacks is left out (so a missing field differs from
  ``null``, and two records missing it agree);
* ``--json-ignore P...``: the whole object without those paths.

A record that is not a JSON object (invalid JSON, ``NaN`` or ``Infinity``, an array, a
number, a string) or that nests more than 200 levels deep is compared as its whole
text. The parser is ``orjson`` when installed (the ``json`` extra; about 3x faster),
else the standard library's ``json``; both give the same keys, byte for byte, so a
library saved on one machine serves another: records orjson would read differently
(integers of 19 digits or more, fractions and exponents, lone surrogates) go to the
standard library.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence

from seqdedup.base.cengine import CEngine
from seqdedup.base.errors import UsageError

Path = tuple[str, ...]


def parse_path(text: str, option: str) -> Path:
    parts = tuple(text.split("."))
    if not text or any(not part for part in parts):
        raise UsageError(f"{option}: '{text}' is not a dotted path such as msg or error.type")
    return parts


MAX_DEPTH = 200  # a record nested deeper is compared as its text, whichever the parser

# Where orjson and the standard library disagree: an integer of 19 digits or more
# (orjson reads it as a float, so distinct ids would collapse), a fraction or exponent
# (the two print some floats differently: 1e-05 / 0.00001; 1e400 is infinity to one),
# a lone surrogate escape (an error to orjson). A record with any of these, even inside
# a string, is parsed by the standard library, so both give the same keys.
_ORJSON_UNSURE = re.compile(rb"\d{19}|\d[.eE][-+]?\d|\\u[dD][89abAB]")


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")  # NaN, Infinity: invalid for both parsers


def _std_loads(record: bytes) -> object:
    return json.loads(record, parse_constant=_reject_constant)


def _std_dumps(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8", "surrogatepass"
    )


def _too_deep(record: bytes) -> bool:
    """Whether ``record`` nests objects and arrays more than MAX_DEPTH levels deep
    (brackets inside strings do not count). Cheap unless it has many brackets."""
    if record.count(b"{") + record.count(b"[") <= MAX_DEPTH:
        return False
    depth = 0
    in_string = escaped = False
    for byte in record:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x7B, 0x5B):
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif byte in (0x7D, 0x5D):
            depth -= 1
    return False


Codec = tuple[Callable[[bytes], object], Callable[[object], bytes]]  # (loads, dumps)


def _orjson_codec() -> Codec | None:
    """orjson's parser and printer, where installed."""
    try:
        import orjson
    except ImportError:
        return None
    option = orjson.OPT_SORT_KEYS
    orjson_dumps = orjson.dumps

    def dumps(value: object) -> bytes:
        return orjson_dumps(value, option=option)

    return orjson.loads, dumps


_MISSING = object()


def _get(value: object, path: Path) -> object:
    for part in path:
        if isinstance(value, dict):
            value = value.get(part, _MISSING)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
        if value is _MISSING:
            return _MISSING
    return value


def path_in(value: object, path: Path) -> bool:
    """Whether ``value`` (a parsed JSON value) holds ``path``."""
    return _get(value, path) is not _MISSING


def _drop(value: object, path: Path) -> None:
    """Remove ``path`` from ``value`` in place (nothing when it is not there)."""
    *parents, last = path
    container = _get(value, tuple(parents))
    if isinstance(container, dict):
        container.pop(last, None)
    elif isinstance(container, list) and last.isdigit() and int(last) < len(container):
        del container[int(last)]


def _plain(text: str) -> bool:
    """Text the kernel can compare and write as JSON as it is."""
    return text.isascii() and text.isprintable() and '"' not in text and "\\" not in text


def _kernel_paths(paths: list[tuple[str, Path]]) -> list[tuple[bytes, tuple[bytes, ...]]] | None:
    """The paths as the kernel's ``json_keys`` takes them, sorted by text; None when it
    cannot take them (an array index, a character JSON would escape, too many)."""
    plain = _plain
    if len(paths) > 64 or not all(
        plain(text) and len(path) <= 64 and not any(part.isdigit() for part in path)
        for text, path in paths
    ):
        return None
    return [(text.encode(), tuple(part.encode() for part in path)) for text, path in paths]


FastKeys = Callable[[list[bytes]], list["bytes | None"]]


def json_parser(
    kernel: CEngine | None,
    key_paths: list[tuple[str, Path]],
    ignore: Sequence[str],
    ignore_paths: list[Path],
) -> FastKeys | None:
    """The kernel's JSON key twin where ``kernel`` is given and the paths are ones it
    takes (None: every record through the Python parser); it answers None for a record
    it leaves to the parser."""
    if kernel is None:
        return None
    json_keys = kernel.json_keys
    if key_paths:
        fast_paths = _kernel_paths(key_paths)
        if fast_paths is None:
            return None
        return lambda records: json_keys(records, fast_paths)
    if len(ignore) <= 64 and all(_plain(text) for text in ignore):
        # One-component paths are dropped there; a longer one reaches into a nested
        # value, which the kernel leaves to the parser anyway.
        names = sorted({path[0].encode() for path in ignore_paths if len(path) == 1})
        return lambda records: json_keys(records, names, ignore=True)
    return None


class JsonSelector:
    """Turn records into their JSON keys. With ``track_text``, ``as_text`` lists the
    batch positions of the last call's records that were compared as text (not a JSON
    object), for ``--explain``.

    With the compiled kernel, keys come from the record's text where that is certain
    (``jsonkey.h``: plain ASCII objects with simple chosen values, for ``--json-ignore``
    flat ones, and lines that are no JSON object); the rest are parsed here."""

    def __init__(
        self,
        keys: Sequence[str] = (),
        ignore: Sequence[str] = (),
        kernel: CEngine | None = None,
        track_text: bool = False,
    ) -> None:
        if keys and ignore:
            raise UsageError("--json-key and --json-ignore cannot be used together")
        unique = dict.fromkeys(keys)  # a path named twice is one field
        self.key_paths = sorted((text, parse_path(text, "--json-key")) for text in unique)
        self.ignore_paths = [parse_path(text, "--json-ignore") for text in ignore]
        self._fast_codec = _orjson_codec()
        self.track_text = track_text
        self.as_text: list[int] = []
        self._fast = json_parser(kernel, self.key_paths, ignore, self.ignore_paths)

    def __call__(self, records: list[bytes]) -> list[bytes]:
        if self._fast is None:
            keys = self._parse(records)
        else:
            found = self._fast(records)
            left = [position for position, key in enumerate(found) if key is None]
            if left:
                parsed = self._parse([records[position] for position in left])
                for position, key in zip(left, parsed, strict=True):
                    found[position] = key
            keys = found  # type: ignore[assignment]  # no None is left
        if self.track_text:  # a record compared as text is its own key, the same object
            self.as_text = [p for p, (k, r) in enumerate(zip(keys, records, strict=True)) if k is r]
        return keys

    def _parse(self, records: list[bytes]) -> list[bytes]:
        keys = []
        key_paths, ignore_paths = self.key_paths, self.ignore_paths
        standard: Codec = (_std_loads, _std_dumps)
        fast = self._fast_codec or standard
        unsure = _ORJSON_UNSURE.search if self._fast_codec else None
        for record in records:
            loads, dumps = standard if unsure is not None and unsure(record) else fast
            try:
                value = None if _too_deep(record) else loads(record)
            except (ValueError, RecursionError):  # invalid (orjson's is a ValueError)
                value = None
            if not isinstance(value, dict):
                keys.append(record)
                continue
            if key_paths:
                chosen = {}
                for text, path in key_paths:
                    found = value.get(path[0], _MISSING) if len(path) == 1 else _get(value, path)
                    if found is not _MISSING:
                        chosen[text] = found
                keys.append(dumps(chosen))
            else:
                for path in ignore_paths:
                    _drop(value, path)
                keys.append(dumps(value))
        return keys
