"""Command line: parse and validate options into one Config, run, map errors to exits.

No logic beyond that: the work is done by :mod:`seqdedup.api`. Exit status: 0 on
success, 1 on any error (one line on stderr, nothing on stdout after an argument
error), 130 on Ctrl-C, 128 + N on SIGTERM or SIGHUP (nothing saved). A closed output
pipe (``| head``) ends the run quietly with 0.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Generator, Sequence
from typing import IO, TYPE_CHECKING, Any, NoReturn, TextIO

if TYPE_CHECKING:
    from pathlib import Path

    from seqdedup.report import Stats

from seqdedup import __version__
from seqdedup.config import (
    DEFAULT_CANDIDATES,
    DEFAULT_FOLD_EVERY,
    DEFAULT_FOLD_IDLE,
    DEFAULT_HISTORY,
    DEFAULT_MAX_STREAMS,
    DEFAULT_ROTATE_WAIT,
    DEFAULT_STREAM_IDLE,
    DEFAULT_TRANSFORM_TIMEOUT,
    DEFAULT_UNIQUE_SEQUENCES,
    DEFAULT_WINDOW,
    Config,
    FilterRule,
)
from seqdedup.errors import SeqdedupError, UsageError, exit_status, visible
from seqdedup.filters import load_pattern_file
from seqdedup.records import parse_delimiter, parse_hex_delimiter
from seqdedup.sinks import Messages, Output
from seqdedup.stopping import graceful, requested, signal_name, stop_on_termination_signals

PROG = "seqdedup"
EXAMPLES = """examples:
  seqdedup -w 5 app.log > app.dedup.log          drop repeated blocks of 5+ lines
  tail -f app.log | seqdedup -w 3 -q             a live stream, each line as soon as decided
  seqdedup -q -w 1 -r yesterday/ --annotate today.log | grep -v DUPLICATE
                                                 only what the library has never seen"""


_DOUBLE_DASH = "\0seqdedup:--\0"  # stands in for an option value of exactly "--"


def _restore_double_dash(value: Any) -> Any:
    if value == _DOUBLE_DASH:
        return "--"
    if isinstance(value, list):
        return [_restore_double_dash(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_restore_double_dash(item) for item in value)
    return value


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """argparse's, with the width found as ``shutil.get_terminal_size`` finds it
    (COLUMNS, else the terminal, else 80): argparse would import shutil (and with it
    bz2 and lzma) for that in every run, 2 ms of start-up."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        super().__init__(prog, indent_increment, max_help_position, width or _help_width())


def _help_width() -> int:
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 80
    return columns - 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        argv = list(sys.argv[1:] if args is None else args)
        parsed, rest = super().parse_known_args(self._attach_text_values(argv), namespace)
        for name, value in vars(parsed).items():
            setattr(parsed, name, _restore_double_dash(value))
        return parsed, rest

    def _attach_text_values(self, argv: list[str]) -> list[str]:
        """``--delimiter ---END---``, ``-d --``, ``--bypass -DEBUG-``: argparse refuses a
        value that starts with '-'. A text option always takes the next argument as its
        value, so it is attached (``--delimiter=---END---``) before argparse sees it."""
        text_options = {
            option: next((o for o in action.option_strings if o.startswith("--")), option)
            for action in self._actions
            if action.nargs is None and action.type is None and action.option_strings
            for option in action.option_strings
        }
        out: list[str] = []
        position = 0
        while position < len(argv):
            token = argv[position]
            if token == "--":  # the rest are file names
                return out + argv[position:]
            value_follows = position + 1 < len(argv)
            if token in text_options and value_follows and argv[position + 1].startswith("-"):
                value = argv[position + 1]
                # argparse drops a value of exactly "--" even when attached: stand-in.
                value = _DOUBLE_DASH if value == "--" else value
                out.append(f"{text_options[token]}={value}")
                position += 2
                continue
            out.append(token)
            position += 1
        return out


