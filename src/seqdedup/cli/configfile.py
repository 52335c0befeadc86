"""Settings from files: the user's ``$XDG_CONFIG_HOME/seqdedup/config.toml`` (default
``~/.config/seqdedup/config.toml``) and the project's ``.seqdedup.toml`` in the current
directory, or one file named by ``--config``; ``[profile.NAME]`` tables chosen with
``--profile NAME``.

Trust (docs/reference.md, Settings files): a project file owned by another user (root aside) or
writable by others is refused unless the user trusts its directory; options that run
commands or name files (:data:`TRUSTED_ONLY`) are taken from a project file only when the user's own
file lists its directory in ``trusted-projects`` (or ``"*"``); a file named by
``--config`` is the user's choice and trusted. Every value of every file is checked on its
own, whether it applies or not; at most :data:`MAX_BYTES` of a file are read.

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
import errno
import os
import re
import stat
from pathlib import Path
from typing import Any

from seqdedup.base.errors import UsageError
from seqdedup.config.settings import ZERO_MEANS_NONE, check_own, window_value

# Options that say where settings come from, or do something else than a run
NOT_SETTINGS = {"config", "no-config", "profile", "show-config", "help", "version"}
NOT_SETTINGS |= {"print-completion"}
# Options that run a command or name a file or directory to read or write: taken from a
# project's file only when the user trusts the project (tests/test_configfile.py checks
# that every such option of the command line is here).
TRUSTED_ONLY = frozenset({"hash-transform", "track-file", "bypass-file", "read-sequences"})
TRUSTED_ONLY |= {"library-dir", "output-dir", "keep-removed", "output", "report"}
TRUST_KEY = "trusted-projects"  # the user's own file only: directories (or "*") trusted
MAX_BYTES = 1 << 20  # a settings file is small; /dev/zero is not one


class ConfigFileError(UsageError):
    """A file's setting that cannot be used (exit 1, one line naming it)."""


class Setting:
    """One key of one file, as command-line arguments."""

    __slots__ = ("arguments", "dest", "key", "line", "path", "value")

    def __init__(
        self, key: str, value: object, path: Path, line: int, arguments: list[str], dest: str
    ) -> None:
        self.key, self.value, self.path, self.line = key, value, path, line
        self.arguments, self.dest = arguments, dest


class FileSettings:
    """What the files say: the files read, the profile chosen, the settings in the
    order they apply, and those refused (a project's, not trusted) with the reason."""

    def __init__(self, files: list[Path], profile: str | None) -> None:
        self.files = files
        self.profile = profile
        self.settings: list[Setting] = []
        self.refused: list[Setting] = []
        self.refusal = ""
        self.profiles: list[str] = []  # every profile the files define


