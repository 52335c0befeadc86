"""argparse as the commands use it: one-line errors, negations of every switch (--no-X),
"--" as an option value, options kept in the order given, help fitted to the terminal."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from seqdedup.base.errors import UsageError
from seqdedup.base.version import __version__

# Switches without a negation: those about the settings files themselves
NOT_NEGATED = frozenset({"no_config", "show_config", "help"})


class Negation(argparse._StoreFalseAction):
    """``--no-SWITCH``: the switch off (hidden from the help, which says so once)."""

    negates = True  # (settings files set the switch itself: fold = false)


def add_negations(parser: argparse.ArgumentParser) -> None:
    """A ``--no-X`` for every switch ``--X`` (``--decompress`` for ``--no-decompress``)."""
    for action in list(parser._actions):
        if type(action) is not argparse._StoreTrueAction or action.dest in NOT_NEGATED:
            continue
        long = next(o for o in action.option_strings if o.startswith("--"))
        negated = "--" + long[5:] if long.startswith("--no-") else "--no-" + long[2:]
        parser.add_argument(negated, dest=action.dest, action=Negation, help=argparse.SUPPRESS)


_DOUBLE_DASH = "\0seqdedup:--\0"  # stands in for an option value of exactly "--"


def _restore_double_dash(value: object) -> object:
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


class OneLineErrors(argparse.ArgumentParser):
    """A parser whose errors are one line and exit 1 (argparse says 2, with usage)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


class _Parser(OneLineErrors):
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
        values: object,
        option_string: str | None = None,
    ) -> None:
        specs = list(getattr(namespace, self.dest, None) or [])
        specs.append((self.const, values))
        setattr(namespace, self.dest, specs)


class _Version(argparse.Action):
    """``seqdedup <version> (engine: c|python)``; the engine is looked up only when asked."""

    def __call__(self, parser: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        from seqdedup.engine.choice import engine_name

        sys.stdout.write(f"{parser.prog} {__version__} (engine: {engine_name()})\n")
        parser.exit()


def byte_size(text: str) -> int:
    """A size in bytes: digits, or with k, M or G (binary: 1k = 1,024)."""
    scale = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(text[-1:].lower(), 1)
    digits = text[:-1] if scale > 1 else text
    if not digits.isdigit() or int(digits) < 1:
        raise argparse.ArgumentTypeError(f"not a size: '{text}' (e.g. 1G, 512M or 4096)")
    return int(digits) * scale


def max_input_option(group: argparse._ArgumentGroup, how: str) -> None:
    """--max-input: the most an input read whole (or set aside) may hold; ``how``: who
    holds it and where, the start of the help."""
    group.add_argument(
        "--max-input",
        type=byte_size,
        default=None,
        metavar="SIZE",
        help=f"{how}: at most SIZE bytes of one (1k = 1,024; default 1G); a larger input "
        "is an error",
    )


def token_count(text: str) -> int | str:
    """A token count: digits, or with k (thousands) or m (millions); or ``host``."""
    if text == "host":
        return text
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:].lower(), 1)
    digits = text[:-1] if scale > 1 else text
    if not digits.isdigit():
        raise argparse.ArgumentTypeError(f"not a token count: '{text}' (e.g. 8000 or 8k, or host)")
    return int(digits) * scale
