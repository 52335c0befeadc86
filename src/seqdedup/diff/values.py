"""Known kinds with new values (docs/diff.md): a BAD record whose key GOOD never shows
is a *new value* rather than new when GOOD shows its kind of line
(:mod:`seqdedup.keys.kind`: every class masked, a number, an id, an address, a path,
a quoted value), or a kind of as many words, at least WORDS, that differs from it in
one word only, at a place where GOOD's own kinds of that form take more than one word
(a user name in ``Invalid user NAME from <IP>``). Each such kind (its word in the
second case written ``<...>``) is one entry of the answer, with its records and the
values they bring.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import ModuleType
from typing import NamedTuple

from seqdedup.config.settings import Config
from seqdedup.diff.profile import GoodProfile
from seqdedup.keys.kind import (
    ANY,
    WORDS,
    Form,
    form_words,
    kind_keys,
    outline,
    outline_label,
    outline_value,
    varying_form,
    word_forms,
)

KEPT = 100  # values kept of each group (and how many in all)
READ = 256  # records of a group read for the values of a kind GOOD shows


class ValueGroups(NamedTuple):
    """The BAD records that are new values: ``group_of`` position -> group; each
    group's ``labels`` (its kind, a value word as ``<...>``), a GOOD record of it
    (``examples``) and where the value word stands (``words``: -1 where the kind
    itself is GOOD's)."""

    group_of: dict[int, int]
    labels: list[bytes]
    examples: list[bytes]
    values: list[dict[str, None]]  # each group's values, first met first (KEPT of them)
    distinct: list[int]


def value_groups(
    profile: GoodProfile,
    positions: Sequence[int],
    text_of: Callable[[int], bytes],
    config: Config,
    kernel: ModuleType | None,
) -> ValueGroups:
    """The new values among BAD's new records (``positions``, ``text_of(p)`` one's
    text)."""
    groups = ValueGroups({}, [], [], [], [])
    if not positions:  # (nothing new: GOOD's kinds are not needed)
        return groups
    kinds = kind_keys(config, kernel)
    bad_kinds = kinds.keys([text_of(p).removesuffix(b"\r") for p in positions])
    known, forms, examples = _good_kinds(profile, kinds.keys, bad_kinds)
    index: dict[bytes, int] = {}
    seen: list[set[bytes]] = []  # (each group's value words, all of them)
    unmatched = {
        kind: outline(kind)
        for kind in bad_kinds
        if kind not in known and varying_form(kind, forms) is None
    }
    outlines = _good_outlines(known, set(unmatched.values()) - {b""})
    for position, kind in zip(positions, bad_kinds, strict=True):
        if kind in known:
            label, example, word = kind, known[kind], b""
        elif (found := varying_form(kind, forms)) is not None:
            label, example, word = found[1], examples[found], kind.split()[found[0]]
        elif (same := outlines.get(unmatched[kind])) is not None:
            label, example = outline_label(kind), known[same]
            word = outline_value(kind, same)
        else:
            continue  # (a kind GOOD never had: new)
        group = index.get(label)
        if group is None:
            group = index[label] = len(groups.labels)
            groups.labels.append(label)
            groups.examples.append(profile.texts[example])
            groups.values.append({})
            groups.distinct.append(0)
            seen.append(set())
        groups.group_of[position] = group
        if word and word not in seen[group]:
            seen[group].add(word)
            _keep(groups, group, word.decode("utf-8", "replace"))
    _masked_values(groups, text_of)
    return groups


def _good_kinds(
    profile: GoodProfile, kinds_of: Callable[[list[bytes]], list[bytes]], bad: list[bytes]
) -> tuple[dict[bytes, int], dict[Form, bytes], dict[Form, int]]:
    """GOOD's kinds (each with its first key's id), the forms it shares with ``bad``'s
    kinds with the word each takes (VARIES: more than one) and a key of each form.

    A kind shares a form with another only when the two have as many words and differ
    in one word at most: the same first and last word, or the same last (the form
    leaves the first out) or the same first (it leaves the last out). GOOD's kinds that
    cannot share one with any of ``bad`` are not split into forms."""
    known: dict[bytes, int] = {}
    for key_id, kind in enumerate(kinds_of([t.removesuffix(b"\r") for t in profile.texts])):
        known.setdefault(kind, key_id)
    ends = {end for kind in bad for end in _ends_of_forms(kind)}
    near = [] if not ends else [kind for kind in known if _may_share(kind, ends)]
    examples: dict[Form, int] = {}
    for kind in near:
        for form in word_forms(kind):
            examples.setdefault(form, known[kind])
    return known, form_words(near), examples


def _good_outlines(known: dict[bytes, int], wanted: set[bytes]) -> dict[bytes, bytes]:
    """Each of the ``wanted`` outlines that GOOD's kinds have, with the first kind that
    has it. (Only kinds that hold the first word of one are outlined: an outline's
    words are the kind's own.)"""
    found: dict[bytes, bytes] = {}
    if not wanted:
        return found
    firsts = {shape.split(b" ", 1)[0] for shape in wanted}
    for kind in known:
        if any(first in kind for first in firsts) and (shape := outline(kind)) in wanted:
            found.setdefault(shape, kind)
    return found


def _may_share(kind: bytes, ends: set[tuple[int, bytes, bytes]]) -> bool:
    words = kind.split()
    count = len(words)
    if count < WORDS:
        return False
    first, last = words[0], words[-1]
    return (count, first, last) in ends or (count, ANY, last) in ends or (count, first, ANY) in ends


def _ends_of_forms(kind: bytes) -> tuple[tuple[int, bytes, bytes], ...]:
    """A kind's word count with its first and last word, and with either one as ANY
    (the form that leaves it out): two kinds that share a form share one of these."""
    words = kind.split()
    if len(words) < WORDS:
        return ()
    count, first, last = len(words), words[0], words[-1]
    return ((count, first, last), (count, ANY, last), (count, first, ANY))


def _keep(groups: ValueGroups, group: int, value: str) -> None:
    groups.distinct[group] += 1
    if len(groups.values[group]) < KEPT:
        groups.values[group][value] = None


def _masked_values(groups: ValueGroups, text_of: Callable[[int], bytes]) -> None:
    """The values of the groups of a kind GOOD shows: the first field (a class the kind
    masks) in which their records differ from GOOD's record, read from READ of them."""
    from seqdedup.budget.values import columns
    from seqdedup.config.normalize import VALUES, compiled_pattern

    members: dict[int, list[int]] = {}
    for position, group in groups.group_of.items():
        if groups.distinct[group] == 0 and len(members.setdefault(group, [])) < READ:
            members[group].append(position)
    pattern = compiled_pattern(VALUES)
    for group, positions in members.items():
        records = [groups.examples[group]] + [text_of(p) for p in positions]
        found = columns(records, pattern)
        if found:
            for value in found[0].values[1:]:  # (the first: GOOD's)
                _keep(groups, group, value)
