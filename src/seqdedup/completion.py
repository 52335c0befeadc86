"""Shell completion for the three commands, made from each one's own parser.

argcomplete (imported only when it is needed) does both halves: it writes the script a
shell loads (``--print-completion bash|zsh|fish``), and, when a shell asks for the
completions of a command line, the command is run with ``_ARGCOMPLETE`` set and
answers instead of running (:func:`answer`, called before the arguments are parsed).
"""

from __future__ import annotations

import argparse
import os
import sys

SHELLS = ("bash", "zsh", "fish")


class _PrintCompletion(argparse.Action):
    """Write the completion script of the parser's command for a shell, and exit."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        from argcomplete.shell_integration import shellcode

        sys.stdout.write(shellcode([parser.prog], shell=str(values)))
        sys.stdout.flush()
        parser.exit()


def add_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--print-completion",
        action=_PrintCompletion,
        choices=SHELLS,
        metavar="SHELL",
        help="print the completion script for bash, zsh or fish, and exit",
    )


def answer(parser: argparse.ArgumentParser) -> None:
    """When a shell asks for completions (``_ARGCOMPLETE`` is set), write them and
    exit; otherwise nothing (not even an import)."""
    if "_ARGCOMPLETE" not in os.environ:
        return
    import argcomplete

    argcomplete.autocomplete(parser)
