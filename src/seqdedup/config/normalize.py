"""``--normalize`` and ``--mask``: make keys equal where records differ only in
timestamps, ids, addresses, numbers, paths, quoted values or spacing. The written record
is never changed.

The classes are defined by the regular expressions below (ASCII, on the key's bytes).
One pass, left to right: at each position the first class that matches, in the order
timestamp, uuid, ip, hex, number, path, quoted, space (of those asked for), is replaced
by its placeholder
and the scan goes on after the match; where none matches, the byte stays. Every
pattern is possessive (greedy, never gives back) and its boundaries look at the key's
own bytes. The compiled kernel implements the same patterns as straight scans
(``normalize.h``); the tests compare the two on random input. The Python engine uses
these expressions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache, partial
from itertools import repeat

from seqdedup.base.errors import UsageError
from seqdedup.config.timelimit import each_within

TIMESTAMP, UUID, IP, HEX, NUMBER, PATH, QUOTED, SPACE = 1, 2, 4, 8, 16, 32, 64, 128
CLASSES = {
    "timestamp": TIMESTAMP,
    "uuid": UUID,
    "ip": IP,
    "hex": HEX,
    "number": NUMBER,
    "path": PATH,
    "quoted": QUOTED,
    "space": SPACE,
}
ALL = TIMESTAMP | UUID | IP | HEX | NUMBER  # ("all": paths and quoted values are named)
VALUES = ALL | PATH | QUOTED  # the classes that mask a value (what lines of a kind differ in)
EVERY = VALUES | SPACE  # every class: a line's kind masks them all (keys/kind.py)
PLACEHOLDERS = {
    TIMESTAMP: b"<TIMESTAMP>",
    UUID: b"<UUID>",
    IP: b"<IP>",
    HEX: b"<HEX>",
    NUMBER: b"<NUMBER>",
    PATH: b"<PATH>",
    QUOTED: b"<QUOTED>",
    SPACE: b" ",
}
MASK_PLACEHOLDER = "<MASK>"

_D = "[0-9]"
_H = "[0-9A-Fa-f]"
_MONTH = "(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_FRACTION = "(?:[.,][0-9]++)?+"
_WEEKDAY = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
_MM = "(?:0[1-9]|1[0-2])"  # a month, a day, an hour, a minute or second: in range
_DD = "(?:0[1-9]|[12][0-9]|3[01])"
_HH = "(?:[01][0-9]|2[0-3])"
_MS = "[0-5][0-9]"
_CLOCK = rf"{_D}{{2}}:{_D}{{2}}(?::{_D}{{2}}{_FRACTION})?+"  # (ISO's: seconds optional)
_ZONE = rf"(?:Z|[+-]{_D}{{2}}(?::?{_D}{{2}})?+)?+"
_PATTERNS = {
    TIMESTAMP: [
        # ISO 8601 / RFC 3339: a date, optionally a time ('T' or space), seconds,
        # fraction, zone; or a time after '-' with dots (DB2: 2005-06-03-15.42.50.675872)
        rf"(?<![0-9]){_D}{{4}}-{_D}{{2}}-{_D}{{2}}"
        rf"(?:[T ]{_CLOCK}{_ZONE}|-{_D}{{2}}\.{_D}{{2}}\.{_D}{{2}}(?:\.[0-9]++)?+)?+(?![0-9])",
        # a date with slashes or dots (Go's log: 2009/11/10 23:00:00; 2005.06.03), a time
        rf"(?<![0-9]){_D}{{4}}(?P<sep>[/.]){_D}{{2}}(?P=sep){_D}{{2}}(?:[T ]{_CLOCK})?+"
        r"(?![0-9]|[-/.][0-9])",  # (2026.12.06.1 is a version, 2026/12/06/x a path)
        # common log format: 22/Nov/2026:09:00:01 +0000
        rf"(?<![0-9]){_D}{{2}}/{_MONTH}/{_D}{{4}}:{_D}{{2}}:{_D}{{2}}:{_D}{{2}}"
        rf"(?: [+-]{_D}{{4}})?+(?![0-9])",
        # syslog: Nov 22 09:00:01, Nov  2 09:00:01; ctime: Sun Dec 04 04:47:44 2005
        rf"(?<![A-Za-z])(?:{_WEEKDAY} )?+{_MONTH} {{1,2}}+{_D}{{1,2}}+ "
        rf"{_D}{{2}}:{_D}{{2}}:{_D}{{2}}(?:\.[0-9]++)?+(?: {_D}{{4}}(?![0-9]))?+(?![0-9])",
        # at the key's start only (a number elsewhere is not taken for a time): Go's
        # glog (I1206 03:27:25.123456), compact dates (20171223-22:15:29:606, 081109
        # 203615), epoch seconds or milliseconds (2001-2096)
        rf"^[IWEF]{_MM}{_DD} {_HH}:{_MS}:{_MS}(?:\.[0-9]++)?+(?![0-9])",
        rf"^{_D}{{4}}{_MM}{_DD}-{_HH}:{_MS}:{_MS}(?::{_D}{{3}})?+(?![0-9])",
        rf"^{_D}{{2}}{_MM}{_DD} {_HH}{_MS}{_MS}(?![0-9])",
        rf"^[1-3]{_D}{{9}}(?:{_D}{{3}})?+(?![0-9])",
        # ... or an epoch beside a date (BGL: - 1117838570 2005.06.03 ...)
        rf"(?<![0-9A-Za-z.])[1-3]{_D}{{9}}(?:{_D}{{3}})?+(?= {_D}{{4}}[-/.]{_D}{{2}}[-/.]{_D}{{2}}"
        rf"(?![0-9]))",
        # a short date beside a time: 10.30 16:49:06, 17/06/09 20:10:40, 03-17 16:13:38.811
        rf"(?<![0-9]){_D}{{2}}(?P<short>[-/.]){_D}{{2}}(?:(?P=short){_D}{{2}})?+ "
        rf"{_D}{{1,2}}+:{_D}{{2}}:{_D}{{2}}{_FRACTION}(?![0-9])",
        # a time of day: 9:00:01, 09:00:01.123
        rf"(?<![0-9]){_D}{{1,2}}+:{_D}{{2}}:{_D}{{2}}{_FRACTION}(?![0-9])",
    ],
    UUID: [rf"(?<![0-9A-Za-z]){_H}{{8}}-{_H}{{4}}-{_H}{{4}}-{_H}{{4}}-{_H}{{12}}(?![0-9A-Za-z])"],
    IP: [
        # IPv4, four groups of 1-3 digits, an optional port
        rf"(?<![0-9A-Za-z.]){_D}{{1,3}}+\.{_D}{{1,3}}+\.{_D}{{1,3}}+\.{_D}{{1,3}}+"
        rf"(?::{_D}{{1,5}}+)?+(?![0-9A-Za-z]|\.[0-9])",
        # IPv6: a run of hex digits and colons that is a full (8 groups) or compressed
        # (one "::", at most 7 groups) address and holds a digit
        r"(?<![0-9A-Za-z:.])"
        r"(?=(?:"
        rf"(?:{_H}{{1,4}}:){{7}}{_H}{{1,4}}"
        rf"|(?:{_H}{{1,4}}:){{1,7}}:"
        rf"|(?:{_H}{{1,4}}:){{1,6}}:{_H}{{1,4}}"
        rf"|(?:{_H}{{1,4}}:){{1,5}}(?::{_H}{{1,4}}){{1,2}}"
        rf"|(?:{_H}{{1,4}}:){{1,4}}(?::{_H}{{1,4}}){{1,3}}"
        rf"|(?:{_H}{{1,4}}:){{1,3}}(?::{_H}{{1,4}}){{1,4}}"
        rf"|(?:{_H}{{1,4}}:){{1,2}}(?::{_H}{{1,4}}){{1,5}}"
        rf"|{_H}{{1,4}}:(?::{_H}{{1,4}}){{1,6}}"
        rf"|:(?:(?::{_H}{{1,4}}){{1,7}}|:)"
        r")(?![0-9A-Za-z:.]))"
        r"(?=[0-9A-Fa-f:]*[0-9])[0-9A-Fa-f:]++",
    ],
    HEX: [
        rf"(?<![0-9A-Za-z])0[xX]{_H}++(?![0-9A-Za-z])",
        # 8 or more hex digits, at least one of them a digit
        rf"(?<![0-9A-Za-z])(?=[A-Fa-f]*[0-9]){_H}{{8,}}+(?![0-9A-Za-z])",
    ],
    NUMBER: [r"(?<![0-9A-Za-z.])[0-9]++(?:\.[0-9]++)?+(?![0-9]|\.[0-9])"],
    # '/' and a run of path bytes holding a letter or digit, not after a path byte
    PATH: [r"(?<![0-9A-Za-z._~+@%/-])/(?=[._~+@%/-]*+[0-9A-Za-z])[0-9A-Za-z._~+@%/-]++"],
    # "..." or '...' on one line, at the start or after = : space or tab
    QUOTED: [r"""(?:^|(?<=[=: \t]))(?:"[^"\n]*+"|'[^'\n]*+')(?![0-9A-Za-z])"""],
    # two or more spaces and tabs, or one tab, as one space (columns aligned by padding)
    SPACE: [r"[ \t]{2,}+|\t"],
}


