"""The ordered filter list (docs/json-logs.md): which records take part in matching.

All patterns form one list in command-line order, a file's patterns standing where the
file was named. The first pattern that matches a record (``re.search``, anywhere in the
record) decides: a track pattern makes it tracked, a bypass pattern passes it through.
A record no pattern matches is tracked, unless a track pattern exists: then it passes
through. Records are decoded as UTF-8 with surrogateescape for matching only, so
invalid UTF-8 never fails and is never altered.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable, Sequence
from itertools import compress, repeat
from operator import not_
from typing import TYPE_CHECKING, AnyStr, Generic

from seqdedup.base.engine import LiteralMask, numpy_available
from seqdedup.base.errors import UsageError
from seqdedup.base.lazy import LazySequence
from seqdedup.config.groups import FilterRule
from seqdedup.config.timelimit import PatternTimeout, each_within

if TYPE_CHECKING:
    from pathlib import Path

    from seqdedup.base.hashes import Flags

TRACKED = -1  # decision for a tracked record
UNMATCHED = -2  # passed through: no track pattern matched


def load_pattern_file(path: str | Path, kind: str) -> list[FilterRule]:
    """Read one regex per line; ``#`` comment lines and blank lines are skipped."""
    from pathlib import Path

    option = f"--{kind}-file"
    try:
        text = Path(path).read_bytes().decode("utf-8", "surrogateescape")
    except IsADirectoryError:
        raise UsageError(f"{option} '{path}' is a directory, not a pattern file") from None
    except OSError as exc:
        raise UsageError(f"{option} '{path}': {exc.strerror or exc}") from None
    rules = []
    for number, line in enumerate(text.splitlines(), start=1):
        pattern = line.rstrip("\r")
        if not pattern.strip() or pattern.lstrip().startswith("#"):
            continue
        rules.append(FilterRule(kind, pattern, f"{path} line {number}"))
    return rules


