"""The kind of a line: its key with every class masked.

Timestamps, uuids, IP addresses, hex ids, numbers, paths and quoted values are each
replaced by their placeholder, and runs of spaces and tabs by one space (``--normalize
all,path,quoted,space``, after the run's own key steps), so that lines which differ only
in such values, or in the padding of a column, are one kind::

    2026-12-06 10:00:01 open /var/log/a.log user="bob" took 12 ms
    2026-12-06 10:00:02 open /srv/b.log user="ann" took 7 ms

are both ``<TIMESTAMP> open <PATH> user=<QUOTED> took <NUMBER> ms``. The budget counts
and shows kinds of line with it, and ``seqdedup diff`` tells a kind never seen from a
known kind with new values (docs/keys.md, "The kind of a line").
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from seqdedup.base.cengine import CEngine
from seqdedup.base.engine import SEED, Engine
from seqdedup.config.groups import KeyOptions
from seqdedup.keys.maker import KeyMaker, key_maker

KIND_CLASSES = "all,path,quoted"  # the classes of --normalize that mask a value
# (and runs of spaces as one: columns padded to a width say nothing of the kind)
KIND_STEP = KIND_CLASSES + ",space"


def kind_options(options: KeyOptions) -> KeyOptions:
    """The run's key steps, then every class masked: the key of a line's kind."""
    return options._replace(key_steps=(*options.key_steps, ("normalize", KIND_STEP)))


def kind_keys(options: KeyOptions, kernel: CEngine | None) -> KeyMaker:
    """The key maker of the kinds of a run's records (``.keys(records)``; its hashes, as
    ``seqdedup diff`` compares kinds, keyed with the run's secret like every key's)."""
    return key_maker(kind_options(options), kernel, SEED)


def kind_of(record: bytes) -> bytes:
    """The kind of one record with no key options (the definition, in Python)."""
    from seqdedup.config.normalize import EVERY, normalize_py  # (not at a run's start)

    return normalize_py(record, EVERY)


def kinds_of(records: list[bytes], engine: Engine) -> list[bytes]:
    """The kinds of ``records`` with no key options, by the engine that runs (the same
    bytes as :func:`kind_of`, the kernel's normalising where it is built)."""
    from seqdedup.config.normalize import EVERY

    normalize = engine.normalize
    return [normalize(record, EVERY) for record in records]


# A kind's *word forms*: the kind with one of its words (of WORDS or more) left out, as
# ANY. Where a log's kinds of one form take more than one word at that place, the word
# is a value, not part of the kind: a user name in ``Invalid user NAME from <IP>``.
WORDS = 3  # the words a kind needs before one of them can be a value
ANY = b"<...>"
VARIES = b""  # (a form whose word the kinds take more than one of)
Form = tuple[int, bytes]  # where the word was left out, and the kind without it


def word_forms(kind: bytes) -> list[Form]:
    """Each of a kind's words left out in turn (none under WORDS words)."""
    words = kind.split()
    if len(words) < WORDS:
        return []
    return [(at, b" ".join([*words[:at], ANY, *words[at + 1 :]])) for at in range(len(words))]


def form_words(kinds: Iterable[bytes]) -> dict[Form, bytes]:
    """Each form of ``kinds`` with the word they take there (VARIES: more than one)."""
    forms: dict[Form, bytes] = {}
    for kind in kinds:
        words = kind.split()
        for form in word_forms(kind):
            word = words[form[0]]
            if forms.setdefault(form, word) != word:
                forms[form] = VARIES
    return forms


def varying_form(kind: bytes, forms: dict[Form, bytes]) -> Form | None:
    """The first form of ``kind`` whose word varies among ``forms`` (None: none)."""
    return next((form for form in word_forms(kind) if forms.get(form) == VARIES), None)


def families(kinds: Iterable[bytes]) -> dict[bytes, bytes]:
    """Each of ``kinds`` with its family: the first of its forms whose word varies among
    them (``Invalid user <...> from <IP>``), or itself."""
    distinct = list(dict.fromkeys(kinds))
    forms = form_words(distinct)
    found = {}
    for kind in distinct:
        form = varying_form(kind, forms)
        found[kind] = form[1] if form is not None else kind
    return found


# A kind's *outline*: its words that hold no value, in order. A word holds one when it
# has a digit or a placeholder (``<``), or a dot, colon, slash, underscore, at or
# equals sign between two letters or digits: a program or a host (``chrome.exe``,
# ``d.dropbox.com:<NUMBER>``), a key and its value (``ret:true``), a state
# (``SUCCESS_CONTAINER_CLEANUP``). Kinds of one outline of WORDS words or more differ
# in their values only, however many and wherever: ``chrome.exe *<NUMBER> - ...``
# and ``Dropbox.exe - ...`` before the same ``open through proxy``. Which runs of
# values a kind may bring anew is the data's to say (seqdedup.diff.values).
VALUE_WORD = re.compile(rb"\S*(?:[0-9<]|[A-Za-z0-9][._:/@=][A-Za-z0-9])\S*")


def outline(kind: bytes) -> bytes:
    """The words of ``kind`` that hold no value (b"": fewer than WORDS of them)."""
    words = VALUE_WORD.sub(b"", kind).split()
    return b" ".join(words) if len(words) >= WORDS else b""


def outline_label(kind: bytes) -> bytes:
    """``kind`` with each run of its words that hold values written as ANY."""
    words: list[bytes] = []
    for word in kind.split():
        value = VALUE_WORD.fullmatch(word) is not None
        if not value or not words or words[-1] != ANY:
            words.append(ANY if value else word)
    return b" ".join(words)


def outline_gaps(kind: bytes) -> list[list[bytes]]:
    """The runs of value words before, between and after the outline's words."""
    gaps: list[list[bytes]] = [[]]
    for word in kind.split():
        if VALUE_WORD.fullmatch(word) is not None:
            gaps[-1].append(word)
        else:
            gaps.append([])
    return gaps


def outline_value(kind: bytes, other: bytes, first: int = 0) -> bytes:
    """The first run of value words of ``kind`` from run ``first`` on that differs from
    the same run of ``other`` (a kind of the same outline) by words it has, less the
    words both runs start and end with (b"": none)."""
    runs = zip(outline_gaps(kind)[first:], outline_gaps(other)[first:], strict=True)
    for mine, theirs in runs:
        while mine and theirs and mine[0] == theirs[0]:
            mine, theirs = mine[1:], theirs[1:]
        while mine and theirs and mine[-1] == theirs[-1]:
            mine, theirs = mine[:-1], theirs[:-1]
        if mine:
            return b" ".join(mine)
    return b""