def read_settings(
    parser: argparse.ArgumentParser,
    names: list[str],
    profile: str | None,
    user: str | None = None,
    project: str | None = None,
) -> FileSettings:
    """The settings of the files (with the profile's tables), every value checked
    against the parser's options. ``user``: the user's own file among them (the only one
    that may trust projects); ``project``: the project's file, whose options that run
    commands or name files need the user's trust."""
    options = _long_options(parser)
    paths = [Path(name) for name in names]
    found = FileSettings(paths, profile)
    profile_found = profile is None or profile in BUILT_IN_PROFILES
    built_in_at: int | None = None  # where a built-in profile's settings go in the order
    trusted: list[str] = []
    for path in paths:
        guarded = str(path) == project and not _trusts(trusted, project)
        document, text = _load(path, guarded)
        trust = document.pop(TRUST_KEY, None)
        if trust is not None:
            if str(path) != user:
                raise _error(path, text, TRUST_KEY, "", "only the user's own file trusts projects")
            trusted = _trusted(path, text, trust)
        profiles = document.pop("profile", {})
        if not isinstance(profiles, dict):
            raise _error(path, text, "profile", "", "[profile.NAME] tables are expected")
        tables: list[tuple[dict[str, object], str, bool]] = [(document, "", True)]
        for name, table in profiles.items():
            if not isinstance(table, dict):
                raise _error(path, text, name, "", "a profile is a [profile.NAME] table")
            tables.append((table, f"profile.{name}", name == profile))
            found.profiles.append(name)
            profile_found = profile_found or name == profile
        for table, name, applies in tables:
            if applies and name and built_in_at is None:
                built_in_at = len(found.settings)  # (the files' own table refines it)
            for key, value in table.items():
                setting = _setting(path, text, name, key, value, options)
                if not applies:  # checked all the same
                    continue
                if str(path) == project and key in TRUSTED_ONLY and not _trusts(trusted, project):
                    found.refused.append(setting)
                    continue
                found.settings.append(setting)
    if profile in BUILT_IN_PROFILES:
        at = len(found.settings) if built_in_at is None else built_in_at
        found.settings[at:at] = built_in_settings(profile, options)
    if found.refused:
        keys = ", ".join(dict.fromkeys(s.key for s in found.refused))
        found.refusal = (
            f"not taken from {project}: {keys} (options that run commands or name files "
            f"come from a project's settings only when you trust it: {TRUST_KEY} in your own "
            "settings file)"
        )
    if not profile_found:
        where = ", ".join(str(p) for p in paths) or "no config file"
        raise UsageError(f"--profile {profile}: no [profile.{profile}] table in {where}")
    return found


# Profiles every user has, chosen like a file's (``--profile logs``). ``logs``: what a
# log needs to lose its repeats (docs/reference.md, "The logs profile", has the figures
# it was chosen by): numbers, ids, addresses and timestamps masked in the keys, and the
# window by size, so a repeat is a stretch of at least 64 bytes of such keys; each run
# of repeats folded into one counted line. A file's own [profile.logs] table applies
# after it.
BUILT_IN_PROFILES = {
    "logs": 'window-size = "auto"\nnormalize = "all"\nfold = true\n',
}
BUILT_IN = Path("<built-in>")


def built_in_settings(profile: str, options: dict[str, argparse.Action]) -> list[Setting]:
    import tomllib

    text = BUILT_IN_PROFILES[profile]
    return [
        _setting(BUILT_IN, text, "", key, value, options)
        for key, value in tomllib.loads(text).items()
    ]


def _trusted(path: Path, text: str, value: Any) -> list[str]:
    """The directories a user's file trusts (absolute, resolved), or ["*"]."""
    values = value if isinstance(value, list) else [value]
    if not values or not all(isinstance(v, str) and v for v in values):
        raise _error(path, text, TRUST_KEY, "", f"'{TRUST_KEY}' takes a list of directories")
    return ["*" if v == "*" else os.path.realpath(os.path.expanduser(v)) for v in values]


def _project_directory(project: str | None) -> str:
    """The directory of the project's file (resolved): what a user trusts."""
    return os.path.realpath(os.path.dirname(project or "") or ".")


def _trusts(trusted: list[str], project: str | None) -> bool:
    """Whether the project (the directory of its file) is trusted."""
    return "*" in trusted or _project_directory(project) in trusted


