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

from array import array
from collections.abc import Callable, Sequence
from itertools import compress, count
from typing import NamedTuple

from seqdedup.base.engine import Engine
from seqdedup.config.groups import KeyOptions
from seqdedup.diff.profile import GoodProfile
from seqdedup.engine.pykernel import NONE
from seqdedup.keys.kind import (
    ANY,
    VALUE_WORD,
    WORDS,
    Form,
    form_words,
    kind_keys,
    outline,
    outline_gaps,
    outline_label,
    outline_value,
    varying_form,
    word_forms,
)
from seqdedup.keys.maker import KeyMaker

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
    texts_of: Callable[[Sequence[int]], list[bytes]],
    keys: KeyOptions,
    engine: Engine,
) -> ValueGroups:
    """The new values among BAD's new records (``positions``, ``texts_of(positions)``
    their texts; their kinds by the run's ``keys``)."""
    groups = ValueGroups({}, [], [], [], [])
    if not positions:  # (nothing new: GOOD's kinds are not needed)
        return groups
    kinds = kind_keys(keys, engine.kernel)
    kind_ids, kind_texts = _kinds_of(positions, texts_of, kinds)
    distinct = list(kind_texts)  # (BAD's kinds, in the order they first come)
    outline_of = {kind: outline(kind) for kind in distinct}
    texts = list(kind_texts.values())
    known, forms, examples, outlined = _good_kinds(profile, kinds, distinct, outline_of, texts)
    index: dict[bytes, int] = {}
    seen: list[set[bytes]] = []  # (each group's value words, all of them)
    formed = {kind: varying_form(kind, forms) for kind in outline_of.keys() - known.keys()}
    wanted = {outline_of[kind] for kind, form in formed.items() if form is None} - {b""}
    outlines, slots = _good_outlines(outlined, wanted)
    entries: dict[bytes, tuple[bytes, int, bytes] | None] = {}  # (each distinct kind once)
    for kind in outline_of:
        if kind in known:
            entries[kind] = (kind, known[kind], b"")
        elif (found := formed[kind]) is not None:
            entries[kind] = (found[1], examples[found], kind.split()[found[0]])
        elif (shaped := outlines.get(outline_of[kind])) is not None and (
            (run := _new_run(kind, shaped, slots)) is not None
        ):
            word = outline_value(kind, shaped.first, max(run, 0))
            entries[kind] = (outline_label(kind), outlined[shaped.first], word)
        else:
            entries[kind] = None  # (a kind GOOD never had: new)
    for position, kind_id in zip(positions, kind_ids, strict=True):
        if (entry := entries[distinct[kind_id]]) is None:
            continue
        label, example, word = entry
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
    _masked_values(groups, texts_of)
    return groups


BATCH = 1 << 16  # BAD's new records whose kinds are made at a time


def _kinds_of(
    positions: Sequence[int], texts_of: Callable[[Sequence[int]], list[bytes]], kinds: KeyMaker
) -> tuple[array[int], dict[bytes, bytes]]:
    """Each new record's kind by number (in the order kinds first come), and each kind
    with its first record (a final CR left out): BATCH records read at a time, so a
    BAD of a million new records is not held as texts and kinds at once."""
    kind_ids = array("i")
    first_text: dict[bytes, bytes] = {}
    number: dict[bytes, int] = {}
    for at in range(0, len(positions), BATCH):
        texts = [text.removesuffix(b"\r") for text in texts_of(positions[at : at + BATCH])]
        for text, kind in zip(texts, kinds.keys(texts), strict=True):
            found = number.get(kind)
            if found is None:
                found = number[kind] = len(number)
                first_text[kind] = text
            kind_ids.append(found)
    return kind_ids, first_text


class GoodKinds(NamedTuple):
    """What the new values need of GOOD's kinds (each with its first key's id): those
    that are kinds of BAD's (``known``); the forms GOOD's kinds share with BAD's, with
    the word each takes (VARIES: more than one) and a key of each (``forms``,
    ``examples``); the kinds that may have the outline of one of BAD's (``outlined``)."""

    known: dict[bytes, int]
    forms: dict[Form, bytes]
    examples: dict[Form, int]
    outlined: dict[bytes, int]


