"""The tool calls of an agent's transcript, its format told from its content.

- Claude Code session JSONL: a ``tool_use`` block ``{name, input}``, its result the
  ``tool_result`` with its id; numbered by line (from 1).
- SWE-agent ``.traj``: ``trajectory[i].action`` and ``.observation``; numbered ``i``.
- mini-swe-agent ``.traj.json``: ``messages[m].extra.actions[].command``, its result
  ``messages[m+1]``; numbered by step (the assistant's messages, from 0).
- OpenHands event lists: an agent's action event (not a message), its result the
  observation it caused; numbered by list index.
- object JSONL with ``--action-key``/``--result-key``: the values at those dotted paths;
  numbered by line (from 1).

A JSON input (a tool's arguments) is written as ``key=value`` per field in its order,
each value as JSON, one field per line; a ``command`` field that is a string is the
action by itself (a shell tool's input is its command).
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

from seqdedup.base.errors import SeqdedupError
from seqdedup.loops.calls import Call


class Transcript(NamedTuple):
    """A transcript's calls, its format's name, and what its numbers count."""

    calls: list[Call]
    format: str
    unit: str  # "line", "record", "step", "event"
    spent: list[float | None]  # seconds each call took, where the transcript says
    tokens: list[int | None]  # tokens the model's turn of each call took, where said


def read_transcript(
    data: bytes, name: str, action_key: str | None = None, result_key: str | None = None
) -> Transcript:
    """The calls of the transcript ``data`` (``name`` for messages)."""
    text = data.decode("utf-8", "surrogateescape")
    if action_key is not None:
        return _keyed_lines(text, name, action_key, result_key)
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
    if isinstance(whole, dict) and isinstance(whole.get("trajectory"), list):
        return _swe_agent(whole["trajectory"])
    if isinstance(whole, dict) and isinstance(whole.get("messages"), list):
        return _mini_swe_agent(whole["messages"])
    if isinstance(whole, list) and any(
        isinstance(e, dict) and "source" in e and ("action" in e or "observation" in e)
        for e in whole
    ):
        return _openhands(whole)
    found = _claude_code(text)
    if found is not None:
        return found
    raise SeqdedupError(
        f"cannot tell the format of the transcript '{name}' (Claude Code JSONL, SWE-agent "
        ".traj, mini-swe-agent .traj.json, OpenHands events): give --action-key and "
        "--result-key for any other JSONL"
    )


def action_text(value: object) -> str:
    """A tool's input as the rule reads it (see the module)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        command = value.get("command")
        if isinstance(command, str):
            return command
        return "\n".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in value.items())
    return json.dumps(value, ensure_ascii=False)


_OUTPUTS = ("stdout", "stderr", "output", "content")  # (a shell tool's response fields)