class FilterList:
    """Compiled rules; :meth:`classify` gives each record's decision."""

    def __init__(self, rules: Sequence[FilterRule], scan: LiteralMask | None = None) -> None:
        self.rules = tuple(rules)
        compiled = [_compile(rule) for rule in self.rules]
        labels = [_label(rule) for rule in self.rules]
        self._text_tests = [
            _Test(pattern.pattern, pattern.search, label)
            for pattern, label in zip(compiled, labels, strict=True)
        ]
        self._byte_tests = _byte_tests(compiled, labels, scan)
        self._scan = scan  # the engine's literal_mask (None: the Python engine has none)
        self.has_track = any(rule.kind == "track" for rule in self.rules)

    def __bool__(self) -> bool:
        return bool(self.rules)

    def classify(self, records: Sequence[bytes]) -> list[int]:
        """Per record: TRACKED, UNMATCHED, or the index of the bypass rule that matched.

        One pass per pattern over the records still undecided, with the per-record work
        in C: ``map`` of a compiled search, or for a plain literal one scan of the whole
        batch (large batches) or ``count``/``startswith`` per record (small ones).
        """
        if self._byte_tests is not None and all(map(bytes.isascii, records)):
            return self._classify(records, self._byte_tests)  # no decoding needed
        return self._classify(list(map(_decode, records)), self._text_tests)

    def _classify(self, texts: Sequence[AnyStr], tests: list[_Test[AnyStr]]) -> list[int]:
        default = UNMATCHED if self.has_track else TRACKED
        if (
            len(texts) >= SCAN_MIN_RECORDS
            and any(t.literal is not None for t in tests)
            and numpy_available()
        ):
            return self._classify_scanning(texts, tests, default)
        decisions = [default] * len(texts)
        undecided: list[int] | None = None  # None: all of them
        for index, (rule, test) in enumerate(zip(self.rules, tests, strict=True)):
            if undecided is None:
                matches = test.each(texts)
                positions: Sequence[int] = range(len(texts))
            elif undecided:
                matches = _each_at(test, texts, undecided)
                positions = undecided
            else:
                break
            verdict = TRACKED if rule.kind == "track" else index
            for i in compress(positions, matches):  # usually few
                decisions[i] = verdict
            undecided = list(compress(positions, map(not_, matches)))
        return decisions

    def _classify_scanning(
        self, texts: Sequence[AnyStr], tests: list[_Test[AnyStr]], default: int
    ) -> list[int]:
        import numpy as np

        batch = _Batch(texts)
        decisions = np.full(len(texts), default, dtype=np.int64)
        open_ = np.ones(len(texts), dtype=bool)
        for index, (rule, test) in enumerate(zip(self.rules, tests, strict=True)):
            if test.literal is not None:
                hits = test.scan(batch, open_) & open_
            else:
                candidates = np.flatnonzero(open_)
                if not len(candidates):
                    break
                found = _each_at(test, texts, candidates.tolist())
                hits = np.zeros(len(texts), dtype=bool)
                hits[candidates[np.fromiter(map(bool, found), bool, len(found))]] = True
            decisions[hits] = TRACKED if rule.kind == "track" else index
            open_ &= ~hits
        result: list[int] = decisions.tolist()
        return result

    def tracked_mask(self, region: bytes, bounds: bytes, delimiter: bytes) -> bytes:
        """The kernel's filtered chunk path: records given as one region (``delimiter``
        between them) and int64 (start, end) pairs into it; one byte per record, 1 when
        it is tracked.

        Where the patterns have bytes twins, the flags of all records are held as one
        int, one byte per record (so setting and clearing them for a whole batch is one
        operation): a literal is found by the kernel in one pass over the region (any
        region: see below), skipping decided records; another pattern is searched record
        by record, on the undecided ones only (as bytes on an ASCII region, else as
        text). Anything else goes through :meth:`classify`.
        No numpy: its import alone would cost more than the whole pass.
        """
        scan = self._scan
        if scan is None:
            raise AssertionError("the kernel's chunk path has the kernel's scan")
        tests, count = self._byte_tests, len(bounds) // 16
        if tests is None:
            pairs = array("q")
            pairs.frombytes(bounds)
            records = [region[a:b] for a, b in zip(pairs[0::2], pairs[1::2], strict=True)]
            return bytes(map(TRACKED.__eq__, self.classify(records)))
        # An ASCII literal is found in any bytes where the text holds it (in UTF-8 an
        # ASCII byte is never part of another character, and surrogateescape keeps
        # the others apart): the kernel scans for it whatever the region. Another
        # pattern's bytes twin holds only on ASCII: elsewhere the text is searched.
        ascii = region.isascii()
        undecided = int.from_bytes(b"\1" * count, "little")
        tracked = 0
        region_texts: _Region | None = None
        decoded: list[str] | None = None
        for index, (rule, test) in enumerate(zip(self.rules, tests, strict=True)):
            if not undecided:
                break
            literal = test.literal
            open_ = undecided.to_bytes(count, "little")
            if literal is not None and (test.anchored or delimiter not in literal):
                found = scan(region, bounds, literal, test.anchored, open_)
            else:
                if region_texts is None:
                    region_texts = _Region(region, bounds)
                positions = list(compress(range(count), open_))
                matched = bytearray(count)
                hits_at: list[object]
                if ascii:
                    hits_at = _each_at(test, region_texts, positions)
                else:
                    if decoded is None:
                        decoded = [_decode(record) for record in region_texts]
                    hits_at = _each_at(self._text_tests[index], decoded, positions)
                for position, hit in zip(positions, hits_at, strict=True):
                    matched[position] = bool(hit)
                found = bytes(matched)
            hits = int.from_bytes(found, "little")
            if rule.kind == "track":
                tracked |= hits
            undecided ^= hits
        if not self.has_track:
            tracked |= undecided  # no pattern matched them: tracked
        return tracked.to_bytes(count, "little")


SCAN_MIN_RECORDS = 2048  # from this batch size on, literals scan the joined batch


class _Region(LazySequence[bytes]):
    """Records lying in one bytes object (the kernel's), int64 (start, end) pairs into
    it: sliced when a regular expression needs them one by one."""

    def __init__(self, data: bytes, bounds: bytes) -> None:
        pairs = array("q")
        pairs.frombytes(bounds)
        self.data, self.starts, self.ends = data, pairs[0::2], pairs[1::2]

    def __len__(self) -> int:
        return len(self.starts)

    def _item(self, index: int) -> bytes:
        return self.data[self.starts[index] : self.ends[index]]