def parse_classes(text: str) -> int:
    """``timestamp,uuid`` -> the class bits; UsageError naming an unknown class."""
    bits = 0
    for name in text.split(","):
        name = name.strip().lower()
        if name == "all":
            bits |= ALL
        elif name in CLASSES:
            bits |= CLASSES[name]
        else:
            known = ", ".join([*CLASSES, "all"])
            raise UsageError(f"--normalize: unknown class '{name}' (use {known})")
    return bits


def class_names(bits: int) -> list[str]:
    return [name for name, bit in CLASSES.items() if bits & bit]


@lru_cache(maxsize=32)
def _compiled(bits: int) -> tuple[re.Pattern[bytes], dict[str, bytes]]:
    alternatives = []
    placeholders = {}
    for bit, patterns in _PATTERNS.items():
        if bits & bit:
            group = f"c{bit}"
            alternatives.append(f"(?P<{group}>" + "|".join(f"(?:{p})" for p in patterns) + ")")
            placeholders[group] = PLACEHOLDERS[bit]
    return re.compile("|".join(alternatives).encode()), placeholders


def compiled_pattern(bits: int) -> re.Pattern[bytes]:
    """One expression matching any of the classes ``bits`` (``--fold`` reads timestamps)."""
    return _compiled(bits)[0]


