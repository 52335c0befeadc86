"""``seqdedup loops --hook``: the loop rule on a live session, one tool call at a time,
as an agent host calls a hook (Claude Code's shape: the event's JSON on stdin).

``PostToolUse`` records the call that ran: its identity, shape, result and exact bytes
as digests, in the session's state. ``PreToolUse`` judges the call about to run: were
it to get the result an earlier call with the same tool and input got, would it go
round a loop the rule reports (its earlier iterations matched on actions *and*
results)? Then the answer names the loop.

The state of a session is one file under the user's state directory
(``$XDG_STATE_HOME/seqdedup/loops``, else ``~/.local/state/seqdedup/loops``), named by
a digest of the session id, created 0600 without following a link, locked while it is
read and written (two hooks of one session at once wait for each other), and bounded
to the last ``KEPT`` calls: a loop of the longest period needs its last iterations
only, so the work per call stays the same however long the session runs.

Digests stand for texts here (the state must stay small): BLAKE2b-128 of the masked
texts; two different calls share one only with a BLAKE2b collision (about 2^64 work),
and what a collision could do is a warning too many.
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
from collections.abc import Mapping
from typing import NamedTuple

try:  # (hashlib's own source of BLAKE2b, without loading OpenSSL: the hook starts per call)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - (an interpreter without it)
    from hashlib import blake2b

from seqdedup.base.errors import SeqdedupError, visible
from seqdedup.config.normalize import ALL
from seqdedup.engine.choice import chosen_engine
from seqdedup.loops.calls import Keyed, masked, shape_of
from seqdedup.loops.rule import MAX_PERIOD, Loop, LoopFinder
from seqdedup.loops.transcripts import action_text, result_text

REPEATS = 3  # iterations the rule needs (k >= 3)
KEPT = MAX_PERIOD * (REPEATS + 1)  # calls kept per session
PREVIEW = 60  # characters of a call's input kept to name it in a message


class Seen(NamedTuple):
    """A call as the state keeps it."""

    identity: str
    shape: str
    result: str  # "" for an empty result
    exact: str
    action: str  # (tool and masked input: what an upcoming call is matched by)
    raw: str  # (tool and input as they are)
    preview: str


class Verdict(NamedTuple):
    """What the hook answers: the loop the upcoming call would go round (or None), and
    the calls of the round it would end (their tools and the start of their inputs)."""

    loop: Loop | None
    calls: list[str]


def _digest(*parts: str) -> str:
    joined = "\0".join(parts).encode("utf-8", "surrogateescape")
    return blake2b(joined, digest_size=16).hexdigest()


def _masked(text: str, bits: int) -> str:
    """``text`` masked by the kernel where it is built: the Python twin compiles its
    patterns first, 17 ms of a hook's start."""
    return masked(text, bits, chosen_engine().normalize)


def seen_call(tool: str, action: str, result: str, bits: int = ALL, status: str = "") -> Seen:
    """A call's digests (masked with ``bits``)."""
    masked_action, masked_result = _masked(action, bits), _masked(result, bits)
    empty = not result.strip() and status in ("", "0")
    return Seen(
        _digest(tool, masked_action, masked_result, status),
        _digest(shape_of(tool, masked_action)),
        "" if empty else _digest(masked_result, status),
        _digest(tool, action, result, status),
        _digest(tool, masked_action),
        _digest(tool, action),
        _preview(tool, action),
    )


def _preview(tool: str, action: str) -> str:
    return visible(" ".join(f"{tool}: {action}".split()))[:PREVIEW]


def keyed_seen(calls: list[Seen]) -> Keyed:
    """The rule's numbers for calls kept as digests (equal digests: equal numbers)."""
    numbers: dict[str, int] = {"": 0}
    out = Keyed([], [], [], [])
    for at, call in enumerate(calls):
        out.identity.append(numbers.setdefault("i" + call.identity, len(numbers)))
        out.shape.append(numbers.setdefault("s" + call.shape, len(numbers)))
        out.result.append(numbers.setdefault("r" + call.result, len(numbers)) if call.result else 0)
        out.same_as_before.append(at > 0 and calls[at - 1].exact == call.exact)
    return out