class _InOrder(argparse.Action):
    """Collect (kind, value) pairs of several options in command-line order into one
    list: the filters (--track/--bypass and their files), the key passes (--normalize,
    --mask)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        specs = list(getattr(namespace, self.dest, None) or [])
        specs.append((self.const, values))
        setattr(namespace, self.dest, specs)


class _Version(argparse.Action):
    """``seqdedup <version> (engine: c|python)``; the engine is looked up only when asked."""

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        from seqdedup.engine import engine_name

        sys.stdout.write(f"{parser.prog} {__version__} (engine: {engine_name()})\n")
        parser.exit()


def build_parser(prog: str = PROG, many_inputs: bool = False) -> argparse.ArgumentParser:
    parser = _Parser(
        prog=prog,
        description="Remove repeated sequences of records from a stream.",
        epilog=None if many_inputs else EXAMPLES,
        formatter_class=_Formatter,
        allow_abbrev=False,
    )
    add = parser.add_argument
    if many_inputs:
        add("input_files", nargs="+", metavar="FILE", help="files to read, in this order")
    else:
        add(
            "input_files",
            nargs="*",
            metavar="FILE",
            help="files to read, in this order, as one run ('-' or none: stdin)",
        )
    _matching_options(parser)
    _key_options(parser)
    _filter_options(parser)
    _stream_options(parser)
    _library_options(parser)
    _output_options(parser)
    parser.add_argument(
        "-V", "--version", action=_Version, nargs=0, help="print the version and the engine"
    )
    from seqdedup.completion import add_option

    add_option(parser)
    if not many_inputs:
        _config_options(parser)
    return parser


def _config_options(parser: argparse.ArgumentParser) -> None:
    """Settings from files (README: Everyday use)."""
    files = parser.add_argument_group("configuration files")
    files.add_argument(
        "--config",
        metavar="FILE",
        help="read settings from FILE only (default: ~/.config/seqdedup/config.toml, "
        "then ./.seqdedup.toml)",
    )
    files.add_argument("--no-config", action="store_true", help="read no settings file")
    files.add_argument(
        "--profile", metavar="NAME", help="also apply the files' [profile.NAME] tables"
    )
    files.add_argument(
        "--show-config",
        action="store_true",
        help="print the files read, the profile and their settings, and exit",
    )


def _matching_options(parser: argparse.ArgumentParser) -> None:
    """The window, the history and the limits of attribution."""
    core = parser.add_argument_group("matching")
    core.add_argument(
        "-w",
        "--window-size",
        type=int,
        default=DEFAULT_WINDOW,
        metavar="N",
        help=f"records per window: shortest repeat found (default {DEFAULT_WINDOW})",
    )
    core.add_argument(
        "-m",
        "--max-history",
        type=int,
        default=None,
        metavar="N",
        help=f"windows remembered (default {DEFAULT_HISTORY}; min 100)",
    )
    core.add_argument(
        "-M",
        "--unlimited-history",
        action="store_true",
        help="remember everything (default for a named input file)",
    )
    core.add_argument(
        "-u",
        "--max-unique-sequences",
        type=int,
        default=None,
        metavar="N",
        help=f"sequences kept for counting (default {DEFAULT_UNIQUE_SEQUENCES})",
    )
    core.add_argument(
        "-U",
        "--unlimited-unique-sequences",
        action="store_true",
        help="count every distinct repeated sequence (no limit)",
    )
    core.add_argument(
        "-c",
        "--max-candidates",
        type=int,
        default=None,
        metavar="N",
        help=f"earlier occurrences followed for attribution (default "
        f"{DEFAULT_CANDIDATES}); never changes what is skipped",
    )
    core.add_argument(
        "-C",
        "--unlimited-candidates",
        action="store_true",
        help="follow every earlier occurrence for attribution (no limit)",
    )


def _key_options(parser: argparse.ArgumentParser) -> None:
    """What is compared: the key of each record, and how records are read."""
    keys = parser.add_argument_group("keys and records")
    keys.add_argument(
        "-s",
        "--skip-chars",
        type=int,
        default=0,
        metavar="N",
        help="ignore the first N characters (bytes in byte mode) when comparing",
    )
    keys.add_argument(
        "-f",
        "--skip-fields",
        type=int,
        default=0,
        metavar="N",
        help="ignore the first N blank-separated fields when comparing (as uniq -f; "
        "before --skip-chars)",
    )
    keys.add_argument(
        "--normalize",
        action=_InOrder,
        const="normalize",
        dest="key_specs",
        metavar="CLASSES",
        help="compare with timestamp,uuid,ip,hex,number (or all) replaced by placeholders "
        "(comma-separated, repeatable)",
    )
    keys.add_argument(
        "--mask",
        action=_InOrder,
        const="mask",
        dest="key_specs",
        metavar="REGEX",
        help="compare with every match of REGEX replaced by a placeholder (repeatable)",
    )
    keys.add_argument(
        "--json-key",
        action="append",
        default=[],
        metavar="PATH",
        help="compare JSON-object records by this field only (dotted; repeatable)",
    )
    keys.add_argument(
        "--json-ignore",
        action="append",
        default=[],
        metavar="PATH",
        help="compare JSON-object records without this field (dotted; repeatable)",
    )
    keys.add_argument(
        "--show-keys",
        action="store_true",
        help="write each record's comparison key instead of deduplicating",
    )
    _transform_options(keys)
    _record_options(keys)


def _transform_options(keys: argparse._ArgumentGroup) -> None:
    """Keys made by a shell command (in the same group)."""
    keys.add_argument(
        "-t",
        "--hash-transform",
        metavar="CMD",
        help="compare records by the output of this shell command",
    )
    keys.add_argument(
        "--transform-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="end a --hash-transform run that takes longer (default 60; 0: no limit)",
    )


def _record_options(keys: argparse._ArgumentGroup) -> None:
    """How records are read: the delimiter, byte mode, decompression (in the same group)."""
    keys.add_argument(
        "-d",
        "--delimiter",
        default=None,
        metavar="STR",
        help=r"record delimiter, escapes \n \t \0 \r \\ (default \n)",
    )
    keys.add_argument(
        "-x",
        "--delimiter-hex",
        default=None,
        metavar="HEX",
        help="byte delimiter in hex, e.g. 00 or 0x0d0a (needs --byte-mode)",
    )
    keys.add_argument("-b", "--byte-mode", action="store_true", help="binary records")
    keys.add_argument(
        "--no-decompress",
        action="store_true",
        help="read gzip/bzip2/xz/zstd input as it is (default: decompress it)",
    )


def _filter_options(parser: argparse.ArgumentParser) -> None:
    """Which records take part (--track, --bypass and their files)."""
    filters = parser.add_argument_group("filters (first matching pattern decides)")
    for option, kind, text in (
        ("--track", "track", "deduplicate only records matching REGEX"),
        ("--bypass", "bypass", "pass records matching REGEX through untouched"),
        ("--track-file", "track-file", "--track each pattern in FILE (one per line, # comments)"),
        ("--bypass-file", "bypass-file", "--bypass each pattern in FILE"),
    ):
        filters.add_argument(
            option,
            action=_InOrder,
            const=kind,
            dest="filter_specs",
            metavar="FILE" if kind.endswith("file") else "REGEX",
            help=text,
        )


def _stream_options(parser: argparse.ArgumentParser) -> None:
    """Interleaved sources: the rule per stream, the history shared."""
    streams = parser.add_argument_group("interleaved sources (pods, processes, threads)")
    streams.add_argument(
        "--stream-by",
        metavar="REGEX",
        help="a record's stream is REGEX's first group (or whole match); windows are "
        "taken per stream, the match is left out of the key; a record without a match "
        "continues the stream before it",
    )
    streams.add_argument(
        "--stream-by-json",
        metavar="PATH",
        help="a record's stream is this JSON field (left out of the key)",
    )
    streams.add_argument(
        "--stream-idle",
        type=int,
        metavar="N",
        help=f"a stream without a record for N records ends (default {DEFAULT_STREAM_IDLE:,})",
    )
    streams.add_argument(
        "--max-streams",
        type=int,
        metavar="N",
        help="beyond N streams the least recently active one ends "
        f"(default {DEFAULT_MAX_STREAMS:,})",
    )


def _stream_settings(args: argparse.Namespace) -> dict[str, Any]:
    """--stream-by and its settings; a setting without it is refused."""
    split = args.stream_by is not None or args.stream_by_json is not None
    for option, value in (("--stream-idle", args.stream_idle), ("--max-streams", args.max_streams)):
        if value is not None and not split:
            raise UsageError(f"{option} requires --stream-by or --stream-by-json")
    return {
        "stream_by": args.stream_by,
        "stream_by_json": args.stream_by_json,
        "stream_idle": DEFAULT_STREAM_IDLE if args.stream_idle is None else args.stream_idle,
        "max_streams": DEFAULT_MAX_STREAMS if args.max_streams is None else args.max_streams,
    }


def _library_options(parser: argparse.ArgumentParser) -> None:
    """Sequences loaded as seen, and the library a run saves to."""
    library = parser.add_argument_group("library")
    library.add_argument(
        "-r",
        "--read-sequences",
        action="append",
        default=[],
        metavar="DIR",
        help="load sequences from DIR as already seen (repeatable)",
    )
    library.add_argument(
        "-l",
        "--library-dir",
        default=None,
        metavar="DIR",
        help="load sequences from DIR and save what this run saw",
    )


def _output_options(parser: argparse.ArgumentParser) -> None:
    """What is written: records, markers, explanations, statistics."""
    output = parser.add_argument_group("output")
    output.add_argument(
        "-i", "--inverse", action="store_true", help="emit only the records normal mode skips"
    )
    output.add_argument(
        "-a", "--annotate", action="store_true", help="write a marker where duplicates were removed"
    )
    output.add_argument(
        "--annotation-format",
        default=None,
        metavar="TEMPLATE",
        help="marker text with {start} {end} {match_start} {match_end} {count} "
        "{window_size} {file} {match_file}",
    )
    _fold_options_of(output)
    output.add_argument(
        "-e", "--explain", action="store_true", help="explain each decision on stderr"
    )
    output.add_argument("-q", "--quiet", action="store_true", help="no statistics")
    output.add_argument(
        "--top",
        type=int,
        default=0,
        metavar="N",
        help="after the statistics (also with -q), the N repeated sequences that "
        "removed the most records",
    )
    output.add_argument("-p", "--progress", action="store_true", help="live progress on a terminal")
    _run_modes(output)
    output.add_argument(
        "--stats-format",
        choices=("table", "json"),
        default="table",
        help="statistics on stderr as a table (default) or JSON",
    )
    output.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="markers, summary lines, explanations and the table in colour: auto (on a "
        "terminal, unless NO_COLOR is set; FORCE_COLOR forces it), always or never",
    )


def _run_modes(output: argparse._ArgumentGroup) -> None:
    """Runs of another kind: a file followed, a window size suggested."""
    output.add_argument(
        "-F",
        "--follow",
        action="store_true",
        help="follow the file as tail -F does (its end first; rotation, truncation and a "
        "file that appears later survived) until Ctrl-C",
    )
    output.add_argument(
        "--from-start", action="store_true", help="with --follow: read the file from its start"
    )
    output.add_argument(
        "--rotate-wait",
        type=float,
        default=None,
        metavar="SECONDS",
        help="with --follow: after a rotation, read lines written late to the old file "
        f"this long (default {DEFAULT_ROTATE_WAIT:g}; 0: not at all)",
    )
    output.add_argument(
        "--suggest-window",
        action="store_true",
        help="print what each window size (1 to 50) would remove, the lengths of the "
        "repeated blocks, and the -w to use; nothing else is written",
    )
    output.add_argument(
        "--sample",
        type=int,
        default=None,
        metavar="N",
        help="with --suggest-window: read the first N records (default 1,000,000)",
    )


def _fold_options_of(output: argparse._ArgumentGroup) -> None:
    """--fold and its settings."""
    output.add_argument(
        "--fold",
        action="store_true",
        help="write one summary line (records removed, copies, first seen, time span) "
        "where each run of duplicates was removed",
    )
    output.add_argument(
        "--fold-format",
        default=None,
        metavar="TEMPLATE|json",
        help="summary line text: the --annotation-format fields and {removed} {copies} "
        "{extra} {length} {id} {sequence} {first_time} {last_time} {part} {continues}; "
        "or json (one object per line)",
    )
    output.add_argument(
        "--fold-every",
        type=int,
        default=None,
        metavar="N",
        help=f"an interim summary line every N removed records of a run that goes on "
        f"(default {DEFAULT_FOLD_EVERY:,}; 0: only at its end)",
    )
    output.add_argument(
        "--fold-idle",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"a summary line for the run so far when the input is idle this long "
        f"(default {DEFAULT_FOLD_IDLE:g}; 0: never)",
    )


def _pick_limit(
    args: argparse.Namespace, value: str, unlimited: str, default: int, auto_unlimited: bool = False
) -> int | None:
    given, no_limit = getattr(args, value), getattr(args, unlimited)
    if given is not None and no_limit:
        raise UsageError(
            f"--{value.replace('_', '-')} and --{unlimited.replace('_', '-')} "
            "cannot be used together"
        )
    if no_limit or (given is None and auto_unlimited):
        return None
    return default if given is None else int(given)


def config_from_args(args: argparse.Namespace) -> Config:
    """Apply every option rule (README: Options, Errors) and build the Config."""
    delimiter = _delimiter(args)
    _refuse_beside_show_keys(args)
    inputs = list(args.input_files) or ["-"]
    if inputs.count("-") > 1:
        raise UsageError("standard input ('-') can be named only once")
    following = _follow_settings(args, inputs)
    # A named file, or several inputs (one run): nothing is forgotten unless -m is given.
    # (A followed file is endless, as standard input is.)
    named_file = (len(inputs) > 1 or inputs[0] != "-") and not following
    filter_specs = getattr(args, "filter_specs", None) or []
    if filter_specs and args.byte_mode:  # before any pattern file is read (Config checks later)
        raise UsageError(
            "--track/--bypass/--track-file/--bypass-file need text mode; "
            "they cannot be combined with --byte-mode"
        )
    max_history = _pick_limit(
        args, "max_history", "unlimited_history", DEFAULT_HISTORY, auto_unlimited=named_file
    )
    if args.max_history is None and max_history is not None and args.window_size > max_history:
        raise UsageError(  # the user never gave -m: say where the history comes from
            f"--window-size {args.window_size} is larger than the default history of "
            f"{DEFAULT_HISTORY:,} windows on standard input: raise it with "
            "--max-history N, or use --unlimited-history"
        )
    return Config(
        window_size=args.window_size,
        max_history=max_history,
        max_unique_sequences=_pick_limit(
            args, "max_unique_sequences", "unlimited_unique_sequences", DEFAULT_UNIQUE_SEQUENCES
        ),
        max_candidates=_pick_limit(
            args, "max_candidates", "unlimited_candidates", DEFAULT_CANDIDATES
        ),
        skip_chars=args.skip_chars,
        skip_fields=args.skip_fields,
        hash_transform=args.hash_transform,
        delimiter=delimiter,
        byte_mode=args.byte_mode,
        filters=tuple(_expand_filters(filter_specs)),
        inverse=args.inverse,
        annotate=args.annotate,
        annotation_format=args.annotation_format,
        explain=args.explain,
        read_sequences=tuple(_path(p) for p in args.read_sequences),
        library_dir=_path(args.library_dir) if args.library_dir is not None else None,
        transform_timeout=_transform_timeout(args),
        top=getattr(args, "top", 0),
        inputs=tuple(inputs),
        key_steps=tuple(getattr(args, "key_specs", None) or ()),
        json_key=tuple(args.json_key),
        json_ignore=tuple(args.json_ignore),
        sequence_stats=not args.quiet,  # -q: no statistics read the sequence count
        rotate_wait=_rotate_wait(args),
        **_fold_options(args),
        **_stream_settings(args),
    )


def _follow_settings(args: argparse.Namespace, inputs: list[str]) -> bool:
    """--follow takes one named file; --from-start needs --follow (and --sample,
    --suggest-window)."""
    sample = getattr(args, "sample", None)
    if sample is not None and not getattr(args, "suggest_window", False):
        raise UsageError("--sample requires --suggest-window")
    if sample is not None and sample < 1:
        raise UsageError(f"--sample must be at least 1, got {sample}")
    if getattr(args, "suggest_window", False) and getattr(args, "follow", False):
        raise UsageError("--suggest-window reads an input once; not with --follow")
    following = bool(getattr(args, "follow", False))
    if getattr(args, "from_start", False) and not following:
        raise UsageError("--from-start requires --follow")
    if getattr(args, "rotate_wait", None) is not None and not following:
        raise UsageError("--rotate-wait requires --follow")
    if following and (len(inputs) != 1 or inputs[0] == "-"):
        raise UsageError("--follow follows one named file (not standard input, not several)")
    if following and args.show_keys:
        raise UsageError("--follow cannot be combined with --show-keys")
    return following


def _fold_options(args: argparse.Namespace) -> dict[str, Any]:
    """--fold and its settings; a setting without --fold is refused (Config checks
    the values)."""
    fold = getattr(args, "fold", False)
    every = getattr(args, "fold_every", None)
    idle = getattr(args, "fold_idle", None)
    for option, value in (("--fold-every", every), ("--fold-idle", idle)):
        if value is not None and not fold:
            raise UsageError(f"{option} requires --fold")
        if value is not None and value < 0:
            raise UsageError(f"{option} must be 0 or more, got {value:g}")
    return {
        "fold": fold,
        "fold_format": getattr(args, "fold_format", None),
        "fold_every": DEFAULT_FOLD_EVERY if every is None else every or None,
        "fold_idle": DEFAULT_FOLD_IDLE if idle is None else idle or None,
    }


def _delimiter(args: argparse.Namespace) -> bytes:
    if args.delimiter is not None and args.delimiter_hex is not None:
        raise UsageError("--delimiter and --delimiter-hex cannot be used together")
    if args.delimiter_hex is not None and not args.byte_mode:
        raise UsageError("--delimiter-hex requires --byte-mode")
    if args.delimiter_hex is not None:
        return parse_hex_delimiter(args.delimiter_hex)
    if args.delimiter is not None:
        return parse_delimiter(args.delimiter)
    return b"\n"


def _refuse_beside_show_keys(args: argparse.Namespace) -> None:
    """--show-keys prints keys: nothing is matched, saved or marked, so options that
    would do so beside it are refused rather than silently ignored."""
    if not getattr(args, "show_keys", False):
        return
    for option, value in (
        ("--library-dir", args.library_dir),
        ("--read-sequences", args.read_sequences),
        ("--annotate", args.annotate),
        ("--inverse", args.inverse),
        ("--explain", args.explain),
        ("--top", getattr(args, "top", None)),
        ("--fold", getattr(args, "fold", None)),
    ):
        if value:
            raise UsageError(
                f"--show-keys prints keys and matches nothing: it cannot be combined with {option}"
            )


def _rotate_wait(args: argparse.Namespace) -> float | None:
    wait: float | None = getattr(args, "rotate_wait", None)
    if wait is None:
        return DEFAULT_ROTATE_WAIT
    return wait or None  # (0: a rotated file is not read any more; Config checks the rest)


def _transform_timeout(args: argparse.Namespace) -> float | None:
    timeout: float | None = args.transform_timeout
    if timeout is None:
        return DEFAULT_TRANSFORM_TIMEOUT
    if args.hash_transform is None:
        raise UsageError("--transform-timeout requires --hash-transform")
    if timeout == 0:
        return None
    if not 0 < timeout < float("inf"):  # negative, inf or nan
        raise UsageError(f"--transform-timeout must be 0 or a number of seconds, got {timeout}")
    return timeout


def _path(name: str) -> Path:
    from pathlib import Path  # only when a library option is used: start-up stays light

    return Path(name)


def _expand_filters(specs: list[tuple[str, str]]) -> list[FilterRule]:
    """One ordered list: a pattern file's patterns stand where the file was named."""
    rules: list[FilterRule] = []
    for kind, value in specs:
        if kind.endswith("-file"):
            rules += load_pattern_file(value, kind.removesuffix("-file"))
        else:
            rules.append(FilterRule(kind, value))
    return rules


