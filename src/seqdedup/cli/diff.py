"""``seqdedup diff GOOD... BAD``: what changed in BAD since the good runs (docs/diff.md).

Its own options (the keys' and ``--stream-by``'s are a run's), no settings files. Exit
status as ``diff``, ``cmp`` and ``grep`` give theirs: 0 nothing changed, 1 something
did, 2 an error (one line on stderr, nothing on stdout); 130 and 128 + N on signals.
"""

from __future__ import annotations

import argparse
from typing import IO, TYPE_CHECKING, TextIO

from seqdedup.base.errors import ReaderGone, SeqdedupError, UsageError, exit_status, visible

if TYPE_CHECKING:
    from seqdedup.base.tokens import TokenCounter
    from seqdedup.config.settings import Config
    from seqdedup.diff.compare import DiffOptions

PROG = "seqdedup diff"
EXIT_ERROR = 2
EXAMPLES = """examples:
  seqdedup diff --normalize all green.log failed.log    what the failing run did differently
  seqdedup diff --normalize all lib/ today.log          against a library (seqdedup -l lib/)
  make test 2>&1 | seqdedup diff last-green.log         BAD from standard input
  seqdedup diff --budget 8k good/ bad.log               the answer for a model's context

exit status: 0 nothing changed, 1 something changed, 2 an error (as diff and cmp)"""
# A run's key and stream options that diff does not offer (said so in one line)
REFUSED = {
    "show_keys": "--show-keys",
    "hash_transform": "--hash-transform",
    "transform_timeout": "--transform-timeout",
    "stream_idle": "--stream-idle",
    "max_streams": "--max-streams",
    "per_stream": "--per-stream",
}


def build_diff_parser() -> argparse.ArgumentParser:
    from seqdedup.cli.options import key_options, stream_options
    from seqdedup.cli.parsing import _Formatter, _Parser, _Version

    parser = _Parser(
        prog=PROG,
        description="What changed in BAD since the good runs: new records and blocks "
        "(verbatim, with line numbers), known sequences far more or less often, sequences "
        "that always ran whole and now break; the rest folded as known.",
        epilog=EXAMPLES,
        formatter_class=_Formatter,
        allow_abbrev=False,
    )
    parser.add_argument(
        "inputs",
        nargs="+",
        metavar="FILE",
        help="GOOD: files, folders (each file an input) or libraries (a folder with "
        "seqdedup.sqlite), then BAD: a file, or '-' (the default) for standard input",
    )
    _change_options(parser)
    key_options(parser)
    stream_options(parser)
    _output_options(parser)
    parser.add_argument(
        "-V", "--version", action=_Version, nargs=0, help="print the version and the engine"
    )
    for action in parser._actions:
        if action.dest in REFUSED:
            action.help = argparse.SUPPRESS
    return parser


def _change_options(parser: argparse.ArgumentParser) -> None:
    from seqdedup.config.settings import window_value

    change = parser.add_argument_group("what counts as a change")
    change.add_argument(
        "-w",
        "--window-size",
        type=window_value,
        default=1,
        metavar="N",
        help="new records repeating new material shown before, N records at a time, are "
        "counted instead of shown (default 1: each new record once)",
    )
    change.add_argument(
        "--min-bytes",
        type=int,
        default=None,
        metavar="B",
        help="with -w: count such a repeat only when its keys hold at least B bytes",
    )
    change.add_argument(
        "--factor",
        type=float,
        default=2.0,
        metavar="X",
        help="a known sequence is more or less often when its rate changed X times or "
        "more either way (default 2)",
    )
    change.add_argument(
        "--min-count",
        type=int,
        default=4,
        metavar="N",
        help="with --factor: only when the side it is more frequent on shows it at least N "
        "times (default 4)",
    )
    change.add_argument(
        "--per",
        choices=("auto", "input", "hour"),
        default="auto",
        help="rates per input, or per hour of the inputs' timestamps (default auto: per "
        "hour when each side's timestamps span an hour or more)",
    )


def _output_options(parser: argparse.ArgumentParser) -> None:
    from seqdedup.cli.parsing import max_input_option, token_count

    output = parser.add_argument_group("output")
    output.add_argument(
        "--format", choices=("text", "json"), default="text", help="the answer's form"
    )
    output.add_argument(
        "--budget",
        type=token_count,
        default=None,
        metavar="N",
        help="the text answer within N tokens (8k = 8,000): changes first, then their "
        "records; what does not fit is said with the lines of BAD that hold it",
    )
    output.add_argument(
        "--tokenizer",
        default=None,
        metavar="NAME",
        help="with --budget: count with this vocabulary (o200k_base, cl100k_base) or "
        "characters, instead of the built-in estimate",
    )
    output.add_argument(
        "--report", metavar="FILE.html", help="also draw the answer as one offline page"
    )
    max_input_option(
        output,
        "seqdedup diff reads each input once and sets its records aside, in memory up to "
        "1M, beyond that in the temporary folder (TMPDIR)",
    )