def judge(history: list[Seen], tool: str, action: str, bits: int = ALL) -> Verdict:
    """Whether the call ``tool``/``action`` about to run would go round a loop: for
    each result an earlier call with the same tool and masked input got (most recent
    first), the rule on the history with that call added."""
    wanted, raw = _digest(tool, _masked(action, bits)), _digest(tool, action)
    tried: set[str] = set()
    for earlier in reversed(history):
        if earlier.action != wanted or earlier.result + earlier.identity in tried:
            continue
        tried.add(earlier.result + earlier.identity)
        # (its result taken to be the earlier one's: byte for byte too where its input is)
        exact = earlier.exact if earlier.raw == raw else _digest(raw, earlier.exact)
        upcoming = earlier._replace(exact=exact, raw=raw, preview=_preview(tool, action))
        calls = [*history, upcoming]
        last = len(calls) - 1
        for loop in LoopFinder(keyed_seen(calls)).loops():
            if loop.first <= last <= loop.last:
                # (the round this call would end: its calls and the extra one, if any)
                names = list(dict.fromkeys(c.preview for c in calls[last - loop.period : last + 1]))
                return Verdict(loop, names)
    return Verdict(None, [])


# -- the state of a session ---------------------------------------------------------
def state_dir(environ: Mapping[str, str] = os.environ) -> str:
    base = environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return os.path.join(base, "seqdedup", "loops")


class SessionState:
    """The calls kept for one session, read and written under a lock (a context
    manager: ``with SessionState(...) as state: state.calls ...``)."""

    def __init__(self, folder: str | os.PathLike[str], session_id: str) -> None:
        self.path = os.path.join(folder, f"{_digest(session_id)}.json")
        self.calls: list[Seen] = []
        self._fd = -1
        os.makedirs(folder, mode=0o700, exist_ok=True)
        # (the folder itself no link, this user's, written by no one else: a state
        # another user could plant or read would be theirs to steer)
        info = os.lstat(folder)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o022:
            raise SeqdedupError(
                f"the loop state folder {folder} is not a folder of this user's that only "
                "it may write (a link, or another owner)"
            )

    def __enter__(self) -> SessionState:
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        try:
            self._fd = os.open(self.path, flags, 0o600)
        except OSError as exc:
            raise SeqdedupError(f"cannot open the loop state {self.path}: {exc.strerror}") from None
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        data = b""
        while chunk := os.read(self._fd, 1 << 16):
            data += chunk
        try:
            rows = json.loads(data) if data.strip() else []
            self.calls = [Seen(*row) for row in rows][-KEPT:]
        except (ValueError, TypeError):
            self.calls = []  # (a damaged state is a session started again)
        return self

    def save(self) -> None:
        data = json.dumps([list(call) for call in self.calls[-KEPT:]]).encode()
        os.lseek(self._fd, 0, os.SEEK_SET)
        os.ftruncate(self._fd, 0)
        os.write(self._fd, data)

    def __exit__(self, *exc: object) -> None:
        os.close(self._fd)  # (closing it lets the lock go)


def hook_event(
    event: Mapping[str, object], folder: str | os.PathLike[str], bits: int = ALL
) -> Verdict:
    """One hook call: ``PostToolUse`` records the call, ``PreToolUse`` judges it."""
    name = event.get("hook_event_name")
    session = event.get("session_id")
    tool = event.get("tool_name")
    if not isinstance(session, str) or not isinstance(tool, str):
        raise SeqdedupError("the hook event has no session_id or tool_name")
    action = action_text(event.get("tool_input"))
    with SessionState(folder, session) as state:
        if name == "PostToolUse":
            result = result_text(event.get("tool_response"))
            state.calls.append(seen_call(tool, action, result, bits))
            state.save()
            return Verdict(None, [])
        if name == "PreToolUse":
            return judge(state.calls, tool, action, bits)
    raise SeqdedupError(f"the hook event {name!r} is neither PreToolUse nor PostToolUse")