def _open_input(name: str | None, stdin: IO[bytes] | None) -> IO[bytes]:
    if name in (None, "-"):
        if stdin is not None:
            return stdin
        if sys.stdin is None:  # started with standard input closed (<&-)
            raise SeqdedupError("standard input is closed: name an input file")
        raw: IO[bytes] = sys.stdin.buffer.raw  # type: ignore[union-attr]
        return raw
    assert name is not None
    if os.path.isdir(name):
        raise SeqdedupError(f"input '{name}' is a directory, not a file")
    try:
        return open(name, "rb", buffering=0)
    except OSError as exc:
        raise SeqdedupError(f"cannot open input '{name}': {exc.strerror or exc}") from None


def _check_inputs(names: Sequence[str], stdin: IO[bytes] | None) -> None:
    """Every input can be opened: a missing or unreadable one is an error before any
    output (each is opened again, in turn, when its turn comes)."""
    import stat

    for name in names:
        if name == "-":
            _open_input(name, stdin)  # standard input is there
            continue
        try:
            mode = os.stat(name).st_mode
        except OSError:
            mode = 0  # opening says why
        if stat.S_ISREG(mode) or stat.S_ISDIR(mode) or not mode:
            _open_input(name, stdin).close()
        elif not os.access(name, os.R_OK):  # a pipe is not opened twice: data would be lost
            raise SeqdedupError(f"cannot open input '{name}': Permission denied")