def result_text(value: object) -> str:
    """A result as text: a string as it is; a list of content blocks, their texts; a
    response with output fields (``stdout``, ``stderr``, ``output``, ``content``), those
    that are strings, in that order; anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and any(isinstance(value.get(k), str) for k in _OUTPUTS):
        return "\n".join(str(value[k]) for k in _OUTPUTS if isinstance(value.get(k), str))
    if isinstance(value, list) and all(isinstance(b, dict) for b in value):
        return "\n".join(
            str(b.get("text", "")) if b.get("type", "text") == "text" else json.dumps(b)
            for b in value
        )
    return json.dumps(value, ensure_ascii=False)


def _swe_agent(trajectory: list[object]) -> Transcript:
    calls, spent = [], []
    for i, step in enumerate(trajectory):
        if not isinstance(step, dict) or not isinstance(step.get("action"), str):
            continue
        calls.append(Call("", step["action"], result_text(step.get("observation")), str(i)))
        took = step.get("execution_time")
        spent.append(float(took) if isinstance(took, int | float) else None)
    return Transcript(calls, "SWE-agent", "record", spent, [None] * len(calls))


# mini-swe-agent's result: the exit status, then the output
_RETURNCODE = re.compile(
    r"\s*<returncode>(-?\d+)</returncode>\s*<output>\n?(.*?)</output>\s*", re.S
)


def _mini_swe_agent(messages: list[object]) -> Transcript:
    calls, tokens = [], []
    step = -1
    for m, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        step += 1
        extra = message.get("extra")
        actions = extra.get("actions") if isinstance(extra, dict) else None
        commands = [
            str(a["command"])
            for a in actions or ()
            if isinstance(a, dict) and isinstance(a.get("command"), str)
        ]
        if not commands:
            continue
        after = messages[m + 1] if m + 1 < len(messages) else None
        result = result_text(after.get("content")) if isinstance(after, dict) else ""
        wrapped = _RETURNCODE.fullmatch(result)
        status = wrapped.group(1) if wrapped else ""
        output = wrapped.group(2) if wrapped else result
        when = _epoch(extra.get("timestamp")) if isinstance(extra, dict) else None
        calls.append(Call("bash", "\n".join(commands), output, str(step), when, status))
        response = extra.get("response") if isinstance(extra, dict) else None
        tokens.append(_usage(response.get("usage") if isinstance(response, dict) else None))
    return Transcript(calls, "mini-swe-agent", "step", [None] * len(calls), tokens)


def _epoch(value: object) -> str | None:
    """A time in seconds since 1970 (a number, or its text) as an ISO 8601 UTC time."""
    import datetime

    try:
        seconds = float(value)  # type: ignore[arg-type]
        moment = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return None
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _usage(usage: object) -> int | None:
    """The tokens of one model turn: ``total_tokens``, else input and output added up."""
    if not isinstance(usage, dict):
        return None
    total = usage.get("total_tokens")
    if isinstance(total, int):
        return total
    parts = [usage.get(k) for k in ("input_tokens", "output_tokens", "prompt_tokens")]
    counted = [p for p in parts if isinstance(p, int)]
    return sum(counted) if counted else None


_NOT_CALLS = {"message", "system", "think", "recall", "change_agent_state"}


def _openhands(events: list[object]) -> Transcript:
    results: dict[str, str] = {}
    for event in events:
        if isinstance(event, dict) and "observation" in event and "cause" in event:
            results[str(event["cause"])] = result_text(event.get("content"))
    calls = []
    for i, event in enumerate(events):
        if not isinstance(event, dict) or event.get("source") != "agent":
            continue
        kind = event.get("action")
        if not isinstance(kind, str) or kind in _NOT_CALLS:
            continue
        given = event.get("args")
        # (the thought is the model's prose, not the call)
        args = {k: v for k, v in given.items() if k != "thought"} if isinstance(given, dict) else {}
        result = results.get(str(event.get("id")), "")
        calls.append(Call(kind, action_text(args), result, str(i), _time(event)))
    return Transcript(calls, "OpenHands", "event", [None] * len(calls), [None] * len(calls))


def _claude_code(text: str) -> Transcript | None:
    """Claude Code's session JSONL (None when no line holds a tool call)."""
    uses: list[tuple[str, Call, int | None]] = []
    results: dict[str, str] = {}
    any_use = False
    for number, line in enumerate(text.splitlines(), 1):
        entry = _json_line(line)
        message = entry.get("message") if entry is not None else None
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                any_use = True
                call = Call(
                    str(block.get("name", "")),
                    action_text(block.get("input")),
                    "",
                    str(number),
                    _time(entry),
                )
                spent = _usage(message.get("usage")) if isinstance(message, dict) else None
                uses.append((str(block.get("id", "")), call, spent))
            elif block.get("type") == "tool_result":
                results[str(block.get("tool_use_id", ""))] = result_text(block.get("content"))
    if not any_use:
        return None
    calls = [call._replace(result=results.get(use, "")) for use, call, _ in uses]
    tokens = [spent for _, _, spent in uses]
    return Transcript(calls, "Claude Code", "line", [None] * len(calls), tokens)


def _keyed_lines(text: str, name: str, action_key: str, result_key: str | None) -> Transcript:
    calls = []
    for number, line in enumerate(text.splitlines(), 1):
        entry = _json_line(line)
        if entry is None:
            continue
        action = _at(entry, action_key)
        if action is None:
            continue
        result = _at(entry, result_key) if result_key else None
        calls.append(Call("", action_text(action), result_text(result), str(number), _time(entry)))
    if not calls:
        raise SeqdedupError(f"no line of '{name}' holds --action-key {action_key}")
    return Transcript(calls, "JSONL", "line", [None] * len(calls), [None] * len(calls))


def _at(entry: object, path: str) -> object:
    """The value at a dotted path (``message.content.0.text``), or None."""
    for part in path.split("."):
        if isinstance(entry, dict):
            entry = entry.get(part)
        elif isinstance(entry, list) and part.isdigit() and int(part) < len(entry):
            entry = entry[int(part)]
        else:
            return None
    return entry


def _json_line(line: str) -> dict[str, object] | None:
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    return entry if isinstance(entry, dict) else None


def _time(entry: object) -> str | None:
    stamp = entry.get("timestamp") if isinstance(entry, dict) else None
    return stamp if isinstance(stamp, str) else None