def _good_kinds(
    profile: GoodProfile,
    kinds: KeyMaker,
    bad: list[bytes],
    outline_of: dict[bytes, bytes],
    bad_texts: list[bytes],
) -> GoodKinds:
    """GOOD's kinds as far as ``bad``'s kinds ask for them, made a batch of records at a
    time (only what may answer one of BAD's kinds is kept).

    A kind shares a form with another only when the two have as many words and differ
    in one word at most: the same first and last word, or the same last (the form
    leaves the first out) or the same first (it leaves the last out). GOOD's kinds that
    cannot share one with any of ``bad`` are not split into forms. A kind has an outline,
    or a run of values between two of its words, only if it holds those words.
    ``bad``: the kinds of BAD's records ``bad_texts``; ``outline_of``: each distinct one's
    outline."""
    wanted = outline_of.keys()
    ends = {end for kind in wanted for end in _ends_of_forms(kind)}
    # (a kind has an outline of BAD's, or a place of one, only if it holds its words)
    named = {word for shape in outline_of.values() for word in shape.split()}
    if not ends and not named:  # (only whether BAD's kinds are GOOD's: by their hashes)
        hashed = _known_by_hash(profile, kinds, bad, bad_texts)
        return GoodKinds(hashed, {}, {}, {})
    known: dict[bytes, int] = {}
    near: dict[bytes, int] = {}
    outlined: dict[bytes, int] = {}
    for start, texts in profile.texts.blocks(strip_cr=True):
        batch = kinds.keys(texts)
        for key_id, kind in enumerate(batch, start):
            if kind in wanted:
                known.setdefault(kind, key_id)
            if ends and _may_share(kind, ends):
                near.setdefault(kind, key_id)
            if named and not named.isdisjoint(kind.split()):  # (whole words: as outlines)
                outlined.setdefault(kind, key_id)
    examples: dict[Form, int] = {}
    for kind, key_id in near.items():
        for form in word_forms(kind):
            examples.setdefault(form, key_id)
    return GoodKinds(known, form_words(near), examples, outlined)


def _known_by_hash(
    profile: GoodProfile, kinds: KeyMaker, bad: list[bytes], bad_texts: list[bytes]
) -> dict[bytes, int]:
    """Each of ``bad``'s kinds (of ``bad_texts``) that GOOD's records have, with the
    first key's id: by their hashes, GOOD's from its kind index (a kind is its 128-bit
    hash, as a key is), none of GOOD's records read back."""
    table = profile.engine.key_table()  # (BAD's kinds numbered, in order of first occurrence)
    firsts = array("q", table.add(kinds.hashes(bad_texts), links=False))
    kind_of = [bad[k] for k in firsts]
    found = array("i", table.find(profile.kinds.hashes))  # (NONE: not one of BAD's)
    known: dict[bytes, int] = {}
    if found.count(NONE) < len(found):
        for key_id in compress(count(), map(NONE.__ne__, found)):
            known.setdefault(kind_of[found[key_id]], key_id)
    return known


Slot = tuple[bytes, bytes]  # the outline's words before and after a run of values


class Outlined(NamedTuple):
    """GOOD's kinds of one outline: the first of them, and per run of value words (before,
    between and after the outline's words) the runs they have there."""

    first: bytes
    runs: list[set[tuple[bytes, ...]]]


def _slots(kind: bytes) -> list[Slot]:
    """Each run of value words' place: the outline's words before and after it."""
    words = VALUE_WORD.sub(b"", kind).split()
    return list(zip([b"", *words], [*words, b""], strict=True))


def _new_run(
    kind: bytes, shaped: Outlined, slots: dict[Slot, set[tuple[bytes, ...]]]
) -> int | None:
    """The first run at which ``kind`` (of ``shaped``'s outline) has values GOOD's kinds
    of it never have there (-1: none); None when at such a run GOOD's kinds, of any
    outline, have one run of values only between the same two words: a run GOOD
    shows one way only is part of the kind, not a value."""
    first = -1
    for at, (run, slot) in enumerate(zip(outline_gaps(kind), _slots(kind), strict=True)):
        if tuple(run) not in shaped.runs[at]:
            if len(slots.get(slot, ())) < 2:
                return None
            first = at if first < 0 else first
    return first


def _good_outlines(
    kinds: dict[bytes, int], wanted: set[bytes]
) -> tuple[dict[bytes, Outlined], dict[Slot, set[tuple[bytes, ...]]]]:
    """Each of the ``wanted`` outlines that ``kinds`` have (their first kind of it and the
    runs of value words they have), and the runs ``kinds`` have at each place."""
    found: dict[bytes, Outlined] = {}
    slots: dict[Slot, set[tuple[bytes, ...]]] = {}
    for kind in kinds if wanted else ():
        runs = outline_gaps(kind)
        for slot, run in zip(_slots(kind), runs, strict=True):
            slots.setdefault(slot, set()).add(tuple(run))
        if (shape := outline(kind)) in wanted:
            group = found.setdefault(shape, Outlined(kind, [set() for _ in runs]))
            for seen, run in zip(group.runs, runs, strict=True):
                seen.add(tuple(run))
    return found, slots


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


def _masked_values(groups: ValueGroups, texts_of: Callable[[Sequence[int]], list[bytes]]) -> None:
    """The values of the groups of a kind GOOD shows: the first field (a class the kind
    masks) in which their records differ from GOOD's record, read from READ of them."""
    from seqdedup.budget.values import columns
    from seqdedup.config.normalize import VALUES, python_value_matches

    members: dict[int, list[int]] = {}
    for position, group in groups.group_of.items():
        if groups.distinct[group] == 0 and len(members.setdefault(group, [])) < READ:
            members[group].append(position)

    def matches(record: bytes) -> list[tuple[int, int, int]]:  # (a few records a group)
        return python_value_matches(record, VALUES)

    for group, positions in members.items():
        records = [groups.examples[group], *texts_of(positions)]
        found = columns(records, matches)
        if found:
            for value in found[0].values[1:]:  # (the first: GOOD's)
                _keep(groups, group, value)