def _identities(names: Sequence[str], stdin: IO[bytes] | None) -> dict[tuple[int, int], str]:
    """Each input's (device, inode), for telling whether it is a library's file."""
    found = {}
    for name in names:
        try:
            if name == "-":
                fd = stdin.fileno() if stdin is not None else 0
                info = os.fstat(fd)
            else:
                info = os.stat(name)
        except (OSError, ValueError, AttributeError):
            continue
        found[(info.st_dev, info.st_ino)] = name if name != "-" else "(standard input)"
    return found


def _sources(names: Sequence[str], stdin: IO[bytes] | None) -> Generator[IO[bytes], None, None]:
    """The inputs in order, each open only while it is read."""
    for name in names:
        source = _open_input(name, stdin)
        try:
            yield source
        finally:
            if name != "-":
                source.close()


def _inputs_size(names: Sequence[str]) -> int | None:
    """The bytes of all inputs, for percent done; None if one is not a regular file."""
    import stat

    total = 0
    for name in names:
        try:
            info = os.stat(name) if name != "-" else os.fstat(0)
        except OSError:
            return None
        if not stat.S_ISREG(info.st_mode):
            return None
        total += info.st_size
    return total or None


def run(
    args: argparse.Namespace, stdin: IO[bytes] | None, stdout: IO[bytes], stderr: TextIO
) -> int:
    from seqdedup.api import process_streams
    from seqdedup.report import (
        EXPLAIN_COLOR,
        RESET,
        ProgressLine,
        color_wanted,
        progress_wanted,
        write_stats,
        write_top,
    )

    config = config_from_args(args)._replace(color=color_wanted(args.color, stdout))
    colored = color_wanted(args.color, stderr)

    def explain(line: str) -> None:
        stderr.write(f"{EXPLAIN_COLOR}{line}{RESET}\n" if colored else line + "\n")

    explainer = explain if config.explain else None

    names = config.inputs
    if args.follow:
        return _follow(args, config, explainer, stdout, stderr)
    _check_inputs(names, stdin)
    if args.suggest_window:
        return _suggest(args, config, stdin, stdout, stderr)
    libraries = [*config.read_sequences, *filter(None, [config.library_dir])]
    if libraries:
        from seqdedup.library.store import refuse_inputs_inside

        refuse_inputs_inside(libraries, _identities(names, stdin))
    decompress = not args.no_decompress
    sink = Output(stdout)
    with contextlib.closing(_sources(names, stdin)) as sources, graceful():
        if args.show_keys:
            from seqdedup.api import show_keys

            show_keys(sources, sink, config, decompress)
            return _status(None, config, stderr)
        if args.progress and progress_wanted(sink.fd, stderr):
            size = None if stdin is not None and "-" in names else _inputs_size(names)
            with ProgressLine(stderr, size) as progress:
                stats = process_streams(
                    sources, sink, config, explainer, progress.update, decompress
                )
        else:
            stats = process_streams(sources, sink, config, explainer, decompress=decompress)
    if not args.quiet:
        write_stats(stats, config, stderr, args.stats_format, colored)
    elif stats.top_sequences is not None:
        write_top(stats.top_sequences, stderr, args.stats_format, colored)
    return _status(stats, config, stderr)