def normalize_py(key: bytes, bits: int) -> bytes:
    """The key with each match of the classes ``bits`` replaced (the definition)."""
    if not bits:
        return key
    pattern, placeholders = _compiled(bits)
    return pattern.sub(lambda m: placeholders[m.lastgroup or ""], key)


def normalizer(kernel: object = None) -> Callable[[bytes, int], bytes]:
    """The normalisation of the engine that runs: the kernel's (``kernel``, where it is
    given), else :func:`normalize_py`; the same bytes either way."""
    return getattr(kernel, "normalize", None) or normalize_py


def compile_mask(pattern: str) -> re.Pattern[str]:
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise UsageError(f"--mask: invalid regular expression '{pattern}': {exc}") from None
    if compiled.match("") or _can_match_empty(pattern):
        raise UsageError(
            f"--mask: '{pattern}' matches the empty string, so it would mark every position "
            "(use + rather than *)"
        )
    return compiled


def _can_match_empty(pattern: str) -> bool:
    """Whether the pattern can match the empty string somewhere (``(?=a)``, ``\b``),
    by the shortest width the regular expression parser gives it."""
    try:
        from re import _parser  # type: ignore[attr-defined]  # Python 3.11+

        return bool(_parser.parse(pattern).getwidth()[0] == 0)
    except Exception:  # another interpreter's internals: the plain check above only
        return False


class KeySteps:
    """The normalisations and masks of a run, in command-line order: consecutive
    ``--normalize`` options make one pass (their classes together); each ``--mask``
    is a pass of its own, on the key as text (UTF-8, invalid bytes kept as they are)."""

    def __init__(self, steps: Sequence[tuple[str, str]], kernel: object = None) -> None:
        # A normalisation pass is its class bits; a mask pass its expression.
        self.passes: list[int | re.Pattern[str]] = []
        for step in steps:
            if not (
                isinstance(step, tuple | list)
                and len(step) == 2
                and all(isinstance(part, str) for part in step)
            ):
                raise UsageError(f"key_steps: each step is a (kind, text) pair, got {step!r}")
            kind, value = step
            if kind == "normalize":
                bits = parse_classes(value)
                if self.passes and isinstance(self.passes[-1], int):
                    bits |= self.passes.pop()  # type: ignore[operator]
                self.passes.append(bits)
            elif kind == "mask":
                self.passes.append(compile_mask(value))
            else:
                raise UsageError(f"unknown key step '{kind}'")
        self._normalize = normalizer(kernel)

    def __bool__(self) -> bool:
        return bool(self.passes)

    @property
    def only_normalize(self) -> int:
        """The class bits when the steps are one normalisation pass (the kernel then
        does it while hashing); 0 otherwise."""
        if len(self.passes) == 1 and isinstance(self.passes[0], int):
            return self.passes[0]
        return 0

    def apply(self, keys: list[bytes]) -> list[bytes]:
        normalize = self._normalize
        for step in self.passes:
            if isinstance(step, int):
                keys = list(map(normalize, keys, repeat(step)))
                continue
            keys = each_within(partial(_mask, step.sub), keys, f"--mask '{step.pattern}'")
        return keys