class _Batch(Generic[AnyStr]):
    """A batch joined into one string, each record preceded by a newline, with the
    offsets of each record, so a literal is found by scanning the whole batch."""

    separator: AnyStr
    joined: AnyStr

    def __init__(self, texts: Sequence[AnyStr]) -> None:
        import numpy as np

        separator: AnyStr = "\n" if isinstance(texts[0], str) else b"\n"
        self.separator = separator
        self.joined = separator + separator.join(texts)
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        self.starts = np.cumsum(lengths + 1) - lengths  # after each separator
        self.ends = self.starts + lengths
        self.size = len(texts)


class _Test(Generic[AnyStr]):
    """How one pattern is matched: a compiled search, or a plain (``^``) literal."""

    search: Callable[[AnyStr], object]
    literal: AnyStr | None

    def __init__(
        self,
        source: AnyStr,
        search: Callable[[AnyStr], object],
        label: str,
        scan: LiteralMask | None = None,
    ) -> None:
        anchored = source[:1] in ("^", b"^")
        literal = source[1:] if anchored else source
        plain = not any(
            chr(c) in _METACHARACTERS if isinstance(c, int) else c in _METACHARACTERS
            for c in literal
        )
        self.search = search
        self.label = label  # the pattern as a message names it
        self.anchored = anchored
        self.literal = literal if plain else None
        self._scan = scan

    def each(self, texts: Sequence[AnyStr]) -> list[object]:
        """A truthy value per text that the pattern matches."""
        literal = self.literal
        if literal is None:  # a regular expression: it may backtrack without end
            return each_within(self.search, texts, self.label)
        if self.anchored:
            return list(map(type(literal).startswith, texts, repeat(literal)))
        # count, not "in": bytes "in" first tries the operand as an int and pays for a
        # raised and cleared TypeError on every record.
        return list(map(type(literal).count, texts, repeat(literal)))

    def scan(self, batch: _Batch[AnyStr], open_: Flags | None = None) -> Flags:
        """Which records of the batch contain (or start with) the literal (those that
        ``open_`` marks, at least)."""
        import numpy as np

        literal = self.literal
        hits = np.zeros(batch.size, dtype=bool)
        if not literal:
            hits[:] = True  # "" and "^" match every record
            return hits
        if isinstance(literal, bytes) and (self.anchored or b"\n" not in literal):
            return self._scan_bytes(batch, literal, hits, open_)
        needle = batch.separator + literal if self.anchored else literal
        find, found = batch.joined.find, []
        at = find(needle)
        while at >= 0:
            found.append(at)
            at = find(needle, at + 1)
        if found:
            position = np.array(found, dtype=np.int64) + (
                len(batch.separator) if self.anchored else 0
            )
            record = np.searchsorted(batch.starts, position, side="right") - 1
            inside = (record >= 0) & (position + len(literal) <= batch.ends[record])
            if self.anchored:
                inside &= position == batch.starts[record]
            hits[record[inside]] = True
        return hits

    def _scan_bytes(
        self, batch: _Batch[bytes], literal: bytes, hits: Flags, open_: Flags | None
    ) -> Flags:
        """The same on bytes with no Python step per occurrence: by the kernel's
        ``literal_mask`` (one pass of memmem over the batch, records already decided
        skipped) when the run's engine is the kernel; else an anchored literal is
        compared byte by byte at every record's start, and another found by one split of
        the batch (leftmost, non-overlapping occurrences: enough, since an occurrence
        cannot run from one record into the next unless the literal holds what lies
        between two records, which takes the general path)."""
        import numpy as np

        # the run's engine's scan (the Python engine has none); below, its twin
        literal_mask = self._scan
        if literal_mask is not None:
            bounds = np.stack((batch.starts, batch.ends), axis=1).astype(np.int64).tobytes()
            wanted = np.ones(batch.size, dtype=np.uint8) if open_ is None else open_
            found = literal_mask(
                batch.joined, bounds, literal, self.anchored, wanted.astype(np.uint8).tobytes()
            )
            return np.frombuffer(found, dtype=np.uint8).astype(bool)
        size = len(literal)
        starts, ends = batch.starts, batch.ends
        if self.anchored:
            chosen = np.flatnonzero(ends - starts >= size)
            at = starts[chosen]
            data = np.frombuffer(batch.joined, dtype=np.uint8)
            for offset, byte in enumerate(literal):
                same = data[at + offset] == byte
                chosen, at = chosen[same], at[same]
            hits[chosen] = True
            return hits
        pieces = batch.joined.split(literal)
        if len(pieces) > 1:
            lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
            position = np.cumsum(lengths[:-1] + size) - size
            record = np.searchsorted(starts, position, side="right") - 1
            inside = (record >= 0) & (position + size <= ends[record])
            hits[record[inside]] = True
        return hits