def _status(stats: Stats | None, config: Config, stderr: TextIO) -> int:
    """0, or after a signal asked the run to stop (see :mod:`seqdedup.stopping`) 128 + N
    and one line saying what became of the input read and of the library."""
    signum = requested()
    if signum is None:
        return 0
    cut = stats is None or stats.interrupted is not None
    line = f"stopped by {signal_name(signum)}: " + (
        "what was read is decided and written" if cut else "the input was read to its end"
    )
    if config.library_dir is not None and stats is not None:
        saved = stats.library_saved is not None
        line += "; the library is saved" if saved else "; the library is unchanged"
    stderr.write(f"{PROG}: {line}\n")
    return 128 + signum


def _suggest(
    args: argparse.Namespace,
    config: Config,
    stdin: IO[bytes] | None,
    stdout: IO[bytes],
    stderr: TextIO,
) -> int:
    """--suggest-window: read (a sample of) the inputs and print the suggestion."""
    import io

    from seqdedup.records import DecodedChunks
    from seqdedup.suggest import DEFAULT_SAMPLE, sample_records, suggest, write_suggestion

    limit = DEFAULT_SAMPLE if args.sample is None else args.sample

    def chunks() -> Generator[bytes, None, None]:
        with contextlib.closing(_sources(config.inputs, stdin)) as sources:
            for source in sources:
                yield from DecodedChunks(source, not args.no_decompress)

    with graceful():
        records = sample_records(chunks(), config.delimiter, limit)
    text = io.StringIO()
    write_suggestion(suggest(records, config), text, args.stats_format)
    Output(stdout).write(text.getvalue().encode())
    return _status(None, config, stderr)


