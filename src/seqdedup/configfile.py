"""Settings from files: the user's ``$XDG_CONFIG_HOME/seqdedup/config.toml`` (default
``~/.config/seqdedup/config.toml``) and the project's ``.seqdedup.toml`` in the current
directory, or one file named by ``--config``; ``[profile.NAME]`` tables chosen with
``--profile NAME``.

Keys are the long option names without their dashes (``window-size = 5``,
``quiet = true``, ``mask = ["^\\\\[pod[^]]*\\\\] "]``). What applies, each over the one
before: the user file, its profile table, the project file, its profile table, the
command line. An option given on the command line replaces whatever the files say of
it (a repeatable option's list as a whole; the four filter options are one list, as
are ``--normalize`` and ``--mask``). The settings become command-line arguments placed
before the real ones, so the parser checks them as it checks everything else; what it
refuses is reported with the file, the key and its line.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from seqdedup.errors import UsageError

# Options that say where settings come from, or do something else than a run
NOT_SETTINGS = {"config", "no-config", "profile", "show-config", "help", "version"}
NOT_SETTINGS |= {"print-completion"}


class ConfigFileError(UsageError):
    """A file's setting that cannot be used (exit 1, one line naming it)."""


class Setting:
    """One key of one file, as command-line arguments."""

    __slots__ = ("arguments", "dest", "key", "line", "path", "value")

    def __init__(
        self, key: str, value: Any, path: Path, line: int, arguments: list[str], dest: str
    ) -> None:
        self.key, self.value, self.path, self.line = key, value, path, line
        self.arguments, self.dest = arguments, dest


class FileSettings:
    """What the files say: the files read, the profile chosen, and the settings in the
    order they apply."""

    def __init__(self, files: list[Path], profile: str | None) -> None:
        self.files = files
        self.profile = profile
        self.settings: list[Setting] = []


def read_settings(
    parser: argparse.ArgumentParser, names: list[str], profile: str | None
) -> FileSettings:
    """The settings of the files (with the profile's tables), checked against the
    parser's options."""
    options = _long_options(parser)
    paths = [Path(name) for name in names]
    found = FileSettings(paths, profile)
    profile_found = profile is None
    for path in paths:
        document, text = _load(path)
        tables: list[tuple[dict[str, Any], str]] = [(document, "")]
        profiles = document.pop("profile", {})
        if not isinstance(profiles, dict):
            raise _error(path, text, "profile", "", "[profile.NAME] tables are expected")
        if profile is not None and profile in profiles:
            if not isinstance(profiles[profile], dict):
                raise _error(path, text, profile, "", "a profile is a [profile.NAME] table")
            tables.append((profiles[profile], f"profile.{profile}"))
            profile_found = True
        for table, name in tables:
            for key, value in table.items():
                found.settings.append(_setting(path, text, name, key, value, options))
    if not profile_found:
        where = ", ".join(str(p) for p in paths) or "no config file"
        raise UsageError(f"--profile {profile}: no [profile.{profile}] table in {where}")
    return found


def arguments_before(settings: FileSettings, given: set[str]) -> list[str]:
    """The files' settings as arguments, without those of options the command line
    gives (``given``: their destinations); a later setting of an option replaces an
    earlier one."""
    latest: dict[str, Setting] = {}
    for setting in settings.settings:
        latest.pop(setting.dest, None)  # (keeps the order in which they apply)
        latest[setting.dest] = setting
    return [arg for s in latest.values() if s.dest not in given for arg in s.arguments]


def given_destinations(parser: argparse.ArgumentParser, argv: list[str]) -> set[str]:
    """The destinations the command line sets (parsed with no defaults)."""
    saved = [(action, action.default) for action in parser._actions]
    try:
        for action, _ in saved:
            action.default = argparse.SUPPRESS
        namespace, _ = parser.parse_known_args(argv)
    finally:
        for action, default in saved:
            action.default = default
    return set(vars(namespace))


def blame(settings: FileSettings, check: Any, message: str) -> UsageError:
    """The setting a refused combination comes from: the first one refused on its own
    by ``check`` (arguments -> raises UsageError), else the files as a whole."""
    for setting in settings.settings:
        try:
            check(setting.arguments)
        except UsageError as exc:
            return ConfigFileError(f"{_where(setting)}: {exc}")
    files = ", ".join(str(p) for p in settings.files)
    return ConfigFileError(f"the settings of {files}: {message}")


