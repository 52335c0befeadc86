"""The field in which near-identical lines differ, and a ``--mask`` for it.

Two keys that are the same but for one whitespace-separated word differ in that
*field*. Each key is grouped under every way of leaving one word out (its position and
the other words); the group with the most distinct left-out words names the field that
keeps the most lines apart. The mask that hides it: ``name=\\S+`` for a ``name=value``
word, the word after the word before it, or the first word. Used by the hint after a
run that removed almost nothing and by ``seqdedup diff`` when its two sides do not line
up (there, only groups holding lines of both sides count).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

SEARCH = 2_000  # keys searched (of each side) for two that differ in one field


class Field(NamedTuple):
    """Lines alike but for the word at ``at``: two of its ``values`` (sorted), their
    number (``distinct``), and a ``--mask`` pattern that hides the word."""

    at: int
    values: tuple[bytes, ...]
    distinct: int
    pattern: str

    def shown(self) -> str:
        """``"a1", "b2"``: two of the values, as text."""
        return ", ".join(f'"{v.decode("utf-8", "replace")}"' for v in self.values)


def differing_field(keys: Sequence[bytes], sides: Sequence[int] | None = None) -> Field | None:
    """The field in which the most of ``keys`` differ, the rest of each the same (None:
    no two keys differ in one word only). With ``sides`` (each key's side, 0 or 1),
    only fields in which a key of one side differs from a key of the other."""
    groups: dict[tuple[int, tuple[bytes, ...]], dict[bytes, int]] = {}
    for number, key in enumerate(keys):
        words = tuple(key.split())
        side = 1 << (sides[number] if sides is not None else 0)
        for at in range(len(words)):  # (the key with one word left out)
            found = groups.setdefault((at, words[:at] + words[at + 1 :]), {})
            found[words[at]] = found.get(words[at], 0) | side
    if sides is not None:  # (a group counts where both sides hold one of its lines)
        groups = {g: v for g, v in groups.items() if _both(v)}
    if not groups:
        return None
    (at, rest), values = max(groups.items(), key=lambda item: (len(item[1]), -item[0][0]))
    if len(values) < 2:
        return None
    text = min(values).decode("utf-8", "replace")
    name, equals, _ = text.partition("=")
    if equals and name:
        pattern = re.escape(name) + r"=\S+"
    elif at:
        before = rest[at - 1].decode("utf-8", "replace")
        pattern = f"(?<={re.escape(before)} )\\S+"
    else:
        pattern = r"^\S+"
    return Field(at, tuple(sorted(values)[:2]), len(values), pattern)


def _both(values: dict[bytes, int]) -> bool:
    seen = 0
    for side in values.values():
        seen |= side
    return seen == 3