def _follow(
    args: argparse.Namespace,
    config: Config,
    explainer: Callable[[str], None] | None,
    stdout: IO[bytes],
    stderr: TextIO,
) -> int:
    """--follow: the run lasts until a signal (Ctrl-C, SIGTERM, SIGHUP), which ends it
    as the end of input would (pending records decided, the library saved, the
    statistics shown): exit 128 + N."""
    from seqdedup.api import follow_file
    from seqdedup.report import color_wanted, write_stats, write_top

    def note(message: str) -> None:
        stderr.write(f"{PROG}: {visible(message)}\n")
        stderr.flush()

    stats = follow_file(config.inputs[0], Output(stdout), config, explainer, args.from_start, note)
    colored = color_wanted(args.color, stderr)
    if not args.quiet:
        write_stats(stats, config, stderr, args.stats_format, colored)
    elif stats.top_sequences is not None:
        write_top(stats.top_sequences, stderr, args.stats_format, colored)
    return _status(stats, config, stderr)


def main(
    argv: Sequence[str] | None = None,
    stdin: IO[bytes] | None = None,
    stdout: IO[bytes] | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run seqdedup; return the exit status. Streams are injectable for tests."""
    # Standard error closed at the start (2>&-) or by its reader later (2>&1 | head):
    # messages and statistics are dropped, never mixed into the output nor allowed to
    # cut it short. With standard output closed (>&-): an error, said on stderr.
    opened = stderr if stderr is not None else sys.stderr
    err: TextIO = Messages(opened if opened is not None else open(os.devnull, "w"))  # type: ignore[assignment]  # noqa: SIM115
    if stdout is None and sys.stdout is None:
        err.write(f"{PROG}: standard output is closed: nowhere to write the records\n")
        return 1
    out = stdout if stdout is not None else sys.stdout.buffer

    def body() -> int:
        parser = build_parser()
        if argv is None:  # (a shell asking for completions gets them instead of a run)
            from seqdedup.completion import answer

            answer(parser)
        command_line = list(sys.argv[1:] if argv is None else argv)
        settled = with_config_files(parser, command_line, parser.parse_args(command_line), out, err)
        if settled is None:  # --show-config
            return 0
        return run(settled, stdin, out, err)

    return exit_status(PROG, body, err, own_stdout=stdout is None)


def with_config_files(
    parser: argparse.ArgumentParser,
    command_line: list[str],
    args: argparse.Namespace,
    out: IO[bytes],
    err: TextIO | None = None,
) -> argparse.Namespace | None:
    """The arguments with the settings files' before the command line's (None after
    ``--show-config`` wrote them); a setting refused is reported with its file, key
    and line, and a project's options that need trust are said to be left out."""
    paths, user, project = _settings_files(args.config, args.no_config)
    if not paths and args.profile is None and not args.show_config:
        return args  # (no file: the module that reads them is not even imported)
    from seqdedup.configfile import (
        arguments_before,
        blame,
        describe,
        given_destinations,
        read_settings,
    )

    settings = read_settings(parser, paths, args.profile, user, project)
    given = given_destinations(parser, command_line)
    if args.show_config:
        out.write(describe(settings, given).encode("utf-8", "surrogateescape"))
        out.flush()
        return None
    if settings.refusal and err is not None:
        err.write(f"{PROG}: {visible(settings.refusal)}\n")
    before = arguments_before(settings, given)
    if not before:
        return args
    config_from_args(args)  # (an error of the command line itself is its own)

    def check(arguments: list[str]) -> None:
        config_from_args(parser.parse_args([*arguments, *command_line]))

    try:
        combined = parser.parse_args([*before, *command_line])
        config_from_args(combined)
    except UsageError as exc:
        raise blame(settings, check, str(exc)) from None
    return combined


def _settings_files(
    config: str | None, no_config: bool
) -> tuple[list[str], str | None, str | None]:
    """The settings files to read, in the order they apply: ``--config FILE`` alone (the
    user's choice: trusted), none with ``--no-config``, else the user's
    (``$XDG_CONFIG_HOME/seqdedup/config.toml``, default ``~/.config/...``) and the
    project's (``./.seqdedup.toml``) where they exist; and which is the user's and which
    the project's. (Looked for in every run: nothing is imported for it.)"""
    if no_config:
        return [], None, None
    if config is not None:
        return [config], config, None
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    user = os.path.join(base, "seqdedup", "config.toml")
    paths = [path for path in (user, PROJECT_FILE) if os.path.isfile(path)]
    return paths, user, PROJECT_FILE


PROJECT_FILE = ".seqdedup.toml"  # a project's settings, in the current directory


def entry_point() -> None:
    """The ``seqdedup`` console script."""
    stop_on_termination_signals()
    sys.exit(main())
