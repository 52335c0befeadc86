"""``seqdedup-expand``: a reduced text back to the original, byte for byte, from the
``--keep-removed`` store (see :func:`seqdedup.budget.removed.restore`); or one
reference; or a range of the original's lines."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TextIO

from seqdedup.base.errors import SeqdedupError, UsageError, exit_status

PROG = "seqdedup-expand"


def build_parser() -> argparse.ArgumentParser:
    from seqdedup.cli.parsing import OneLineErrors

    parser = OneLineErrors(
        prog=PROG,
        description="Restore what seqdedup --budget removed: the whole original from a "
        "reduced text, or what one reference (sd:...) stands for. Without --from, a "
        "reduced text whose markers all repeat lines it shows byte for byte is restored "
        "from itself.",
        epilog="Examples: seqdedup-expand reduced.txt --from removed.db > original; "
        "seqdedup-expand --from removed.db sd:1a2b3c4d5e6f; "
        "seqdedup-expand reduced.txt --from removed.db --lines 40-60; "
        "seqdedup-expand reduced.txt (no store: from the text alone)",
    )
    parser.add_argument(
        "what",
        metavar="REDUCED|REFERENCE",
        help="a reduced text ('-': standard input), or a reference sd:HEX",
    )
    parser.add_argument(
        "--from",
        dest="store",
        default=None,
        metavar="FILE",
        help="the store seqdedup --keep-removed wrote (without it: the text alone)",
    )
    parser.add_argument(
        "--lines",
        metavar="A-B",
        default=None,
        help="only lines A to B of the original (1-based, inclusive)",
    )
    from seqdedup.cli.completion import add_option

    add_option(parser)
    return parser


def _line_range(text: str) -> tuple[int, int]:
    first, _, last = text.partition("-")
    if not (first.isdigit() and last.isdigit()) or not 1 <= int(first) <= int(last):
        raise UsageError(f"--lines: not a range of lines: '{text}' (e.g. 40-60)")
    return int(first), int(last)


def run(args: argparse.Namespace, stdin: IO[bytes], stdout: IO[bytes]) -> int:
    from seqdedup.budget.removed import PREFIX, RemovedStore, line_range, restore, restored_pieces
    from seqdedup.cli.sinks import Output

    lines = _line_range(args.lines) if args.lines is not None else None
    if args.store is None and args.what.startswith(PREFIX):
        raise UsageError("a reference is read from the store: give --from FILE")
    store = RemovedStore(Path(args.store), create=False) if args.store is not None else None
    sink = Output(stdout)
    try:
        if store is not None and args.what.startswith(PREFIX):
            if lines is not None:
                raise UsageError("--lines applies to a reduced text, not to a reference")
            sink.write(store.data(store.resolve(args.what)))
            return 0
        try:
            reduced = stdin.read() if args.what == "-" else Path(args.what).read_bytes()
        except OSError as exc:
            raise SeqdedupError(f"cannot read '{args.what}': {exc.strerror}") from None
        if store is None:
            from seqdedup.budget.restore import restore_text

            original = restore_text(reduced)
            sink.write(original if lines is None else line_range(original, b"\n", *lines))
            return 0
        if lines is None:
            pieces = restored_pieces(reduced, store)
            first = next(pieces, b"")  # (a text the store does not know: refused, nothing written)
            sink.write(first)
            for piece in pieces:
                sink.write(piece)
            return 0
        delimiter = store.reduction(reduced)
        original = restore(reduced, store)
        assert delimiter is not None  # (restore refuses a text the store does not know)
        sink.write(line_range(original, delimiter[0], *lines))
    finally:
        if store is not None:
            store.close()
    return 0


def main(
    argv: Sequence[str] | None = None,
    stdin: IO[bytes] | None = None,
    stdout: IO[bytes] | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run seqdedup-expand; return the exit status."""
    err = stderr if stderr is not None else sys.stderr
    out = stdout if stdout is not None else sys.stdout.buffer

    def body() -> int:
        parser = build_parser()
        if argv is None:
            from seqdedup.cli.completion import answer

            answer(parser)
        args = parser.parse_args(sys.argv[1:] if argv is None else list(argv))
        return run(args, stdin if stdin is not None else sys.stdin.buffer, out)

    return exit_status(PROG, body, err, own_stdout=stdout is None)


def entry_point() -> None:
    sys.exit(main())
