"""Whether GOOD and BAD can be compared at all: when fewer than a tenth of BAD's records
have a key GOOD shows, the answer's first line says so and why, from the data.

Most of BAD "new" is rarely a finding: the two sides are keyed apart by something that
differs on every line (a timestamp the key does not mask, an id, a counter) or they are
different logs. The reason is looked for in a sample of each side's keys: the field in
which a line of BAD differs from a line of GOOD, the rest of the two the same
(:func:`seqdedup.keys.fields.differing_field`, the helper the run's own hint uses), and a
``--mask`` that hides it; where no such pair exists, the sides look like different
formats, unless most of BAD's lines are kinds of line GOOD shows
(:mod:`seqdedup.keys.kind`): then values differ in more than one field.
"""

from __future__ import annotations

from itertools import islice

from seqdedup.config.groups import KeyOptions
from seqdedup.config.normalize import KeySteps
from seqdedup.diff.changes import Diff
from seqdedup.diff.compare import Bad
from seqdedup.diff.profile import GoodProfile
from seqdedup.keys.fields import SEARCH, differing_field
from seqdedup.keys.kind import KIND_CLASSES, kind_of

LINE_UP_BELOW = 0.10  # a share of BAD's records with a key GOOD shows under this: apart
KINDS_ALIKE = 0.5  # of BAD's sampled lines, at least this share of kinds GOOD shows


def checked(diff: Diff, profile: GoodProfile, bad: Bad, keys: KeyOptions) -> Diff:
    """``diff`` with the share of BAD that lines up with GOOD, and why it does not when
    that share is under LINE_UP_BELOW."""
    share = lined_up(bad)
    apart = ""
    if share < LINE_UP_BELOW and not diff.bad_empty:
        apart = why_apart(profile, bad, keys)
    return diff._replace(lined_up=share, apart=apart)


def lined_up(bad: Bad) -> float:
    """The share of BAD's records whose key GOOD shows (1.0 for an empty BAD)."""
    return 1.0 - len(bad.new_keys) / len(bad.ids) if bad.ids else 1.0


def why_apart(profile: GoodProfile, bad: Bad, keys: KeyOptions) -> str:
    """Why the sides do not line up, in one clause, from samples of both (compared as
    ``keys`` say)."""
    steps = KeySteps(keys.key_steps)
    good = steps.apply([text.removesuffix(b"\r") for text in islice(profile.texts, SEARCH)])
    bad_records = [bad.record(p).removesuffix(b"\r") for p in islice(bad.new_keys, SEARCH)]
    bad_keys = steps.apply(bad_records)
    sides = [0] * len(good) + [1] * len(bad_keys)
    field = differing_field(good + bad_keys, sides)
    if field is None:
        return _by_kinds(good, bad_keys)
    # a field the classes mask (a time, a number, an id, a path): the class option
    option = f"--mask '{field.pattern}'"
    for classes in ("all", KIND_CLASSES):
        masked = KeySteps((("normalize", classes),)).apply(list(field.values))
        if masked != list(field.values) and ("normalize", classes) not in keys.key_steps:
            option = f"--normalize {classes}"
            break
    return (
        f"lines of the two differ in one field ({field.shown()}, ...): {option} would line them up"
    )


def _by_kinds(good: list[bytes], bad: list[bytes]) -> str:
    """No line of BAD is one of GOOD with one field changed: whether BAD's lines are
    GOOD's kinds of line (:mod:`seqdedup.keys.kind`) with values changed in more than one
    field, or other kinds."""
    known = {kind_of(key) for key in good}
    share = sum(1 for key in bad if kind_of(key) in known) / len(bad) if bad else 0.0
    if share >= KINDS_ALIKE:
        return (
            f"{int(share * 100)}% of the lines of BAD sampled are kinds of line GOOD shows, "
            f"with other values in more than one field: --normalize {KIND_CLASSES} "
            "would line them up"
        )
    return (
        "no line of BAD is a line of GOOD with one field changed: "
        "the two look like different logs, or keyed apart in more than one field"
    )
