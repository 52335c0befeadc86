"""``seqdedup loops [TRANSCRIPT...]``: an agent repeating itself (docs/loops.md). Exit
status: 0 no loop, 1 a loop found, 2 an error (one line on stderr, nothing on stdout).
"""

from __future__ import annotations

import sys
from typing import IO, TYPE_CHECKING, TextIO

from seqdedup.base.errors import SeqdedupError, exit_status, visible

if TYPE_CHECKING:
    import argparse

    from seqdedup.loops.hook import Verdict
    from seqdedup.loops.rule import Loop
    from seqdedup.loops.transcripts import Transcript

PROG = "seqdedup loops"
EXIT_ERROR = 2
SHOWN = 72  # characters of an action or a result shown in the text answer
EXAMPLES = """examples:
  seqdedup loops run.traj                         an agent's transcript (format told from it)
  seqdedup loops --format json sessions/*.jsonl    every loop, as JSON
  seqdedup loops --action-key tool.input --result-key tool.output log.jsonl
exit status: 0 no loop, 1 a loop found, 2 an error"""


def build_loops_parser() -> argparse.ArgumentParser:
    from seqdedup.cli.parsing import _Formatter, _Parser, _Version

    parser = _Parser(
        prog=PROG,
        description="Find an agent repeating itself: stretches of tool calls with the same "
        "inputs and results (timestamps, ids and numbers masked) that repeat the stretch "
        "before them, at any period up to 64, one stray call allowed per repeat.",
        epilog=EXAMPLES,
        formatter_class=_Formatter,
        allow_abbrev=False,
    )
    parser.add_argument(
        "inputs",
        nargs="*",
        default=["-"],
        metavar="TRANSCRIPT",
        help="Claude Code session JSONL, SWE-agent .traj, mini-swe-agent .traj.json, "
        "OpenHands events, or JSONL with --action-key; '-' (the default) for standard input",
    )
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="the answer's form"
    )
    parser.add_argument(
        "--action-key",
        metavar="PATH",
        help="any JSONL: the dotted path of each line's action (e.g. tool.input)",
    )
    parser.add_argument(
        "--result-key", metavar="PATH", help="with --action-key: the path of its result"
    )
    parser.add_argument(
        "--normalize",
        default="all",
        metavar="CLASSES",
        help="what is masked in a call before calls are compared (default all: "
        "timestamps, uuids, ips, hex, numbers; 'none' for the exact text)",
    )
    hook = parser.add_argument_group("as a hook of an agent host (docs/loops.md)")
    hook.add_argument(
        "--hook",
        action="store_true",
        help="read one hook event (JSON) on stdin: PostToolUse records the call, PreToolUse "
        "warns when the call would go round a loop; any error lets the call through",
    )
    hook.add_argument(
        "--block",
        action="store_true",
        help="with --hook: refuse a call that would go round a loop (exit 2, the reason on "
        "stderr) instead of warning",
    )
    parser.add_argument(
        "-V", "--version", action=_Version, nargs=0, help="print the version and the engine"
    )
    return parser


def run_loops(
    argv: list[str],
    stdin: IO[bytes] | None,
    stdout: IO[bytes],
    stderr: TextIO,
    own_stdout: bool = False,
    shell: bool = False,
) -> int:
    """``seqdedup loops ARGS``; the exit status. ``shell``: the process's own command
    line, where a shell may be asking for completions."""

    def body() -> int:
        from seqdedup.loops.calls import mask_bits

        if "--hook" in argv:  # (an agent host's hook fails open, whatever goes wrong)
            return _hook(argv, stdin, stdout, stderr)
        parser = build_loops_parser()
        if shell:
            from seqdedup.cli.completion import answer

            answer(parser)
        args = parser.parse_args(argv)
        if args.block:
            raise SeqdedupError("--block needs --hook")
        if args.result_key is not None and args.action_key is None:
            raise SeqdedupError("--result-key needs --action-key")
        bits = mask_bits(args.normalize)  # (a bad word: one line, before any read)
        found = [_found(name, stdin, args, bits) for name in args.inputs]
        text = _as_json(found) if args.format == "json" else _as_text(found)
        stdout.write(text.encode("utf-8", "surrogateescape"))
        stdout.flush()
        return 1 if any(loops for _, _, loops in found) else 0

    return exit_status(PROG, body, stderr, own_stdout, error=EXIT_ERROR)