def _open_project(path: Path) -> int:
    """The project file, opened once and checked on that descriptor (git's
    safe.directory and sudo's rules, for the same reason): refused when it is a symbolic
    link another user made, not a regular file, owned by another user (root aside),
    writable by others, or in a folder another user owns or others may write to without
    the sticky bit (anyone there could replace it at any moment). What is checked is
    what is read: no swap between the check and the read."""
    me = os.getuid()
    flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        try:
            fd = os.open(path, flags | getattr(os, "O_NOFOLLOW", 0))
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            link = os.lstat(path)
            if link.st_uid not in (me, 0):
                _refuse(path, f"it is a symbolic link made by another user (uid {link.st_uid})")
            fd = os.open(path, flags)  # (your own link: followed)
    except OSError as exc:
        raise UsageError(f"cannot read config file '{path}': {exc.strerror or exc}") from None
    try:
        status = os.fstat(fd)
        folder = os.stat(os.path.dirname(path) or ".")
        if not stat.S_ISREG(status.st_mode):
            _refuse(path, "it is not a regular file")
        if status.st_uid not in (me, 0):
            _refuse(path, f"it belongs to another user (uid {status.st_uid})")
        if status.st_mode & 0o022:
            _refuse(path, "others may write to it")
        if folder.st_uid not in (me, 0):
            _refuse(path, f"its folder belongs to another user (uid {folder.st_uid})")
        if folder.st_mode & 0o002 and not folder.st_mode & stat.S_ISVTX:
            _refuse(path, "others may replace it: its folder is writable by others")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _refuse(path: Path, why: str) -> None:
    here = _project_directory(str(path))
    raise ConfigFileError(
        f"refusing the settings file '{path}': {why}; to use it, trust this directory "
        f'({TRUST_KEY} = ["{here}"] in your own settings file), or run with --no-config'
    )


def arguments_before(settings: FileSettings, given: set[str]) -> list[str]:
    """The files' settings as arguments, without those of options the command line
    gives (``given``: their destinations); a later setting of an option replaces an
    earlier one."""
    latest: dict[str, Setting] = {}
    for setting in settings.settings:
        latest.pop(setting.dest, None)  # (keeps the order in which they apply)
        latest[setting.dest] = setting
    return [arg for s in latest.values() if s.dest not in given for arg in s.arguments]


def replaced_key_steps(settings: FileSettings, given: set[str]) -> str | None:
    """One line when the command line's ``--normalize``/``--mask`` replace the files'
    (they are one list, replaced whole), saying what went and how to keep it."""
    if "key_specs" not in given:
        return None
    gone = [s for s in settings.settings if s.dest == "key_specs"]
    if not gone:
        return None
    shown = ", ".join(f"{s.key} = {_toml_value(s.value)} ({_where(s)})" for s in gone)
    keep = " ".join(f"--{s.key} {value}" for s in gone for value in _listed(s.value))
    return (
        f"the command line's --normalize/--mask replace the settings' {shown}: "
        f"give {keep} too to keep them"
    )


def _listed(value: object) -> list[str]:
    """A setting's values as command-line words (quoted as a shell needs them)."""
    from shlex import quote

    return [quote(str(v)) for v in (value if isinstance(value, list) else [value])]


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
            off = (
                f" (--no-{setting.key} turns it off for this run)" if setting.value is True else ""
            )
            return ConfigFileError(f"{_where(setting)}: {exc}{off}")
    files = ", ".join(str(p) for p in settings.files)
    return ConfigFileError(f"the settings of {files}: {message}")


def describe(
    settings: FileSettings,
    given: set[str],
    parser: argparse.ArgumentParser,
    effective: argparse.Namespace,
    dropped: dict[str, str],
    changed_only: bool = False,
) -> str:
    """``--show-config``: the files read, the profile (and every profile the files
    define), then every setting with the value in effect (``effective``: the files'
    and the command line's arguments parsed) and where it comes from (a file and line,
    the command line, or the default); then the files' settings something replaced.
    ``dropped``: settings a switch turned off took with it (dest -> the switch's).
    The settings are TOML that reads back to the same settings (``changed_only``: only
    those that are not defaults)."""

    def by_command_line(dest: str) -> str:
        switch = dropped.get(dest)
        return "the command line" if switch is None else f"--no-{switch.replace('_', '-')}"

    lines = ["# files read: " + (", ".join(str(p) for p in settings.files) or "none")]
    available = ", ".join(dict.fromkeys(settings.profiles)) or "none"
    built_in = ", ".join(BUILT_IN_PROFILES)
    lines.append(
        f"# profile: {settings.profile or 'none'} (in the files: {available}; built in: {built_in})"
    )
    last = {s.dest: k for k, s in enumerate(settings.settings)}
    for key, action in _long_options(parser).items():
        if action.dest == "help" or key != _first_long(action):
            continue
        value = _shown(key, getattr(effective, action.dest, None))
        if action.dest in given:
            source = by_command_line(action.dest)
        elif action.dest in last:
            source = _where(settings.settings[last[action.dest]])
        else:
            source = "default"
        if changed_only and source == "default":
            continue
        if value is None or value == []:
            lines.append(f"# {key}: not set  # {source}")
        else:
            lines.append(f"{key} = {_toml_value(value)}  # {source}")
    for k, setting in enumerate(settings.settings):
        if setting.dest in given or last[setting.dest] != k:
            by = by_command_line(setting.dest) if setting.dest in given else "a later setting"
            value = _toml_value(setting.value)
            lines.append(f"# replaced by {by}: {setting.key} = {value}  # {_where(setting)}")
    for setting in settings.refused:
        value = _toml_value(setting.value)
        lines.append(f"# refused: {setting.key} = {value}  # {_where(setting)}: not trusted")
    if settings.refusal:
        lines.append(f"# {settings.refusal}")
    return "\n".join(lines) + "\n"


