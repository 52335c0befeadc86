"""--stream-by: each record's stream name and key text (the pattern, the JSON field or a
kernel's prefix program that reads names without a regular expression per record)."""

from __future__ import annotations

import re
from array import array
from types import ModuleType
from typing import TYPE_CHECKING, Any, AnyStr, NamedTuple

from seqdedup.base.engine import SEED
from seqdedup.config.groups import compile_stream_pattern
from seqdedup.config.timelimit import PatternTimeout, each_within

if TYPE_CHECKING:
    from seqdedup.base.cengine import CEngine
    from seqdedup.config.groups import StreamOptions


UNNAMED = "(unnamed)"  # the stream of the records before the first one that names one


class StreamNamer:
    """Each record's stream name (``None``: the pattern or field is not there, so it
    belongs to the stream of the record before it) and its key text without the name."""

    def __init__(
        self, options: StreamOptions, byte_mode: bool, kernel: CEngine | None = None
    ) -> None:
        self._json: tuple[str, ...] | None = None
        self._pattern: re.Pattern[str] | None = None  # on the records' text
        self._label: str | None = None
        # On the records' bytes: in byte mode, and for ASCII records in text mode
        self._twin: re.Pattern[bytes] | None = None
        self._text = not byte_mode
        self._decoded: dict[bytes, str] = {}  # names as text, recently seen
        if options.stream_by_json is not None:
            from seqdedup.config.jsonkeys import parse_path

            self._json = parse_path(options.stream_by_json, "--stream-by-json")
        elif options.stream_by is not None:
            self._pattern, self._twin = compile_stream_pattern(options.stream_by, byte_mode)
            self._label = f"--stream-by '{options.stream_by}'"
            if self._pattern is not None:  # (text mode: the twin, for ASCII records)
                from seqdedup.keys.filters import byte_twin

                self._twin = byte_twin(self._pattern)
        self._prefixes = kernel.stream_prefixes if kernel is not None else None
        self._program = self.program() if self._prefixes is not None else None

    def split(self, records: list[bytes]) -> tuple[list[str | None], list[bytes]]:
        """The stream names of ``records`` and the records as their keys see them."""
        if self._json is not None:
            return [self._json_name(record) for record in records], records
        prefixed = self.prefixed(records)
        if prefixed is not None:
            names, indices, stripped = prefixed
            return [names[i] if i >= 0 else None for i in indices], stripped
        if self._twin is not None and (not self._text or b"".join(records).isascii()):
            return self._split_bytes(records, self._twin)
        return self._split_text(records)

    def prefixed(self, records: list[bytes]) -> tuple[list[str], array[int], list[bytes]] | None:
        """With a prefix program (None without): the distinct names, each record's
        name as an index into them (-1: none), each record without its match, found by
        the kernel (and by the text pattern for the records it left)."""
        if self._program is None:
            return None
        keys, indices, stripped, decoded = self.prefixed_keys(records)
        if decoded is None:
            decoded = [name.decode("utf-8", "backslashreplace") for name in keys]
        return decoded, indices, stripped

    def prefixed_keys(
        self, records: list[bytes]
    ) -> tuple[list[bytes], array[int], list[bytes], list[str] | None]:
        """:meth:`prefixed` with the names as bytes, as the kernel's matcher keeps them
        (those the text pattern found encoded back), and decoded only where the text
        pattern had to read some records (else None: a name's text is made when it is
        needed)."""
        assert self._program is not None and self._prefixes is not None
        raw, found, stripped, unread = self._prefixes(records, *self._program, self._text, SEED)
        indices = array("i", found)
        if not unread:
            return raw, indices, stripped, None
        names = [name.decode("utf-8", "backslashreplace") for name in raw]
        self.read_rest(records, names, indices, stripped, unread)
        read = [name.encode("utf-8", "surrogateescape") for name in names[len(raw) :]]
        return [*raw, *read], indices, stripped, names

    def read_rest(
        self,
        records: list[bytes],
        names: list[str],
        indices: array[int],
        keys: list[bytes],
        unread: bytes,
    ) -> None:
        """The records the kernel's prefix program left (``unread``: their positions,
        int32; its bytes twin is exact on ASCII, and their match read a byte beyond):
        named by the text pattern, their names added to ``names`` where new, their
        indices and keys set in place."""
        if not unread:
            return
        positions = array("i", unread)
        try:
            found, keyed = self._split_text([records[k] for k in positions])
        except PatternTimeout as exc:  # (its index in the batch, not in those left)
            raise PatternTimeout(exc.label, positions[exc.index]) from None
        known = {name: index for index, name in reversed(list(enumerate(names)))}
        for position, name, key in zip(positions, found, keyed, strict=True):
            keys[position] = key
            if name is None:
                indices[position] = -1
                continue
            index = known.get(name)
            if index is None:
                index = known[name] = len(names)
                names.append(name)
            indices[position] = index

    def _split_text(self, records: list[bytes]) -> tuple[list[str | None], list[bytes]]:
        """:meth:`split` by the pattern on the records' text."""
        assert self._pattern is not None
        names: list[str | None] = []
        keyed: list[bytes] = []
        group = 1 if self._pattern.groups else 0
        texts = [record.decode("utf-8", "surrogateescape") for record in records]
        matches = self._matches(self._pattern, texts)
        for record, text, match in zip(records, texts, matches, strict=True):
            if match is None:
                names.append(None)
                keyed.append(record)
                continue
            names.append(match.group(group) or "")
            start, end = match.span()
            keyed.append((text[:start] + text[end:]).encode("utf-8", "surrogateescape"))
        return names, keyed

    def program(self) -> PrefixProgram | None:
        """The pattern as a prefix program (on bytes: the pattern itself in byte mode,
        its twin for ASCII records in text mode), if it is one."""
        if self._json is not None or self._twin is None:
            return None
        return prefix_program(self._twin)

    def _matches(
        self, pattern: re.Pattern[AnyStr], texts: list[AnyStr]
    ) -> list[re.Match[AnyStr] | None]:
        """The pattern's first match in each text, under the time limit of user
        patterns (a backtracking pattern is one line, not a hang)."""
        assert self._label is not None
        return each_within(pattern.search, texts, self._label)

    def _split_bytes(
        self, records: list[bytes], pattern: re.Pattern[bytes]
    ) -> tuple[list[str | None], list[bytes]]:
        """The same on the records' bytes (byte mode, or ASCII records in text mode)."""
        names: list[str | None] = []
        keyed: list[bytes] = []
        decoded, group = self._decoded, 1 if pattern.groups else 0
        if len(decoded) > 4096:  # (a cache, not a record of every name)
            decoded.clear()
        for record, match in zip(records, self._matches(pattern, records), strict=True):
            if match is None:
                names.append(None)
                keyed.append(record)
                continue
            raw = match.group(group) or b""
            name = decoded.get(raw)
            if name is None:
                name = decoded[raw] = raw.decode("utf-8", "backslashreplace")
            names.append(name)
            start, end = match.span()
            keyed.append(record[end:] if start == 0 else record[:start] + record[end:])
        return names, keyed

    def _json_name(self, record: bytes) -> str | None:
        import json

        try:
            value: object = json.loads(record)
        except (ValueError, RecursionError):
            return None
        for step in self._json or ():
            if not isinstance(value, dict) or step not in value:
                return None
            value = value[step]
        return _writable(value) if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _writable(name: str) -> str:
    """A stream name that can be written: a lone surrogate (a JSON string may escape
    one) has no UTF-8, so it stays the escape it was read as (backslash, u, 4 digits)."""
    try:
        name.encode("utf-8", "surrogateescape")
        return name
    except UnicodeEncodeError:
        return "".join(
            f"\\u{ord(c):04x}" if "\ud800" <= c <= "\udfff" and not "\udc80" <= c <= "\udcff" else c
            for c in name
        )