_METACHARACTERS = frozenset(".^$*+?{}[]\\|()")


def _byte_tests(
    patterns: Sequence[re.Pattern[str]], labels: Sequence[str], scan: LiteralMask | None
) -> list[_Test[bytes]] | None:
    """Bytes twins of the patterns, for batches of ASCII records, or None.

    On ASCII text a bytes pattern matches exactly where its str original does, with
    one exception: str ``\\s`` also matches the ASCII separators \\x1c-\\x1f. So
    only ASCII patterns without ``\\s``/``\\S`` that compile as bytes get a twin;
    otherwise every batch is decoded and matched as str.
    """
    twins: list[_Test[bytes]] = []
    for pattern, label in zip(patterns, labels, strict=True):
        twin = byte_twin(pattern)
        if twin is None:
            return None
        twins.append(_Test(twin.pattern, twin.search, label, scan))
    return twins


def byte_twin(pattern: re.Pattern[str]) -> re.Pattern[bytes] | None:
    """A bytes pattern that matches ASCII records exactly where ``pattern`` matches
    their text (see :func:`_byte_tests`), or None."""
    source = pattern.pattern
    if not source.isascii():
        return None
    if ("\\s" in source or "\\S" in source) and not pattern.flags & re.ASCII:
        spelled = _ascii_spaces(source) if not pattern.flags & re.VERBOSE else None
        if spelled is None:
            return None
        source = spelled
    try:
        return re.compile(source.encode("ascii"), pattern.flags & ~re.UNICODE)
    except re.error:
        return None


# What \s matches in ASCII text: a bytes pattern's \s lacks \x1c-\x1f (str.isspace)
_TEXT_SPACES = r"\t\n\x0b\x0c\r\x1c-\x1f "


def _ascii_spaces(source: str) -> str | None:
    """``source`` with each \\s and \\S spelled as the class it is in ASCII text, or
    None where that cannot be written (\\S inside a class)."""
    out: list[str] = []
    at, opened = 0, -1  # opened: where the class being read began (its '[')
    while at < len(source):
        char = source[at]
        if char == "\\" and at + 1 < len(source):
            escaped = source[at + 1]
            if escaped == "s":
                out.append(_TEXT_SPACES if opened >= 0 else f"[{_TEXT_SPACES}]")
            elif escaped == "S":
                if opened >= 0:
                    return None
                out.append(f"[^{_TEXT_SPACES}]")
            else:
                out.append(source[at : at + 2])
            at += 2
            continue
        if opened < 0 and char == "[":
            opened = at
        elif opened >= 0 and char == "]":
            # (a ']' first in a class, or after its '^', is one of its members)
            first = opened + (2 if source.startswith("[^", opened) else 1)
            if at > first:
                opened = -1
        out.append(char)
        at += 1
    return "".join(out)


def _each_at(
    test: _Test[AnyStr], texts: Sequence[AnyStr], positions: Sequence[int]
) -> list[object]:
    """``test.each`` over the texts at ``positions``; a runaway pattern is reported at
    its record's place in ``texts``."""
    try:
        return test.each(list(map(texts.__getitem__, positions)))
    except PatternTimeout as exc:
        raise PatternTimeout(exc.label, positions[exc.index]) from None


def _decode(record: bytes) -> str:
    return record.decode("utf-8", "surrogateescape")


def _label(rule: FilterRule) -> str:
    option = f"--{rule.kind}-file" if rule.origin else f"--{rule.kind}"
    where = f" ({rule.origin})" if rule.origin else ""
    return f"{option} '{rule.pattern}'{where}"


def _compile(rule: FilterRule) -> re.Pattern[str]:
    try:
        return re.compile(rule.pattern)
    except re.error as exc:
        option = f"--{rule.kind}-file" if rule.origin else f"--{rule.kind}"
        where = f" in {rule.origin}" if rule.origin else ""
        raise UsageError(f"{option}: invalid regex '{rule.pattern}'{where}: {exc.msg}") from None