# -- internals ------------------------------------------------------------------------
def _long_options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    out = {}
    for action in parser._actions:
        if getattr(action, "negates", False):
            continue  # (--no-fold: a file says fold = false)
        for option in action.option_strings:
            if option.startswith("--") and option[2:] not in NOT_SETTINGS:
                out[option[2:]] = action
    return out


def _first_long(action: argparse.Action) -> str:
    return next(o for o in action.option_strings if o.startswith("--"))[2:]


def _load(path: Path, guarded: bool = False) -> tuple[dict[str, object], str]:
    """A file's settings and text; ``guarded``: an untrusted project's file, opened and
    checked by :func:`_open_project` and read from that same descriptor."""
    import tomllib

    try:
        opened = os.fdopen(_open_project(path), "rb") if guarded else path.open("rb")
        with opened as file:  # (a pipe too: --config <(cmd))
            data = file.read(MAX_BYTES + 1)
        if len(data) > MAX_BYTES:
            raise UsageError(f"config file '{path}' is larger than {MAX_BYTES >> 20} MiB")
        text = data.decode("utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read config file '{path}': {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"config file '{path}' is not UTF-8 text") from None
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"config file '{path}': {exc}") from None


def _setting(
    path: Path, text: str, table: str, key: str, value: object, options: dict[str, argparse.Action]
) -> Setting:
    action = options.get(key)
    if action is None:
        from difflib import get_close_matches

        close = get_close_matches(key, list(options), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        message = f"unknown key '{key}' (keys are long option names{hint})"
        raise _error(path, text, key, table, message)
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
    setting = Setting(key, value, path, line, arguments, action.dest)
    try:
        if not (value == 0 and action.dest in ZERO_MEANS_NONE):
            check_own(action.dest, value)
    except UsageError as exc:
        raise ConfigFileError(f"{_where(setting)}: {exc}") from None
    return setting


def _scalar(
    path: Path, text: str, table: str, key: str, value: object, action: argparse.Action
) -> str:
    whole = isinstance(value, int) and not isinstance(value, bool)
    if action.type is window_value and value != "auto" and not whole:
        raise _error(path, text, key, table, f"'{key}' takes a whole number or auto")
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
    if setting.path == BUILT_IN:
        return f"the built-in profile, '{setting.key}'"
    line = f", line {setting.line}" if setting.line else ""
    return f"config file '{setting.path}'{line}, '{setting.key}'"


def _shown(key: str, value: object) -> object:
    """A setting's value as its key takes it: of the key steps (``--normalize`` and
    ``--mask`` share one list of (option, value) pairs), this key's own values."""
    if isinstance(value, list) and value and all(isinstance(v, tuple) for v in value):
        return [v[1] for v in value if v[0] == key]
    return value


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return str(value)