class PrefixProgram(NamedTuple):
    """A pattern as steps from the record's start (see :func:`prefix_program`): per step
    a set of bytes (256 bits), how often at least and at most (-1: no limit); the steps
    ``name_from`` .. ``name_to`` - 1 are the name."""

    sets: bytes
    mins: bytes  # int64 each
    maxes: bytes
    name_from: int
    name_to: int


def prefix_program(pattern: re.Pattern[bytes]) -> PrefixProgram | None:
    """The bytes pattern as a prefix program, if greedy steps without backtracking find
    exactly what it finds: anchored at the start (``^`` or ``\\A``), then literals,
    classes and greedy repeats of one class, at most one group of them (the name); a
    repeat whose count may vary must not share a byte with what can follow it up to the
    next required step (so backtracking could never give a byte back). None otherwise."""
    try:  # (CPython's own parser, 3.11+; elsewhere no program: the pattern runs)
        from re import _constants as c  # type: ignore[attr-defined]
        from re import _parser  # type: ignore[attr-defined]
    except ImportError:
        return None

    if pattern.flags or pattern.groups > 1:
        return None
    items = list(_parser.parse(pattern.pattern, pattern.flags))
    if not items or items[0] not in ((c.AT, c.AT_BEGINNING), (c.AT, c.AT_BEGINNING_STRING)):
        return None
    found = _steps(c, items[1:])
    if found is None or not _greedy_is_exact(found[0]):
        return None
    steps, name = found
    return PrefixProgram(
        b"".join(members.to_bytes(32, "little") for members, _, _ in steps),
        array("q", [low for _, low, _ in steps]).tobytes(),
        array("q", [high for _, _, high in steps]).tobytes(),
        *name,
    )


