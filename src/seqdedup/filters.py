"""The ordered filter list (DESIGN section 4): which records take part in matching.

All patterns form one list in command-line order, a file's patterns standing where the
file was named. The first pattern that matches a record (``re.search``, anywhere in the
record) decides: a track pattern makes it tracked, a bypass pattern passes it through.
A record no pattern matches is tracked, unless a track pattern exists: then it passes
through. Records are decoded as UTF-8 with surrogateescape for matching only, so
invalid UTF-8 never fails and is never altered.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from itertools import compress, repeat
from operator import not_
from typing import TYPE_CHECKING, Any

from seqdedup.config import FilterRule
from seqdedup.errors import UsageError

if TYPE_CHECKING:
    from pathlib import Path

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

    def __init__(self, rules: Sequence[FilterRule]) -> None:
        self.rules = tuple(rules)
        compiled = [_compile(rule) for rule in self.rules]
        self._text_tests = [_batch_test(pattern.pattern, pattern.search) for pattern in compiled]
        self._byte_tests = _byte_tests(compiled)
        self.has_track = any(rule.kind == "track" for rule in self.rules)

    def __bool__(self) -> bool:
        return bool(self.rules)

    def classify(self, records: Sequence[bytes]) -> list[int]:
        """Per record: TRACKED, UNMATCHED, or the index of the bypass rule that matched.

        One pass per pattern over the records still undecided, so the per-record work
        stays in C (``map`` of a compiled search, or of ``in``/``startswith`` for a
        plain literal) rather than in a Python loop.
        """
        texts: Sequence[Any]
        if self._byte_tests is not None and all(map(bytes.isascii, records)):
            texts, tests = records, self._byte_tests  # no decoding needed
        else:
            texts, tests = list(map(_decode, records)), self._text_tests
        default = UNMATCHED if self.has_track else TRACKED
        decisions = [default] * len(texts)
        undecided: list[int] | None = None  # None: all of them
        for index, (rule, test) in enumerate(zip(self.rules, tests, strict=True)):
            if undecided is None:
                matches = test(texts)
                positions: Sequence[int] = range(len(texts))
            elif undecided:
                matches = test(list(map(texts.__getitem__, undecided)))
                positions = undecided
            else:
                break
            verdict = TRACKED if rule.kind == "track" else index
            for i in compress(positions, matches):  # usually few
                decisions[i] = verdict
            undecided = list(compress(positions, map(not_, matches)))
        return decisions


BatchTest = Callable[[Sequence[Any]], list[Any]]  # truthy result: the pattern matches
_METACHARACTERS = frozenset(".^$*+?{}[]\\|()")


def _batch_test(source: Any, search: Callable[[Any], object]) -> BatchTest:
    """A batch matcher for one pattern: plain literals and ``^literal`` skip the regex
    engine (``count`` and ``startswith`` give exactly the same answer, faster)."""
    anchored = source[:1] in ("^", b"^")
    literal = source[1:] if anchored else source
    if not any(
        chr(c) in _METACHARACTERS if isinstance(c, int) else c in _METACHARACTERS for c in literal
    ):
        if anchored:
            return lambda texts: list(map(type(literal).startswith, texts, repeat(literal)))
        # count, not "in": bytes "in" first tries the operand as an int and pays for a
        # raised and cleared TypeError on every record.
        return lambda texts: list(map(type(literal).count, texts, repeat(literal)))
    return lambda texts: list(map(search, texts))


def _byte_tests(patterns: Sequence[re.Pattern[str]]) -> list[BatchTest] | None:
    """Bytes twins of the patterns, for batches of ASCII records, or None.

    On ASCII text a bytes pattern matches exactly where its str original does, with
    one exception: str ``\\s`` also matches the ASCII separators \\x1c-\\x1f. So
    only ASCII patterns without ``\\s``/``\\S`` that compile as bytes get a twin;
    otherwise every batch is decoded and matched as str.
    """
    twins: list[BatchTest] = []
    for pattern in patterns:
        source = pattern.pattern
        if not source.isascii() or "\\s" in source or "\\S" in source:
            return None
        encoded = source.encode("ascii")
        try:
            twin = re.compile(encoded, pattern.flags & ~re.UNICODE)
        except re.error:
            return None
        twins.append(_batch_test(encoded, twin.search))
    return twins


def _decode(record: bytes) -> str:
    return record.decode("utf-8", "surrogateescape")


def _compile(rule: FilterRule) -> re.Pattern[str]:
    try:
        return re.compile(rule.pattern)
    except re.error as exc:
        option = f"--{rule.kind}-file" if rule.origin else f"--{rule.kind}"
        where = f" in {rule.origin}" if rule.origin else ""
        raise UsageError(f"{option}: invalid regex '{rule.pattern}'{where}: {exc.msg}") from None
