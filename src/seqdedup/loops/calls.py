"""A tool call as the loop rule sees it: its identity (the tool, its input and its
result, with timestamps, ids and numbers masked) and its shape (the tool and the first
two tokens of its masked input, with paths and quoted strings as placeholders).

Identities are compared as the masked text itself (each distinct one numbered in
order of appearance), never as a digest: two calls are the same exactly when their
masked texts are.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import NamedTuple

from seqdedup.config.normalize import ALL, normalize_py, parse_classes

Normalize = Callable[[bytes, int], bytes]


class Call(NamedTuple):
    """One tool call of a transcript: the tool's name, its input as text, its result as
    text ("" for none), where it is in the file's own numbering, when (the transcript's
    timestamp, or None), and its exit status where the transcript gives one apart from
    the output (never masked: a failed command is not a successful one)."""

    tool: str
    action: str
    result: str
    record: str = ""
    time: str | None = None
    status: str = ""


class Keyed(NamedTuple):
    """Each call's identity, shape and masked result, as small numbers (equal numbers:
    equal texts), and whether it is byte for byte the call before it."""

    identity: list[int]
    shape: list[int]
    result: list[int]  # (0: an empty result)
    same_as_before: list[bool]


# a leading "cd X &&" (or ";"), dropped before the shape's tokens are taken
_CD = re.compile(r"^\s*cd\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s*(?:&&|;)\s*")
_QUOTED = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'[^']*'")
QUOTED_PLACEHOLDER = "<Q>"
PATH_PLACEHOLDER = "<P>"


def mask_bits(normalize: str) -> int:
    """The classes ``normalize`` names (``--normalize``'s words; "none" or "": none)."""
    return 0 if normalize.strip() in ("", "none") else parse_classes(normalize)


def masked(text: str, bits: int = ALL, normalize: Normalize = normalize_py) -> str:
    """``text`` with the classes ``bits`` masked (timestamps, ids, numbers by default);
    ``normalize``: the kernel's, which gives the same bytes, where it is built."""
    data = text.encode("utf-8", "surrogateescape")
    return normalize(data, bits).decode("utf-8", "surrogateescape")


def shape_of(tool: str, masked_action: str) -> str:
    """The tool and the first two tokens of its masked input, after a leading
    ``cd X &&`` is dropped, quoted strings and tokens holding ``/`` or ``.`` replaced
    by placeholders."""
    text = _CD.sub("", masked_action, count=1)
    text = _QUOTED.sub(f" {QUOTED_PLACEHOLDER} ", text)
    tokens = [PATH_PLACEHOLDER if "/" in t or "." in t else t for t in text.split()[:2]]
    return "\0".join([tool, *tokens])


def keyed(calls: Sequence[Call], bits: int = ALL, kernel: ModuleType | None = None) -> Keyed:
    """The identities, shapes and results of ``calls`` (masked with ``bits``, by the
    ``kernel`` where given)."""
    normalize: Normalize = getattr(kernel, "normalize", None) or normalize_py
    identities: dict[tuple[str, str, str, str], int] = {}
    shapes: dict[str, int] = {}
    shape_by_action: dict[tuple[str, str], int] = {}
    results: dict[str, int] = {"": 0}
    out = Keyed([], [], [], [])
    before: Call | None = None
    for call in calls:
        action, result = masked(call.action, bits, normalize), masked(call.result, bits, normalize)
        identity = (call.tool, action, result, call.status)
        out.identity.append(identities.setdefault(identity, len(identities)))
        shape = shape_by_action.get((call.tool, action))
        if shape is None:  # (a masked input seen before has its shape: in a loop, most)
            shape = shapes.setdefault(shape_of(call.tool, action), len(shapes))
            shape_by_action[call.tool, action] = shape
        out.shape.append(shape)
        # (empty: no output and no failure; the most common result of all)
        empty = not call.result.strip() and call.status in ("", "0")
        out.result.append(
            0 if empty else results.setdefault(result + "\0" + call.status, len(results))
        )
        out.same_as_before.append(before is not None and _exactly(call, before))
        before = call
    return out


def _exactly(call: Call, other: Call) -> bool:
    """Whether two calls are byte for byte the same in action and result."""
    return (call.tool, call.action, call.result, call.status) == (
        other.tool,
        other.action,
        other.result,
        other.status,
    )