def _steps(
    c: ModuleType, items: list[tuple[object, ParsedArg]]
) -> tuple[list[tuple[int, int, int]], tuple[int, int]] | None:
    """The items as steps (set as 256 bits, min, max) and the name's steps (the group's,
    or all of them), or None."""
    steps: list[tuple[int, int, int]] = []
    name = (0, 0)
    for op, arg in items:
        inner = [(op, arg)]
        if op is c.SUBPATTERN:
            group, add, remove, inner = arg
            if group != 1 or add or remove or name != (0, 0):
                return None
        first = len(steps)
        for inner_op, inner_arg in inner:
            step = _step(c, inner_op, inner_arg)
            if step is None:
                return None
            steps.append(step)
        if op is c.SUBPATTERN:
            name = (first, len(steps))
            if first == len(steps):
                return None
    if not steps:
        return None
    return steps, name if name != (0, 0) else (0, len(steps))


def _greedy_is_exact(steps: list[tuple[int, int, int]]) -> bool:
    """Whether no step whose count may vary shares a byte with what may follow it, up to
    and including the next step that must match at least once."""
    for k, (members, low, high) in enumerate(steps):
        if low == high:
            continue
        following = 0
        for later, later_low, _ in steps[k + 1 :]:
            following |= later
            if later_low:
                break
        if members & following:
            return False
    return True


# An argument of an item of ``re``'s parser (an int, a pair, a list of items...): the
# parser is private and untyped.
ParsedArg = Any


_CLASSES = {
    "CATEGORY_DIGIT": b"0123456789",
    "CATEGORY_WORD": b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_",
    "CATEGORY_SPACE": b" \t\n\r\f\v",
}


_ALL = (1 << 256) - 1


def _members(c: ModuleType, op: object, arg: ParsedArg) -> int | None:
    """The bytes one item matches, as bits; None for what a set cannot say."""
    if op is c.LITERAL:
        return 1 << int(arg)
    if op is c.NOT_LITERAL:
        return _ALL & ~(1 << int(arg))
    if op is c.ANY:
        return _ALL & ~(1 << 10)  # (no DOTALL: any byte but a newline)
    if op is c.RANGE:
        return sum(1 << b for b in range(arg[0], arg[1] + 1))
    if op is c.CATEGORY:
        name = str(arg)
        negated = name.startswith("CATEGORY_NOT_")
        base = _CLASSES.get(name.replace("CATEGORY_NOT_", "CATEGORY_"))
        if base is None:
            return None
        bits = sum(1 << b for b in base)
        return _ALL & ~bits if negated else bits
    if op is c.IN:
        bits, negate = 0, False
        for inner_op, inner_arg in arg:
            if inner_op is c.NEGATE:
                negate = True
                continue
            part = _members(c, inner_op, inner_arg)
            if part is None:
                return None
            bits |= part
        return _ALL & ~bits if negate else bits
    return None


def _step(c: ModuleType, op: object, arg: ParsedArg) -> tuple[int, int, int] | None:
    """One item as a step (bits, min, max), or None."""
    if op is c.MAX_REPEAT:
        low, high, inner = arg
        if len(inner) != 1:
            return None
        members = _members(c, *inner[0])
        if members is None:
            return None
        return members, low, -1 if high is c.MAXREPEAT else high
    members = _members(c, op, arg)
    return None if members is None else (members, 1, 1)