Found = tuple[str, "Transcript", "list[Loop]"]


def _hook(argv: list[str], stdin: IO[bytes] | None, stdout: IO[bytes], stderr: TextIO) -> int:
    """``--hook``: exit 0 (a warning for the model in the host's JSON on stdout), or 2
    with the reason on stderr for a loop under ``--block``. On an error: exit 0 and one
    line on stderr (a broken hook must not stop the agent)."""
    import json  # (here: a plain run of seqdedup imports this module for completion)

    try:
        from seqdedup.loops.calls import mask_bits
        from seqdedup.loops.hook import hook_event, state_dir

        block, normalize = _hook_words(argv)
        data = (stdin if stdin is not None else sys.stdin.buffer).read()
        event = json.loads(data)
        if not isinstance(event, dict):
            raise SeqdedupError("the hook event is not a JSON object")
        verdict = hook_event(event, state_dir(), mask_bits(normalize))
    except (Exception, SystemExit) as exc:  # (fails open, and says why)
        reason = str(exc) if isinstance(exc, SeqdedupError) else f"{type(exc).__name__}: {exc}"
        stderr.write(f"{PROG} --hook: {visible(reason)} (the call goes ahead)\n")
        return 0
    if verdict.loop is None:
        return 0
    if block:
        stderr.write(_warning(verdict) + "\n")
        return 2
    answer = {"hookEventName": event.get("hook_event_name"), "additionalContext": _warning(verdict)}
    stdout.write(json.dumps({"hookSpecificOutput": answer}).encode() + b"\n")
    stdout.flush()
    return 0


def _hook_words(argv: list[str]) -> tuple[bool, str]:
    """``--hook``'s words: ``--block`` and ``--normalize CLASSES``. Read here, not by
    argparse, whose import and parser are a tenth of the hook's start-up (a host starts
    it on every call); ``--help`` shows them with the others."""
    block, normalize, words = False, "all", iter(argv)
    for word in words:
        if word == "--block":
            block = True
        elif word == "--normalize" or word.startswith("--normalize="):
            given = word.partition("=")[2] if "=" in word else next(words, None)
            if given is None:
                raise SeqdedupError("--normalize needs its classes")
            normalize = given
        elif word != "--hook":
            raise SeqdedupError(f"--hook takes --block and --normalize only, not {word!r}")
    return block, normalize


def _found(name: str, stdin: IO[bytes] | None, args: argparse.Namespace, bits: int) -> Found:
    if name == "-":
        if stdin is None and sys.stdin is None:
            raise SeqdedupError("standard input is closed: name a transcript")
        data = (stdin if stdin is not None else sys.stdin.buffer).read()
    else:
        try:
            with open(name, "rb") as f:
                data = f.read()
        except OSError as exc:
            raise SeqdedupError(f"cannot read '{name}': {exc.strerror or exc}") from None
    return (name, *loops_of(data, name, bits, args.action_key, args.result_key))


def loops_of(
    data: bytes, name: str, bits: int, action_key: str | None = None, result_key: str | None = None
) -> tuple[Transcript, list[Loop]]:
    """A transcript's calls and loops (``bits``: the classes masked)."""
    from seqdedup.engine.choice import chosen_engine
    from seqdedup.loops.calls import keyed
    from seqdedup.loops.rule import LoopFinder
    from seqdedup.loops.transcripts import read_transcript

    transcript = read_transcript(data, name, action_key, result_key)
    return transcript, LoopFinder(keyed(transcript.calls, bits, chosen_engine())).loops()


def _where(transcript: Transcript, loop: Loop) -> tuple[str, str]:
    calls = transcript.calls
    return calls[loop.first].record, calls[loop.last].record


def _seconds(transcript: Transcript, loop: Loop) -> float | None:
    """The time spent inside the loop, where the transcript says: from its first call's
    timestamp to its last's, else the calls' own durations added up."""
    from seqdedup.config.normalize import timestamp_seconds

    calls = transcript.calls
    first, last = calls[loop.first].time, calls[loop.last].time
    if first and last:
        start, end = timestamp_seconds(first), timestamp_seconds(last)
        if start is not None and end is not None:
            return end - start
    spent = transcript.spent[loop.first : loop.last + 1]
    return sum(s for s in spent if s is not None) if any(s is not None for s in spent) else None


