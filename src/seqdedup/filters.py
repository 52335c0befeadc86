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
from collections.abc import Sequence
from typing import TYPE_CHECKING

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
        self._searches = [pattern.search for pattern in compiled]
        self.has_track = any(rule.kind == "track" for rule in self.rules)

    def __bool__(self) -> bool:
        return bool(self.rules)

    def classify(self, records: Sequence[bytes]) -> list[int]:
        """Per record: TRACKED, UNMATCHED, or the index of the bypass rule that matched.

        One pass per pattern over the records still undecided, so the per-record work
        stays in C (``map`` of the compiled search) rather than in a Python loop.
        """
        texts = list(map(_decode, records))
        default = UNMATCHED if self.has_track else TRACKED
        decisions = [default] * len(texts)
        undecided: list[int] | None = None  # None: all of them
        for index, (rule, search) in enumerate(zip(self.rules, self._searches, strict=True)):
            if undecided is None:
                matches = list(map(search, texts))
                positions: Sequence[int] = range(len(texts))
            elif undecided:
                matches = list(map(search, [texts[i] for i in undecided]))
                positions = undecided
            else:
                break
            verdict = TRACKED if rule.kind == "track" else index
            undecided = []
            for i, match in zip(positions, matches, strict=True):
                if match is None:
                    undecided.append(i)
                else:
                    decisions[i] = verdict
        return decisions


def _decode(record: bytes) -> str:
    return record.decode("utf-8", "surrogateescape")


def _compile(rule: FilterRule) -> re.Pattern[str]:
    try:
        return re.compile(rule.pattern)
    except re.error as exc:
        option = f"--{rule.kind}-file" if rule.origin else f"--{rule.kind}"
        where = f" in {rule.origin}" if rule.origin else ""
        raise UsageError(f"{option}: invalid regex '{rule.pattern}'{where}: {exc.msg}") from None
