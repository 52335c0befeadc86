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
from typing import NamedTuple

from seqdedup.base.engine import Engine
from seqdedup.config.normalize import ALL, normalize_py, parse_classes
from seqdedup.engine.pyengine import PYTHON

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


# a leading "cd X &&" (or ";"), dropped before the shape's tokens are taken; quoted
# strings (compiled when first needed: the hook starts once per call)
_CD = r"^\s*cd\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s*(?:&&|;)\s*"
_QUOTED = r"\"(?:[^\"\\]|\\.)*\"|'[^']*'"
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
    text = masked_action
    if text.lstrip().startswith("cd"):  # (each pattern tried only where it may match)
        text = re.sub(_CD, "", text, count=1)
    if '"' in text or "'" in text:
        text = re.sub(_QUOTED, f" {QUOTED_PLACEHOLDER} ", text)
    tokens = [PATH_PLACEHOLDER if "/" in t or "." in t else t for t in text.split(None, 2)[:2]]
    return "\0".join([tool, *tokens])


def keyed(calls: Sequence[Call], bits: int = ALL, engine: Engine = PYTHON) -> Keyed:
    """The identities, shapes and results of ``calls`` (masked with ``bits`` by
    ``engine``)."""
    normalize: Normalize = engine.normalize
    identities: dict[tuple[str, bytes, bytes, str], int] = {}
    shapes: dict[str, int] = {}
    shape_by_action: dict[tuple[str, bytes], int] = {}
    results: dict[tuple[bytes, str], int] = {}
    out = Keyed([], [], [], [])

    def masked_all(texts: list[str]) -> list[bytes]:
        # (masked texts compared as the kernel's bytes: decoded only for a new shape)
        return [normalize(t.encode("utf-8", "surrogateescape"), bits) if t else b"" for t in texts]

    actions = masked_all([call.action for call in calls])
    results_masked = masked_all([call.result for call in calls])
    before: Call | None = None
    for call, action, result in zip(calls, actions, results_masked, strict=True):
        tool, status = call.tool, call.status
        out.identity.append(identities.setdefault((tool, action, result, status), len(identities)))
        shape = shape_by_action.get((tool, action))
        if shape is None:  # (a masked input seen before has its shape: in a loop, most)
            text = action.decode("utf-8", "surrogateescape")
            shape = shapes.setdefault(shape_of(tool, text), len(shapes))
            shape_by_action[tool, action] = shape
        out.shape.append(shape)
        # (empty: no output and no failure; the most common result of all)
        empty = status in ("", "0") and not call.result.strip()
        out.result.append(0 if empty else results.setdefault((result, status), len(results) + 1))
        out.same_as_before.append(
            before is not None
            and call.action == before.action
            and call.result == before.result
            and (tool, status) == (before.tool, before.status)
        )
        before = call
    return out
