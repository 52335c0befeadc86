"""``seqdedup-library``: see what a library holds, print one of its sequences, and
prune what no run has seen lately (see :mod:`seqdedup.library.admin`)."""

from __future__ import annotations

import argparse
import base64
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from seqdedup.base.errors import exit_status
from seqdedup.base.stopping import stop_on_termination_signals
from seqdedup.cli.parsing import OneLineErrors

PROG = "seqdedup-library"
DESCRIPTION = (
    "See what a library holds, print one of its sequences, prune what no run has seen "
    "lately, and draw it as an HTML page."
)


def build_parser() -> argparse.ArgumentParser:
    from seqdedup.cli.completion import add_option

    parser = OneLineErrors(prog=PROG, description=DESCRIPTION)
    add_option(parser)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    info = commands.add_parser("info", help="size, sequences, runs, oldest material")
    info.add_argument("directory", type=Path, metavar="DIR")
    info.add_argument("--json", action="store_true", help="one JSON document")
    show = commands.add_parser(
        "show", help="print the records of the sequence with this id (as a --fold line names it)"
    )
    show.add_argument("directory", type=Path, metavar="DIR")
    show.add_argument("id", metavar="ID", help="the sequence's id, or its first digits")
    show.add_argument("--json", action="store_true", help="one JSON document")
    prune = commands.add_parser(
        "prune", help="delete the sequences no run has saved or matched for N days"
    )
    prune.add_argument("directory", type=Path, metavar="DIR")
    prune.add_argument(
        "--unseen-days", type=float, required=True, metavar="N", help="days (fractions allowed)"
    )
    prune.add_argument("--dry-run", action="store_true", help="count, delete nothing")
    prune.add_argument("--json", action="store_true", help="one JSON document")
    report = commands.add_parser(
        "report", help="write what the library holds as one HTML page (needs seqdedup[report])"
    )
    report.add_argument("directory", type=Path, metavar="DIR")
    report.add_argument("page", metavar="FILE.html", help="the page to write")
    for sub in (info, show, prune, report):
        sub.error = parser.error  # type: ignore[method-assign]
    return parser


def _megabytes(size: int) -> str:
    return f"{size / 1e6:,.1f} MB"


def _write_info(info: dict[str, Any], out: TextIO) -> None:
    sequences = info["sequences"]
    lines = [
        ("library", info["directory"]),
        ("database on disk", _megabytes(info["disk_bytes"])),
        (
            "sequences",
            f"{sequences['new'] + sequences['repeat']:,} "
            f"({sequences['new']:,} new material, {sequences['repeat']:,} repeated pieces)",
        ),
        ("records", f"{info['records']:,} ({_megabytes(info['record_bytes'])})"),
        ("runs", f"{info['runs']:,}"),
        ("first run started", info["first_run"] or "-"),
        ("last run finished", info["last_run"] or "-"),
        ("oldest material last seen", info["oldest_last_seen"] or "-"),
        ("plain sequence files", f"{info['plain_files']:,} ({_megabytes(info['plain_bytes'])})"),
    ]
    width = max(len(name) for name, _ in lines)
    out.writelines(f"{name:<{width}}  {value}\n" for name, value in lines)


def _write_pruned(result: dict[str, Any], out: TextIO) -> None:
    verb = "would delete" if result["dry_run"] else "deleted"
    out.write(
        f"{verb} {result['sequences']:,} sequences ({result['records']:,} records) "
        f"not seen since {result['cutoff']}; database "
        f"{_megabytes(result['disk_bytes_before'])} -> {_megabytes(result['disk_bytes_after'])}\n"
    )


def _write_sequence(sequence: dict[str, Any], as_json: bool, out: TextIO) -> None:
    """The records, one per line, as stored (the bytes go out untouched); or JSON."""
    records: list[bytes] = sequence["records"]
    if as_json:
        # the text to read (invalid UTF-8 shown as U+FFFD), and the bytes exactly
        document = dict(
            sequence,
            records=[r.decode("utf-8", "replace") for r in records],
            records_base64=[base64.b64encode(r).decode("ascii") for r in records],
        )
        out.write(json.dumps(document, indent=2) + "\n")
        out.flush()
        return
    out.flush()
    binary = getattr(out, "buffer", None)
    if binary is not None:
        binary.write(b"".join(record + b"\n" for record in records))
        binary.flush()
    else:
        out.write("".join(r.decode("utf-8", "surrogateescape") + "\n" for r in records))
        out.flush()


def _report(directory: Path, page: str, out: TextIO) -> int:
    """``report DIR FILE.html``: the library's page."""
    from seqdedup.page.html import check_report_extra, check_report_path, write_page
    from seqdedup.page.library import library_data

    check_report_extra("seqdedup-library report")
    path = check_report_path(page, "seqdedup-library report")
    size = write_page(path, library_data(directory))
    out.write(f"report written to {path} ({size:,} bytes)\n")
    out.flush()
    return 0


def main(
    argv: Sequence[str] | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr

    parser = build_parser()
    if argv is None:
        from seqdedup.cli.completion import answer

        answer(parser)

    def body() -> int:
        args = parser.parse_args(argv)
        from seqdedup.library.admin import describe_library, prune_library, show_sequence

        if args.command == "show":
            _write_sequence(show_sequence(args.directory, args.id), args.json, out)
            return 0
        if args.command == "report":
            return _report(args.directory, args.page, out)
        if args.command == "info":
            result = describe_library(args.directory)
        else:
            result = prune_library(args.directory, args.unseen_days, args.dry_run)
        if args.json:
            out.write(json.dumps(result, indent=2) + "\n")
        elif args.command == "info":
            _write_info(result, out)
        else:
            _write_pruned(result, out)
        out.flush()  # here, not at exit: a closed pipe is then a quiet end, not a traceback
        return 0

    return exit_status(PROG, body, err)


def entry_point() -> None:
    stop_on_termination_signals()
    sys.exit(main())


if __name__ == "__main__":  # (python -m seqdedup.cli.library)
    entry_point()