def run_diff(
    argv: list[str],
    stdin: IO[bytes] | None,
    stdout: IO[bytes],
    stderr: TextIO,
    own_stdout: bool = False,
    shell: bool = False,
) -> int:
    """``seqdedup diff ARGS``; the exit status. ``shell``: the process's own command
    line, where a shell may be asking for completions."""

    def body() -> int:
        parser = build_diff_parser()
        if shell:
            from seqdedup.cli.completion import answer

            answer(parser)
        args = parser.parse_args(argv)
        from seqdedup.cli.options import check_refused

        check_refused(parser, args, REFUSED)
        from seqdedup.base.stopping import reopen_on_hangup, started

        reopen_on_hangup(None)
        started()  # (a signal ends the command: half an answer would mislead)
        return _run(args, stdin, stdout, stderr)

    return exit_status(PROG, body, stderr, own_stdout, error=EXIT_ERROR)


def _run(
    args: argparse.Namespace, stdin: IO[bytes] | None, stdout: IO[bytes], stderr: TextIO
) -> int:
    from seqdedup.budget.input import MAX_WHOLE
    from seqdedup.diff.inputs import compared, keying_for, line_ends, read_bad, read_good
    from seqdedup.diff.sanity import checked
    from seqdedup.diff.text import as_json, as_text

    config, options = _settings(args)
    good, bad_name = (
        (args.inputs[:-1], args.inputs[-1]) if len(args.inputs) > 1 else (args.inputs, "-")
    )
    if "-" in good:
        raise UsageError("standard input ('-') can only be BAD, the last input")
    page = None
    if args.report is not None:
        from seqdedup.diff.page import DiffPage

        page = DiffPage(args.report)  # (its path and packages checked before reading)
    keying = keying_for(config)
    notes: list[str] = []
    limit = args.max_input or MAX_WHOLE
    profile = read_good(good, config, keying, stdin, notes, limit)
    for note in notes:
        stderr.write(f"{PROG}: {visible(note)}\n")
    if not profile.counts:  # (exit 2: no good run to compare with is no answer)
        raise SeqdedupError(f"GOOD holds no record ({', '.join(good)}): nothing to compare with")
    good_ends = keying.records_seen, keying.cr_ended
    bad, source = read_bad(bad_name, config, keying, stdin, profile, limit)
    bad_ends = keying.records_seen - good_ends[0], keying.cr_ended - good_ends[1]
    diff = compared(profile, bad, options, config, keying)
    diff = diff._replace(line_ends=line_ends(good_ends, bad_ends))
    diff = checked(diff, profile, bad, config.key_options)
    shown_bad = "standard input" if bad_name == "-" else bad_name
    if args.format == "json":
        text = as_json(diff, shown_bad, good)
    else:
        counter = _counter(args)
        text = as_text(diff, shown_bad, good, args.budget, counter)
        used = counter(text.encode("utf-8", "surrogateescape")) if counter is not None else 0
        if used > (args.budget or 0) > 0:
            stderr.write(f"{PROG}: the shortest answer takes {used} tokens, over --budget\n")
    from seqdedup.cli.sinks import Output

    try:
        Output(stdout).write(text.encode("utf-8", "surrogateescape"))  # (a full disk: one line)
    except BrokenPipeError as closed:  # (| head: the reader went, the answer's status stays)
        raise ReaderGone(1 if diff.changed else 0) from closed
    if page is not None:
        page.write(diff, shown_bad, good, source.count)
    source.close()  # (BAD's records set aside: a temporary file, past a few MB)
    profile.close()  # (and GOOD's first records)
    return 1 if diff.changed else 0


def _settings(args: argparse.Namespace) -> tuple[Config, DiffOptions]:
    from seqdedup.cli.arguments import delimiter_of
    from seqdedup.config.settings import command_line_config
    from seqdedup.diff.compare import DiffOptions

    if args.budget is not None and args.format == "json":
        raise UsageError("--budget shapes the text answer; --format json gives it whole")
    if args.budget == "host" or (args.budget is not None and args.budget < 1):
        raise UsageError("--budget needs a number of tokens of at least 1 (e.g. 8k)")
    if args.tokenizer is not None and args.budget is None:
        raise UsageError("--tokenizer requires --budget")
    if args.window_size == "auto":
        raise UsageError("seqdedup diff takes -w N (a number of records), not auto")
    # (the keys' options; W and the minimum size's rule are the comparison's, DiffOptions)
    config = command_line_config(
        min_size=args.min_bytes or 0,
        skip_chars=args.skip_chars,
        skip_fields=args.skip_fields,
        delimiter=delimiter_of(args),
        byte_mode=args.byte_mode,
        key_steps=tuple(args.key_specs or ()),
        json_key=tuple(args.json_key),
        json_ignore=tuple(args.json_ignore),
        stream_by=args.stream_by,
        stream_by_json=args.stream_by_json,
        tokenizer=args.tokenizer,
    )
    options = DiffOptions(
        args.window_size, args.min_bytes or 0, args.factor, args.min_count, args.per
    )
    return config, options


def _counter(args: argparse.Namespace) -> TokenCounter | None:
    if args.budget is None:
        return None
    if args.tokenizer is not None:
        from seqdedup.base.tokens import tokenizer_counter

        return tokenizer_counter(args.tokenizer)
    from seqdedup.base.tokens import estimate_tokens

    return estimate_tokens
