"""Command line: the dispatch of ``seqdedup``. The options are parsed (:mod:`options`),
given their meaning once, in one :class:`~seqdedup.cli.arguments.Command` (the run's
:class:`Config` and the command's own settings, :mod:`arguments`), the inputs checked
(:mod:`inputs`), and the run handed to :mod:`seqdedup.api`; whatever ends it becomes an
exit status (:func:`seqdedup.base.errors.exit_status`): 0 on success, 1 on any error (one
line on stderr, nothing on stdout after an argument error), 130 on Ctrl-C, 128 + N on
SIGTERM or SIGHUP (see :mod:`seqdedup.base.stopping`), 70 on an internal inconsistency. A
closed output pipe (``| head``) ends the run quietly with 0.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING, TextIO

from seqdedup.base.settings_paths import settings_files

if TYPE_CHECKING:
    from seqdedup.cli.hints import InputHead, JsonPathCheck
    from seqdedup.page.html import ReportPage
    from seqdedup.run.stats import Stats

from seqdedup.base.errors import UsageError, exit_status, visible
from seqdedup.base.inputs import check_inputs, decoded_inputs, identities, inputs_size, sources_of
from seqdedup.base.stopping import graceful, requested, signal_name, stop_on_termination_signals
from seqdedup.cli.arguments import (
    Command,
    CommandSettings,
    config_from_args,
    interpret,
    refuse_unused_beside_suggest,
)
from seqdedup.cli.options import DEPENDENTS, PROG, build_parser
from seqdedup.cli.sinks import Messages, Output
from seqdedup.config.settings import Config


def run(command: Command, stdin: IO[bytes] | None, stdout: IO[bytes], stderr: TextIO) -> int:
    from seqdedup.api import Deduplicator, feed_inputs
    from seqdedup.cli.progress import ProgressLine, progress_wanted
    from seqdedup.run.markers import EXPLAIN_COLOR, RESET, color_wanted

    args = command.settings
    config = command.config._replace(color=color_wanted(args.color, stdout))
    if config.fold:  # (JSON records get JSON fold lines)
        from seqdedup.run.fold import fold_format_of

        first = config.inputs[0]
        fold_format = fold_format_of(
            config.fold_options, config.key_options, first, args.decompress
        )
        config = config._replace(fold_format=fold_format)
    colored = color_wanted(args.color, stderr)

    def explain(line: str) -> None:
        stderr.write(f"{EXPLAIN_COLOR}{line}{RESET}\n" if colored else line + "\n")

    explainer = explain if config.explain else None

    names = config.inputs
    page = _report_page(args, config)
    if args.follow:
        return _follow(args, config, explainer, stdout, stderr, page)
    check_inputs(names, stdin)
    if args.suggest_window:
        return _suggest(args, config, stdin, stdout, stderr)
    if config.budget is not None:
        return _budget(args, config, stdin, stdout, stderr, page)
    libraries = [*config.read_sequences, *filter(None, [config.library_dir])]
    if libraries:
        from seqdedup.library.store import refuse_inputs_inside

        refuse_inputs_inside(libraries, identities(names, stdin))
    decompress = args.decompress
    sink = _sink(args, stdout)
    head = _head_for_hint(args)
    json_check = _json_check(config, stderr)
    tap = _taps(head, json_check)
    with contextlib.closing(sources_of(names, stdin)) as sources, graceful():
        if args.show_keys:
            from seqdedup.api import show_keys

            show_keys(sources, sink, config, decompress)
            return _status(None, config, stderr)
        dedup = Deduplicator(config, explainer) if page is None else page.run(explainer)
        if args.progress and progress_wanted(sink.fd, stderr):
            size = None if stdin is not None and "-" in names else inputs_size(names)
            with ProgressLine(stderr, size) as progress:
                stats = feed_inputs(dedup, sources, sink, progress.update, decompress, tap)
        else:
            stats = feed_inputs(dedup, sources, sink, None, decompress, tap)
    if json_check is not None:
        json_check.finish()
    _show(args, config, stats, stderr, head)
    if page is not None:
        _report_written(page, page.write(stats, sink.written), args, stderr)
    return _status(stats, config, stderr)


def _show(
    args: CommandSettings, config: Config, stats: Stats, stderr: TextIO, head: InputHead | None
) -> None:
    """What a run shows on standard error: the statistics (and the hint), or --top."""
    from seqdedup.run.markers import color_wanted
    from seqdedup.run.stats import write_stats
    from seqdedup.run.top import write_top

    colored = color_wanted(args.color, stderr)
    if not args.quiet:
        write_stats(stats, config, stderr, args.stats_format, colored)
        _hint(config, stats, head, stderr)
    elif stats.top_sequences is not None:
        write_top(stats.top_sequences, stderr, args.stats_format, colored)


def _report_page(args: CommandSettings, config: Config) -> ReportPage | None:
    """--report: its packages and its path checked before the run reads anything."""
    if args.report is None:
        return None
    from seqdedup.page.html import ReportPage

    return ReportPage(args.report, config, in_place=not args.follow)


def _report_written(page: ReportPage, size: int, args: CommandSettings, stderr: TextIO) -> None:
    """One line where the statistics table is shown (never inside JSON statistics)."""
    if not args.quiet and args.stats_format == "table":
        stderr.write(f"{PROG}: report written to {visible(str(page.path))} ({size:,} bytes)\n")


def _head_for_hint(args: CommandSettings) -> InputHead | None:
    """The start of the input, kept for the hint after a run that removed almost
    nothing (only where the statistics table is shown)."""
    if args.quiet or args.stats_format != "table":
        return None
    from seqdedup.cli.hints import InputHead

    return InputHead()


def _json_check(config: Config, stderr: TextIO) -> JsonPathCheck | None:
    """A warning for each --json-key/--json-ignore path no record matches."""
    if not (config.json_key or config.json_ignore):
        return None
    from seqdedup.cli.hints import JsonPathCheck

    def warn(line: str) -> None:
        stderr.write(f"{PROG}: warning: {line}\n")

    return JsonPathCheck(config, warn)


def _taps(*taps: Callable[[bytes], None] | None) -> Callable[[bytes], None] | None:
    """One callback for the input's chunks out of those given (None: no tap)."""
    given = [tap for tap in taps if tap is not None]
    if len(given) < 2:
        return given[0] if given else None

    def each(chunk: bytes) -> None:
        for tap in given:
            tap(chunk)

    return each