def describe(settings: FileSettings, given: set[str]) -> str:
    """``--show-config``: the files read, the profile, and each setting that applies
    (as TOML), with the ones the command line replaces marked."""
    lines = ["# files read: " + (", ".join(str(p) for p in settings.files) or "none")]
    lines.append(f"# profile: {settings.profile or 'none'}")
    last = {s.dest: k for k, s in enumerate(settings.settings)}
    for k, setting in enumerate(settings.settings):
        value = _toml_value(setting.value)
        note = (
            " (replaced by the command line)"
            if setting.dest in given
            else " (replaced below)"
            if last[setting.dest] != k
            else ""
        )
        lines.append(f"{setting.key} = {value}  # {_where(setting)}{note}")
    return "\n".join(lines) + "\n"


# -- internals ------------------------------------------------------------------------
def _long_options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    out = {}
    for action in parser._actions:
        for option in action.option_strings:
            if option.startswith("--") and option[2:] not in NOT_SETTINGS:
                out[option[2:]] = action
    return out


def _load(path: Path) -> tuple[dict[str, Any], str]:
    import tomllib

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read config file '{path}': {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"config file '{path}' is not UTF-8 text") from None
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"config file '{path}': {exc}") from None


def _setting(
    path: Path, text: str, table: str, key: str, value: Any, options: dict[str, argparse.Action]
) -> Setting:
    action = options.get(key)
    if action is None:
        raise _error(path, text, key, table, f"unknown key '{key}' (keys are long option names)")
    option = f"--{key}"
    line = _line_of(text, table, key)
    if action.nargs == 0:  # a switch: true sets it, false leaves it off
        if not isinstance(value, bool):
            raise _error(path, text, key, table, f"'{key}' takes true or false")
        arguments = [option] if value else []
    elif isinstance(action, argparse._AppendAction) or action.__class__.__name__ == "_InOrder":
        values = value if isinstance(value, list) else [value]
        if not values or not all(isinstance(v, str) for v in values):
            raise _error(path, text, key, table, f"'{key}' takes a string or a list of strings")
        arguments = [f"{option}={v}" for v in values]
    else:
        arguments = [f"{option}={_scalar(path, text, table, key, value, action)}"]
    return Setting(key, value, path, line, arguments, action.dest)


def _scalar(
    path: Path, text: str, table: str, key: str, value: Any, action: argparse.Action
) -> str:
    if action.type is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise _error(path, text, key, table, f"'{key}' takes a whole number")
    if action.type is float and (isinstance(value, bool) or not isinstance(value, int | float)):
        raise _error(path, text, key, table, f"'{key}' takes a number")
    if action.type is None and not isinstance(value, str):
        raise _error(path, text, key, table, f"'{key}' takes a string")
    if action.choices is not None and value not in action.choices:
        choices = ", ".join(str(c) for c in action.choices)
        raise _error(path, text, key, table, f"'{key}' takes one of {choices}, not {value!r}")
    return str(value)


def _line_of(text: str, table: str, key: str) -> int:
    """The line of ``key`` in ``table`` ('' for the top level; 0 when not found)."""
    current = ""
    for number, line in enumerate(text.splitlines(), start=1):
        header = re.match(r"\s*\[\s*([^\]]+?)\s*\]\s*(#.*)?$", line)
        if header:
            current = re.sub(r"\s*\.\s*", ".", header.group(1)).replace('"', "")
            continue
        pattern = rf"\s*[\"']?{re.escape(key)}[\"']?\s*="
        if current == table and re.match(pattern, line):
            return number
    return 0


def _error(path: Path, text: str, key: str, table: str, message: str) -> ConfigFileError:
    line = _line_of(text, table, key)
    where = f"config file '{path}'" + (f", line {line}" if line else "")
    return ConfigFileError(f"{where}: {message}")


def _where(setting: Setting) -> str:
    line = f", line {setting.line}" if setting.line else ""
    return f"config file '{setting.path}'{line}, '{setting.key}'"


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return str(value)
