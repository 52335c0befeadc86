"""Shell completion for the commands, made from each one's own parser.

argcomplete (imported only when it is needed) does both halves: it writes the script a
shell loads (``--print-completion bash|zsh|fish``), and, when a shell asks for the
completions of a command line, the command is run with ``_ARGCOMPLETE`` set and
answers instead of running (:func:`answer`, called before the arguments are parsed).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

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


def answer(
    parser: argparse.ArgumentParser,
    commands: dict[str, Callable[[], argparse.ArgumentParser]] | None = None,
) -> None:
    """When a shell asks for completions (``_ARGCOMPLETE`` is set), write them and
    exit; otherwise nothing (not even an import). ``commands``: the parsers of the
    command's own commands (``seqdedup diff``), offered as its first word and used
    once that word is given."""
    if "_ARGCOMPLETE" not in os.environ:
        return
    import argcomplete

    commands = commands or {}
    words = os.environ.get("COMP_LINE", "").split()
    given = len(words) > 2 or os.environ.get("COMP_LINE", "").endswith(" ")
    if len(words) > 1 and words[1] in commands and given:
        parser = commands[words[1]]()
    elif commands:
        _offer_commands(parser, sorted(commands))
    completers = {
        "--normalize": complete_classes,
        "--profile": complete_profiles,
        "--stream-by": complete_presets,
    }
    for action in parser._actions:
        for option, completer in completers.items():
            if option in action.option_strings:
                vars(action)["completer"] = completer  # (argcomplete reads the attribute)
    argcomplete.autocomplete(parser)


def _offer_commands(parser: argparse.ArgumentParser, names: list[str]) -> None:
    """The first file name may be one of the commands: offered beside the files."""
    from argcomplete.completers import FilesCompleter

    files = FilesCompleter()

    def complete(prefix: str, parsed_args: argparse.Namespace, **_: object) -> list[str]:
        first = not getattr(parsed_args, "input_files", None)
        named = [name for name in names if first and name.startswith(prefix)]
        return named + list(files(prefix))

    for action in parser._actions:
        if action.dest == "input_files":
            vars(action)["completer"] = complete


def complete_classes(prefix: str, **_: object) -> list[str]:
    """``--normalize``'s classes, also after a comma (``timestamp,u`` -> ``timestamp,uuid``)."""
    from seqdedup.config.normalize import CLASSES

    done, _comma, part = prefix.rpartition(",")
    head = done + "," if done else ""
    taken = set(done.split(","))
    return [
        head + name for name in [*CLASSES, "all"] if name.startswith(part) and name not in taken
    ]


def complete_presets(prefix: str, **_: object) -> list[str]:
    """``--stream-by``'s named presets."""
    from seqdedup.config.settings import STREAM_PRESETS

    return [name for name in STREAM_PRESETS if name.startswith(prefix)]


def complete_profiles(prefix: str, **_: object) -> list[str]:
    """The built-in profiles and those the settings files in effect define."""
    import tomllib

    from seqdedup.base.settings_paths import project_file, user_settings_file
    from seqdedup.cli.configfile import BUILT_IN_PROFILES

    found = [name for name in BUILT_IN_PROFILES if name.startswith(prefix)]
    for path in (user_settings_file(), project_file()):
        try:
            with open(path or "", "rb") as file:
                profiles = tomllib.load(file).get("profile", {})
        except (OSError, ValueError):
            continue
        if isinstance(profiles, dict):
            found += [name for name in profiles if name.startswith(prefix)]
    return list(dict.fromkeys(found))
