"""The parsed options -> one :class:`Command`: the run's validated :class:`Config`
and the command's own settings (what it reads, shows and writes around the run),
interpreted once; and the checks that span options (what needs what, what cannot go
together)."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any, NamedTuple

from seqdedup.base.errors import UsageError
from seqdedup.base.records import parse_delimiter, parse_hex_delimiter
from seqdedup.config.groups import (
    DEFAULT_CANDIDATES,
    DEFAULT_FOLD_EVERY,
    DEFAULT_FOLD_IDLE,
    DEFAULT_HISTORY,
    DEFAULT_MAX_STREAMS,
    DEFAULT_ROTATE_WAIT,
    DEFAULT_STREAM_IDLE,
    DEFAULT_TRANSFORM_TIMEOUT,
    DEFAULT_UNIQUE_SEQUENCES,
    FilterRule,
)
from seqdedup.config.settings import Config, command_line_config
from seqdedup.keys.filters import load_pattern_file

if TYPE_CHECKING:
    from pathlib import Path


def _stream_settings(args: argparse.Namespace) -> dict[str, object]:
    """--stream-by and its settings; a setting without it is refused."""
    split = args.stream_by is not None or args.stream_by_json is not None
    for option, value in (("--stream-idle", args.stream_idle), ("--max-streams", args.max_streams)):
        if value is not None and not split:
            raise UsageError(f"{option} requires --stream-by or --stream-by-json")
    return {
        "stream_by": args.stream_by,
        "stream_by_json": args.stream_by_json,
        "stream_idle": DEFAULT_STREAM_IDLE if args.stream_idle is None else args.stream_idle,
        "per_stream": getattr(args, "per_stream", False),
        "max_streams": DEFAULT_MAX_STREAMS if args.max_streams is None else args.max_streams,
    }


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


class CommandSettings(NamedTuple):
    """What ``seqdedup`` does around its run, read from the command line once: where
    the input comes from and the output goes, what is shown on standard error."""

    follow: bool = False  # --follow (one named file, until a signal)
    from_start: bool = False  # --follow --from-start: the file's existing lines too
    suggest_window: bool = False  # no run: the window sizes tried on a sample
    sample: int | None = None  # --suggest-window's sample (None: its default)
    show_keys: bool = False  # no run: each record's key
    progress: bool = False  # a live progress line (on a terminal)
    decompress: bool = True  # compressed inputs read as their content
    quiet: bool = False  # no statistics
    stats_format: str = "table"  # "table" or "json"
    color: str = "auto"  # markers and statistics in colour: auto, always, never
    report: str | None = None  # --report FILE: the run's HTML page
    output: str | None = None  # --output FILE (None: standard output)
    max_input: int | None = None  # --budget: the most bytes read whole (None: the default)


class Command(NamedTuple):
    """A command line interpreted: the run's configuration and the command's settings."""

    config: Config
    settings: CommandSettings


def interpret(args: argparse.Namespace) -> Command:
    """The command line's meaning, once: the :class:`Config` (every option rule
    checked) and the :class:`CommandSettings`."""
    config = config_from_args(args)
    # (a command's parser without an option: the setting's default; --no-decompress is
    # the one named the other way round)
    given = {name: getattr(args, name) for name in CommandSettings._fields if hasattr(args, name)}
    return Command(config, CommandSettings(**given, decompress=not args.no_decompress))


def config_from_args(args: argparse.Namespace) -> Config:
    """Apply every option rule (docs/reference.md: Options, Errors) and build the Config."""
    delimiter = delimiter_of(args)
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
    window = 1 if args.window_size == "auto" else args.window_size
    if args.max_history is None and max_history is not None and window > max_history:
        raise UsageError(  # the user never gave -m: say where the history comes from
            f"--window-size {args.window_size} is larger than the default history of "
            f"{DEFAULT_HISTORY:,} windows on standard input: raise it with "
            "--max-history N, or use --unlimited-history"
        )
    return command_line_config(
        **_size_settings(args),
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
        **_fold_options(args, named_file and "-" not in inputs),
        **_stream_settings(args),
        **_budget_settings(args),
    )


def _size_settings(args: argparse.Namespace) -> dict[str, object]:
    """-w N or auto, --min-bytes, --min-tokens."""
    auto = args.window_size == "auto"
    settings: dict[str, object] = {"window_size": 1 if auto else args.window_size}
    min_bytes, min_tokens = getattr(args, "min_bytes", None), getattr(args, "min_tokens", None)
    if min_tokens is not None and min_bytes is not None:
        raise UsageError("--min-bytes and --min-tokens cannot be combined: give one size")
    if min_tokens is not None:
        settings.update(min_size=min_tokens, size_unit="tokens")
        _at_least_zero("--min-tokens", min_tokens)
    elif min_bytes is not None:
        settings["min_size"] = min_bytes
    elif auto:
        from seqdedup.engine.sized import AUTO_MIN_BYTES

        settings["min_size"] = AUTO_MIN_BYTES
    return settings


def _at_least_zero(option: str, value: int) -> None:
    if value < 0:
        raise UsageError(f"{option} must be at least 0, got {value}")


def _budget_settings(args: argparse.Namespace) -> dict[str, Any]:
    """--budget and its settings (not offered by seqdedup-dask)."""
    from seqdedup.config.budgetfields import host_budget, parse_event_fields, parse_levels

    removed = getattr(args, "keep_removed", None)
    budget, tokenizer = getattr(args, "budget", None), getattr(args, "tokenizer", None)
    if budget == "host":
        budget, counted = host_budget(os.environ)
        tokenizer = tokenizer or counted
    settings: dict[str, object] = {
        "budget": budget,
        "keep": tuple(getattr(args, "keep", None) or ()),
        "keep_removed": _path(removed) if removed else None,
        "tokenizer": tokenizer,
        "long_markers": bool(getattr(args, "long_markers", None)),
    }
    if getattr(args, "max_input", None) is not None and budget is None:
        raise UsageError("--max-input requires --budget (the one run that reads its input whole)")
    if getattr(args, "verbatim", None) is not None:
        settings["verbatim_levels"] = parse_levels(args.verbatim)
    if getattr(args, "event_fields", None) is not None:
        settings["event_fields"] = parse_event_fields(args.event_fields)
    return settings


def _follow_settings(args: argparse.Namespace, inputs: list[str]) -> bool:
    """--follow takes one named file; --from-start needs --follow (and --sample,
    --suggest-window)."""
    sample = getattr(args, "sample", None)
    if sample is not None and not getattr(args, "suggest_window", False):
        raise UsageError("--sample requires --suggest-window")
    if sample is not None and sample < 1:
        raise UsageError(f"--sample must be at least 1, got {sample}")
    if getattr(args, "suggest_window", False) and getattr(args, "report", None) is not None:
        raise UsageError("--suggest-window makes no run to report on; not with --report")
    if getattr(args, "suggest_window", False) and getattr(args, "follow", False):
        raise UsageError("--suggest-window reads an input once; not with --follow")
    following = bool(getattr(args, "follow", False))
    if following and getattr(args, "budget", None) is not None:
        raise UsageError("--budget reads the whole input first; not with --follow")
    if getattr(args, "from_start", False) and not following:
        raise UsageError("--from-start requires --follow")
    if getattr(args, "rotate_wait", None) is not None and not following:
        raise UsageError("--rotate-wait requires --follow")
    if following and (len(inputs) != 1 or inputs[0] == "-"):
        raise UsageError("--follow follows one named file (not standard input, not several)")
    if following and args.show_keys:
        raise UsageError("--follow cannot be combined with --show-keys")
    return following


def _fold_options(args: argparse.Namespace, named: bool) -> dict[str, object]:
    """--fold and its settings; a setting without --fold is refused (Config checks
    the values). ``named``: the inputs are named files (a --fold-every time is then the
    records' own)."""
    fold = getattr(args, "fold", False)
    every = getattr(args, "fold_every", None)
    idle = getattr(args, "fold_idle", None)
    for option, value in (("--fold-every", every), ("--fold-idle", idle)):
        if value is not None and value < 0:
            raise UsageError(f"{option} must be 0 or more, got {value:g}")
        if value is not None and not fold:
            raise UsageError(f"{option} requires --fold")
    return {
        "fold": fold,
        "fold_format": getattr(args, "fold_format", None),
        "fold_every": DEFAULT_FOLD_EVERY if every is None else every or None,
        "fold_idle": DEFAULT_FOLD_IDLE if idle is None else idle or None,
        "fold_clock": "records" if named else "wall",
    }


def delimiter_of(args: argparse.Namespace) -> bytes:
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
        ("--report", getattr(args, "report", None)),
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


def refuse_unused_beside_suggest(parser: argparse.ArgumentParser, command_line: list[str]) -> None:
    """--suggest-window with an option it does not use, on the command line (a profile
    that sets one is no error): one line instead of a silent no-op."""
    from seqdedup.cli.configfile import given_destinations
    from seqdedup.run.suggest import IGNORED

    given = given_destinations(parser, command_line)
    for dest, option in IGNORED.items():
        if dest in given:
            raise UsageError(
                f"--suggest-window tries every window size and makes no run: {option} "
                "is not used (leave it out)"
            )