def _warning(verdict: Verdict) -> str:
    """What the model is told of a call that would go round a loop."""
    loop, names = verdict.loop, verdict.calls
    assert loop is not None
    shown = "; ".join(names[:4]) + (f"; and {len(names) - 4} more" if len(names) > 4 else "")
    return (
        f"seqdedup loops: this call would make round {loop.iterations} of a loop of period "
        f"{loop.period} whose calls got the same results each round ({shown}). Try "
        "something different."
    )


def _tokens(transcript: Transcript, loop: Loop) -> int | None:
    """The model's tokens spent inside the loop, where the transcript says."""
    counted = [t for t in transcript.tokens[loop.first : loop.last + 1] if t is not None]
    return sum(counted) if counted else None


def _brief(text: str) -> str:
    line = visible(" ".join(text.split()))
    return line if len(line) <= SHOWN else line[: SHOWN - 3] + "..."


def _as_text(found: list[Found]) -> str:
    out = []
    for name, transcript, loops in found:
        unit = transcript.unit
        if not loops:
            out.append(f"{name}: no loop in {len(transcript.calls):,} calls ({transcript.format})")
        for loop in loops:
            first, last = _where(transcript, loop)
            head = (
                f"{name}: a loop of period {loop.period}, {loop.iterations} iterations, "
                f"{unit}s {first}-{last}"
            )
            if loop.inserted:
                extra = ", ".join(transcript.calls[i].record for i in loop.inserted)
                head += f" ({unit}{'s' * (len(loop.inserted) > 1)} {extra} between)"
            seconds, tokens = _seconds(transcript, loop), _tokens(transcript, loop)
            if seconds is not None:
                head += f"; {seconds:,.1f} s inside"
            if tokens is not None:
                head += f"; {tokens:,} tokens"
            out.append(head)
            out.append("  one iteration:")
            for i in loop.calls:
                call = transcript.calls[i]
                tool = f"{call.tool}: " if call.tool else ""
                status = f" [exit {call.status}]" if call.status not in ("", "0") else ""
                result = _brief(call.result) or "(empty)"
                out.append(
                    f"    {unit} {call.record}: {tool}{_brief(call.action)} -> {result}{status}"
                )
    return "".join(line + "\n" for line in out)


def answer_of(name: str, transcript: Transcript, loops: list[Loop]) -> dict[str, object]:
    """One transcript's answer as data (``--format json``, the MCP ``loops`` tool)."""
    calls = transcript.calls
    return {
        "transcript": name,
        "format": transcript.format,
        "unit": transcript.unit,
        "calls": len(calls),
        "loops": [
            {
                "period": loop.period,
                "iterations": loop.iterations,
                "first": calls[loop.first].record,
                "last": calls[loop.last].record,
                "inserted": [calls[i].record for i in loop.inserted],
                "first_time": calls[loop.first].time,
                "last_time": calls[loop.last].time,
                "seconds": _seconds(transcript, loop),
                "tokens": _tokens(transcript, loop),
                "iteration": [
                    {
                        "record": calls[i].record,
                        "tool": calls[i].tool,
                        "action": calls[i].action,
                        "result": calls[i].result,
                        "status": calls[i].status or None,
                    }
                    for i in loop.calls
                ],
            }
            for loop in loops
        ],
    }


def _as_json(found: list[Found]) -> str:
    import json

    answer = [answer_of(name, transcript, loops) for name, transcript, loops in found]
    return json.dumps({"transcripts": answer}, indent=2, ensure_ascii=False) + "\n"


def entry_point() -> None:
    """``seqdedup loops`` as the console script starts it, without the modules of a
    run (an agent host starts the hook on every call: start-up is most of its time);
    streams and signals as ``seqdedup``'s own entry point sets them."""
    import os

    from seqdedup.base.stopping import stop_on_termination_signals
    from seqdedup.cli.sinks import Messages

    stop_on_termination_signals(defer_first=True)
    opened = sys.stderr if sys.stderr is not None else open(os.devnull, "w")  # noqa: SIM115
    err: TextIO = Messages(opened)  # type: ignore[assignment]
    if sys.stdout is None:
        err.write(f"{PROG}: standard output is closed: nowhere to write the answer\n")
        sys.exit(EXIT_ERROR)
    sys.exit(run_loops(sys.argv[2:], None, sys.stdout.buffer, err, own_stdout=True, shell=True))