def _hint(config: Config, stats: Stats, head: InputHead | None, stderr: TextIO) -> None:
    if head is None or stats.interrupted is not None:
        return
    from seqdedup.cli.hints import normalization_hint

    line = normalization_hint(config, stats, head)
    if line is not None:
        stderr.write(f"{PROG}: {line}\n")


def _status(stats: Stats | None, config: Config, stderr: TextIO) -> int:
    """0, or after a signal asked the run to stop (see :mod:`seqdedup.base.stopping`) 128 + N
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


def _sink(args: CommandSettings, stdout: IO[bytes]) -> Output:
    """Where the records go: standard output, or ``--output FILE`` (appended to, and
    reopened on SIGHUP)."""
    from seqdedup.base.stopping import reopen_on_hangup, started

    name = args.output
    if name is None:
        reopen_on_hangup(None)
        started()
        return Output(stdout)
    from seqdedup.cli.sinks import FileOutput

    sink = FileOutput(name)
    reopen_on_hangup(sink.request_reopen)
    started()
    return sink


def _suggest(
    args: CommandSettings,
    config: Config,
    stdin: IO[bytes] | None,
    stdout: IO[bytes],
    stderr: TextIO,
) -> int:
    """--suggest-window: read (a sample of) the inputs and print the suggestion."""
    import io

    from seqdedup.run.suggest import DEFAULT_SAMPLE, sample_records, suggest, write_suggestion

    limit = DEFAULT_SAMPLE if args.sample is None else args.sample
    with graceful():
        records = sample_records(
            decoded_inputs(config.inputs, stdin, args.decompress), config.delimiter, limit
        )
    text = io.StringIO()
    write_suggestion(suggest(records, config), text, args.stats_format)
    _sink(args, stdout).write(text.getvalue().encode())
    return _status(None, config, stderr)


def _budget(
    args: CommandSettings,
    config: Config,
    stdin: IO[bytes] | None,
    stdout: IO[bytes],
    stderr: TextIO,
    page: ReportPage | None,
) -> int:
    """--budget: read the whole input, reduce it, store what was removed (before the
    output is written: a reference never names what the file does not hold)."""
    from seqdedup.budget.input import MAX_WHOLE, read_inputs_whole
    from seqdedup.budget.reduce import reduce_to_budget

    with graceful():
        limit = args.max_input or MAX_WHOLE
        data = read_inputs_whole(config.inputs, stdin, args.decompress, limit)
        reduction = reduce_to_budget(data, config)
    sink = _sink(args, stdout)
    sink.write(reduction.text)
    if not args.quiet:
        unit = "characters" if config.tokenizer == "characters" else "tokens"
        stderr.write(f"{PROG}: {reduction.summary(config.budget or 0, unit)}\n")
    if page is not None:
        size = page.write_reduction(bytes(data), reduction, sink.written)
        _report_written(page, size, args, stderr)
    return _status(None, config, stderr)


def _follow(
    args: CommandSettings,
    config: Config,
    explainer: Callable[[str], None] | None,
    stdout: IO[bytes],
    stderr: TextIO,
    page: ReportPage | None,
) -> int:
    """--follow: the run lasts until a signal (Ctrl-C, SIGTERM, SIGHUP), which ends it
    as the end of input would (pending records decided, the library saved, the
    statistics shown): exit 128 + N."""
    from seqdedup.api import follow_file

    def note(message: str) -> None:
        stderr.write(f"{PROG}: {visible(message)}\n")
        stderr.flush()

    sink = _sink(args, stdout)
    picture = page.picture if page is not None else None
    stats = follow_file(config.inputs[0], sink, config, explainer, args.from_start, note, picture)
    _show(args, config, stats, stderr, None)
    if page is not None:
        _report_written(page, page.write(stats, sink.written), args, stderr)
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
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] in (["diff"], ["loops"]):  # (own commands: options, statuses, completion)
        own = getattr(importlib.import_module(f"seqdedup.cli.{words[0]}"), f"run_{words[0]}")
        return int(own(words[1:], stdin, out, err, own_stdout=stdout is None, shell=argv is None))

    def body() -> int:
        parser = build_parser()
        if argv is None and "_ARGCOMPLETE" in os.environ:  # (a shell asking: no run)
            from seqdedup.cli import diff, loops
            from seqdedup.cli.completion import answer

            answer(parser, {"diff": diff.build_diff_parser, "loops": loops.build_loops_parser})
        command_line = words
        args = parser.parse_args(command_line)
        if args.suggest_window:  # (before the values: "-w is not used", not "-w 0 is wrong")
            refuse_unused_beside_suggest(parser, command_line)
        settled = with_config_files(parser, command_line, args, out, err)
        if settled is None:  # --show-config
            return 0
        if settled.settings.suggest_window and not args.suggest_window:  # (from a file)
            refuse_unused_beside_suggest(parser, command_line)
        return run(settled, stdin, out, err)

    return exit_status(PROG, body, err, own_stdout=stdout is None)


def with_config_files(
    parser: argparse.ArgumentParser,
    command_line: list[str],
    args: argparse.Namespace,
    out: IO[bytes],
    err: TextIO | None = None,
) -> Command | None:
    """The command interpreted (once), with the settings files' options before the
    command line's (None after ``--show-config`` wrote them); a setting refused is
    reported with its file, key and line, and a project's options that need trust are
    said to be left out."""
    paths, user, project = settings_files(args.config, args.no_config)
    if not paths and args.profile is None and not args.show_config:
        return interpret(args)  # (no file: the module that reads them is not even imported)
    from seqdedup.cli.configfile import (
        arguments_before,
        blame,
        describe,
        given_destinations,
        read_settings,
        replaced_key_steps,
    )

    settings = read_settings(parser, paths, args.profile, user, project)
    given = given_destinations(parser, command_line)
    # --no-fold: the files' settings that only apply with --fold go too
    dropped = {
        dependent: dest
        for dest in given
        if getattr(args, dest, None) is False
        for dependent in DEPENDENTS.get(dest, ())
    }
    given |= set(dropped)
    if settings.refusal and err is not None and not args.show_config:
        err.write(f"{PROG}: {visible(settings.refusal)}\n")
    if err is not None and not args.show_config:
        replaced = replaced_key_steps(settings, given)
        if replaced:
            err.write(f"{PROG}: {visible(replaced)}\n")
    before = arguments_before(settings, given)
    if args.show_config:
        effective = parser.parse_args([*before, *command_line])
        text = describe(settings, given, parser, effective, dropped, args.show_config == "changed")
        out.write(text.encode("utf-8", "surrogateescape"))
        out.flush()
        return None
    if not before:
        return interpret(args)

    def check(arguments: list[str]) -> None:
        config_from_args(parser.parse_args([*arguments, *command_line]))

    try:
        return interpret(parser.parse_args([*before, *command_line]))
    except UsageError as exc:  # (the command line's own error first; what it needs
        config_from_args(args)  # from the files, --fold-idle from a profile's fold, is none)
        raise blame(settings, check, str(exc)) from None


def entry_point() -> None:
    """The ``seqdedup`` console script."""
    stop_on_termination_signals(defer_first=True)
    sys.exit(main())