def _mask(sub: Callable[[str, str], str], key: bytes) -> bytes:
    text = key.decode("utf-8", "surrogateescape")
    return sub(MASK_PLACEHOLDER, text).encode("utf-8", "surrogateescape")


# -- the first timestamp of a record (fold lines, report pages, the budget's spans) --


@lru_cache(maxsize=1)
def _timestamp_pattern() -> re.Pattern[bytes]:
    from seqdedup.config.normalize import compiled_pattern

    return compiled_pattern(TIMESTAMP)


def first_timestamp(record: bytes) -> str:
    """The first match of the ``timestamp`` normalisation class in a record, or ''."""
    found = _timestamp_pattern().search(record)
    return found.group(0).decode("ascii") if found else ""


# (a record's matches of classes, each as (start, end, class bit): see python_value_matches)
ValueMatches = Callable[[bytes], list[tuple[int, int, int]]]


def python_value_matches(record: bytes, bits: int) -> list[tuple[int, int, int]]:
    """A record's matches of the classes ``bits``, left to right as normalising replaces
    them, each as (start, end, class bit): the Python engine's ``value_matches`` (the
    expression of the classes)."""
    pattern = _compiled(bits)[0]
    return [(m.start(), m.end(), int((m.lastgroup or "c0")[1:])) for m in pattern.finditer(record)]


def timestamp_seconds(text: str) -> float | None:
    """A timestamp the ``timestamp`` class found, as seconds: ISO 8601 (without a zone:
    UTC), epoch seconds or milliseconds, and the other forms of :data:`_PATTERNS` (a form
    without a year or a date: the year 1900, only differences are read); None for none."""
    from datetime import UTC, datetime

    if not text:
        return None
    if text.isdigit():  # epoch seconds, or milliseconds
        return int(text) / (1000 if len(text) == 13 else 1)
    try:
        found = datetime.fromisoformat(text.replace(",", "."))
    except ValueError:
        whole, fraction = _split_fraction(text)
        for form in _TIME_FORMS:
            try:
                found = datetime.strptime(" ".join(whole.split()), form)
            except ValueError:
                continue
            seconds = found.replace(tzinfo=found.tzinfo or UTC).timestamp()
            return seconds + (float("0." + fraction) if fraction else 0.0)
        return None
    return (found if found.tzinfo is not None else found.replace(tzinfo=UTC)).timestamp()


def _split_fraction(text: str) -> tuple[str, str]:
    """A timestamp without its fraction of a second (after the seconds: ``.123``,
    ``,123``, or ``:606`` of a compact form), and that fraction's digits."""
    found = re.search(r"(?<=:[0-9]{2}:[0-9]{2})[.,:]([0-9]+)(?=$| [0-9]{4}$)", text)
    if found is None:
        found = re.search(r"(?<=[0-9]{2}\.[0-9]{2}\.[0-9]{2})\.([0-9]+)$", text)  # (DB2's)
    if found is None:
        return (text[1:] if text[:1] in ("I", "W", "E", "F") else text), ""
    whole = text[: found.start()] + text[found.end() :]
    return (whole[1:] if whole[:1] in ("I", "W", "E", "F") else whole), found.group(1)


_TIME_FORMS = (
    "%d/%b/%Y:%H:%M:%S %z",
    "%d/%b/%Y:%H:%M:%S",
    "%b %d %H:%M:%S",
    "%a %b %d %H:%M:%S %Y",  # ctime
    "%b %d %H:%M:%S %Y",
    "%Y/%m/%d %H:%M:%S",
    "%Y/%m/%d %H:%M",
    "%Y.%m.%d %H:%M:%S",
    "%Y/%m/%d",
    "%Y.%m.%d",
    "%Y-%m-%d-%H.%M.%S",  # DB2
    "%Y%m%d-%H:%M:%S",
    "%y%m%d %H%M%S",
    "%m%d %H:%M:%S",  # glog (its level letter taken off)
    "%y/%m/%d %H:%M:%S",
    "%m-%d %H:%M:%S",
    "%m.%d %H:%M:%S",
    "%d.%m.%y %H:%M:%S",
    "%H:%M:%S",
)
