"""The immutable configuration every stage reads; validated once, in one place."""

from __future__ import annotations

import os
from collections.abc import Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar

from seqdedup.base.errors import UsageError
from seqdedup.config.groups import (
    MAX_SECONDS,
    MAX_STREAM_WINDOW,
    BudgetOptions,
    ConfigFields,
    Duration,
    FoldOptions,
    KeyOptions,
    LibraryOptions,
    MarkerOptions,
    RuleOptions,
    StreamOptions,
    at_least,
)

if TYPE_CHECKING:
    import re

MIN_WINDOW = 1
MIN_HISTORY = 100
STREAM_WAIT = 2.0  # --stream-by on a live input: seconds idle before pending records go


_Group = TypeVar(
    "_Group",
    RuleOptions,
    KeyOptions,
    MarkerOptions,
    FoldOptions,
    StreamOptions,
    LibraryOptions,
    BudgetOptions,
)

_AnyGroup = (
    RuleOptions
    | KeyOptions
    | MarkerOptions
    | FoldOptions
    | StreamOptions
    | LibraryOptions
    | BudgetOptions
)

# Whether a Config is being made from the command line: its errors then name options
# (--window-size); made in Python, they name the keywords (window_size).
_ON_COMMAND_LINE: ContextVar[bool] = ContextVar("seqdedup_on_command_line", default=False)


def config_of(config: Config | None, options: dict[str, object]) -> Config:
    """A run's configuration: ``config``, or one made of keyword ``options``."""
    if config is None:
        return Config(**options)
    if options:
        raise TypeError("pass either a Config or keyword options, not both")
    return config


def command_line_config(**settings: Any) -> Config:
    """A Config made from the command line's settings (errors name the options)."""
    token = _ON_COMMAND_LINE.set(True)
    try:
        return Config(**settings)
    finally:
        _ON_COMMAND_LINE.reset(token)


def keyword_names(message: str, fields: Sequence[str]) -> str:
    """A message about options, with each option that is a Config field named as the
    keyword (``--window-size`` -> ``window_size``)."""
    import re

    def keyword(match: re.Match[str]) -> str:
        name = match.group(1).replace("-", "_")
        return name if name in fields else match.group(0)

    return re.sub(r"--([a-z][a-z0-9-]*)", keyword, message)


def _unknown_option(name: str, fields: Sequence[str]) -> str:
    from difflib import get_close_matches

    close = get_close_matches(name, fields, n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return f"unknown option '{name}'{hint}"


PATH_FIELDS = ("library_dir", "keep_removed")  # Path | None fields (a str is taken too)
# --stream-by's named presets: the prefixes that interleaving tools write, the stream's
# name in the first group (the whole match, timestamps included, is left out of the key)
_SYSLOG_TIME = r"(?:\w{3} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT[\d:.]+(?:Z|[+-]\d\d:?\d\d)?)"
STREAM_PRESETS = {
    # kubectl logs --prefix (and stern --template the same): [pod/NAME/CONTAINER] ...
    "k8s": r"^\[pod/([^/\]]+)/[^\]]*\] ",
    # docker compose logs: "web-1  | ..." (the service's container is the stream)
    "compose": r"^([\w.-]+)\s*\| ",
    # journalctl -o short, and syslog files: "Nov 28 10:00:01 host sshd[812]: ..." (the
    # program is the stream; an ISO time as journalctl -o short-iso writes it too)
    "syslog": r"^" + _SYSLOG_TIME + r" \S+ ([^\s\[:]+)(?:\[\d+\])?: ",
}
STREAM_PRESETS["journal"] = STREAM_PRESETS["syslog"]
STEP_NAMES = ("normalize", "mask")  # the command line's key options, as keywords


def _steps_of_names(kwargs: dict[str, Any]) -> None:
    """``normalize="all"`` and ``mask=r"port=\\d+"`` (a str or a list each), as the
    command line names them, made ``key_steps`` in the order given."""
    named = [name for name in kwargs if name in STEP_NAMES]
    if not named:
        return
    if kwargs.get("key_steps"):
        raise TypeError("give key_steps or normalize/mask, not both")
    steps: list[tuple[str, str]] = []
    for name in named:
        value = kwargs.pop(name)
        values = [value] if isinstance(value, str) else list(value)
        if not all(isinstance(v, str) for v in values):
            raise TypeError(f"{name} takes a str or a list of str")
        steps += [(name, v) for v in values]
    kwargs["key_steps"] = tuple(steps)


def _paths_of_str(kwargs: dict[str, Any]) -> None:
    """Paths given as str (as the API is called: ``library_dir="L"``) made Paths, and
    one directory to read sequences from made a tuple of one."""
    reads = kwargs.get("read_sequences")
    if isinstance(reads, str | os.PathLike):
        kwargs["read_sequences"] = reads = (reads,)
    strings = [name for name in PATH_FIELDS if isinstance(kwargs.get(name), str)]
    if not strings and not any(isinstance(r, str) for r in reads or ()):
        return
    from pathlib import Path  # (only then: pathlib costs start-up time)

    for name in strings:
        kwargs[name] = Path(kwargs[name])
    if reads:
        kwargs["read_sequences"] = tuple(Path(r) for r in reads)


class Config(ConfigFields):
    """What the engine needs to know. ``None`` for a limit means unlimited.

    Immutable, and validated when made. (A NamedTuple, not a dataclass: importing
    dataclasses costs more start-up time than a one-line run of the whole tool.)
    """

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> Config:
        _steps_of_names(kwargs)
        preset = STREAM_PRESETS.get(kwargs.get("stream_by") or "")
        if preset is not None:  # (a preset's name stands for its pattern)
            kwargs["stream_by"] = preset
        unknown = [name for name in kwargs if name not in cls._fields]
        if unknown:
            raise TypeError(_unknown_option(unknown[0], cls._fields))
        _paths_of_str(kwargs)
        self = super().__new__(cls, *args, **kwargs)
        try:
            self.validate()
        except UsageError as exc:
            if _ON_COMMAND_LINE.get():
                raise
            raise UsageError(keyword_names(str(exc), cls._fields)) from None
        return self

    @classmethod
    def of(cls, *groups: _AnyGroup, **options: object) -> Config:
        """A Config made of option groups (``config.groups``) and keyword options, e.g.
        ``Config.of(RuleOptions(window_size=3), FoldOptions(fold=True), annotate=False)``.
        A group gives the fields it sets apart from its defaults (which are the
        Config's: two groups may share a field, as ``explain``); an option given twice
        with two values is an error."""
        merged: dict[str, object] = {}
        for given in (*(_set_fields(group) for group in groups), options):
            for name, value in given.items():
                if name in merged and merged[name] != value:
                    raise TypeError(f"{name} is given twice: {merged[name]!r} and {value!r}")
                merged[name] = value
        return cls(**merged)

    def quiet(self) -> Config:
        """The same rule and keys for a trial run: nothing reported, saved or folded
        (the hint after a run, --suggest-window's trials)."""
        return self._replace(
            inputs=("-",),
            annotate=False,
            annotation_format=None,
            explain=False,
            fold=False,
            fold_format=None,
            top=0,
            library_dir=None,
            read_sequences=(),
            sequence_stats=False,
        )

    def validate(self) -> None:
        """Raise UsageError naming the option for any value the engine cannot honour:
        each option's own bounds, each group's values, then what cannot go together."""
        for dest in OWN_BOUNDS:
            check_own(dest, getattr(self, dest))
        self.rule_options.validate()
        self.key_options.validate()
        if self.byte_mode and self.filters:
            raise UsageError(
                "--track/--bypass/--track-file/--bypass-file need text mode; "
                "they cannot be combined with --byte-mode"
            )
        self.marker_options.validate()
        self.fold_options.validate()
        if self.fold:
            _refuse_beside_fold(self)
        self.budget_options.validate()
        if self.budget is not None:
            _refuse_beside_budget(self)
        self.stream_options.validate(self.byte_mode)
        _check_stream_settings(self)
        if not isinstance(self.inputs, tuple) or not all(isinstance(n, str) for n in self.inputs):
            raise UsageError(f"inputs must be a tuple of names, got {self.inputs!r}")

    def _group(self, group: type[_Group]) -> _Group:
        return group._make(getattr(self, name) for name in group._fields)

    @property
    def rule_options(self) -> RuleOptions:
        return self._group(RuleOptions)

    @property
    def key_options(self) -> KeyOptions:
        return self._group(KeyOptions)

    @property
    def marker_options(self) -> MarkerOptions:
        return self._group(MarkerOptions)

    @property
    def fold_options(self) -> FoldOptions:
        return self._group(FoldOptions)

    @property
    def stream_options(self) -> StreamOptions:
        return self._group(StreamOptions)

    @property
    def library_options(self) -> LibraryOptions:
        return self._group(LibraryOptions)

    @property
    def budget_options(self) -> BudgetOptions:
        return self._group(BudgetOptions)

    @property
    def stream_split(self) -> bool:
        """Whether records are split into interleaved streams (``--stream-by``)."""
        return self.stream_by is not None or self.stream_by_json is not None

    @property
    def marks_variants(self) -> bool:
        """Whether markers say when a run's text differs from its occurrence's: with
        key options, in the default text or a template that names ``{variants}``."""
        template = self.annotation_format
        return self.annotate and self.keyed and (template is None or "{variants" in template)

    @property
    def keyed(self) -> bool:
        """Whether records are compared by something else than their whole text (key
        options): copies that count as one sequence may then differ in their text."""
        return self.key_options.keyed


def _set_fields(group: _AnyGroup) -> dict[str, object]:
    """The fields of ``group`` that differ from its defaults."""
    defaults = type(group)()
    return {
        name: value
        for name, value, default in zip(group._fields, group, defaults, strict=True)
        if value != default
    }


def _names_stream(template: str) -> bool:
    return "{stream" in template or "{match_stream" in template


def _check_stream_settings(config: Config) -> None:
    """What --stream-by cannot go with, and what needs it."""
    if isinstance(config.fold_every, Duration) and config.stream_split:
        raise UsageError(
            "--fold-every TIME cannot be combined with --stream-by: a stream's lines "
            "come every N of its records (give a count)"
        )
    if config.stream_split and config.window_size > MAX_STREAM_WINDOW:
        raise UsageError(
            f"--window-size with --stream-by is at most {MAX_STREAM_WINDOW:,}, "
            f"got {config.window_size:,}"
        )
    if config.stream_split:
        return
    for option, template in (
        ("--annotation-format", config.annotation_format),
        ("--fold-format", config.fold_format),
    ):
        if template is not None and _names_stream(template):
            raise UsageError(f"{option}: {{stream}} and {{match_stream}} need --stream-by")


def _refuse_beside_budget(config: Config) -> None:
    """What --budget cannot go with (it writes its own fold lines and markers, after
    reading the whole input)."""
    for option, given in (
        ("--stream-by", config.stream_split),
        ("--annotate", config.annotate),
        ("--explain", config.explain),
        ("--inverse", config.inverse),
        ("--track/--bypass", bool(config.filters)),
        ("--fold-format", config.fold_format is not None),
        ("--top", bool(config.top)),
        ("--hash-transform", config.hash_transform is not None),
    ):
        if given:
            raise UsageError(f"--budget cannot be combined with {option}")


def _refuse_beside_fold(config: Config) -> None:
    for option, given in (("--inverse", config.inverse), ("--annotate", config.annotate)):
        if given:
            raise UsageError(
                f"--fold cannot be combined with {option}: a summary line stands where "
                "records were removed, in the normal output only"
            )


def key_settings(config: Config) -> dict[str, object]:
    """What makes a run's keys, as a library records it (a library is used only by runs
    that make keys the same way). Normalisation passes in canonical form, so that
    ``--normalize uuid,ip`` and ``--normalize ip --normalize uuid`` agree."""
    steps: list[list[str]] = []
    if config.key_steps:
        from seqdedup.config.normalize import KeySteps, class_names

        for step in KeySteps(config.key_steps).passes:
            if isinstance(step, int):
                steps.append(["normalize", ",".join(class_names(step))])
            else:
                steps.append(["mask", step.pattern])
    settings: dict[str, object] = {
        "skip_chars": config.skip_chars,
        "hash_transform": config.hash_transform,
        "steps": steps,
        "json_key": sorted(set(config.json_key)),
        "json_ignore": sorted(set(config.json_ignore)),
    }
    if config.skip_fields:  # (only when set: libraries saved before it stay usable)
        settings["skip_fields"] = config.skip_fields
    # A stream run's keys (and the records it saves) leave the stream's name out.
    if config.stream_by is not None:
        settings["stream_by"] = config.stream_by
    if config.stream_by_json is not None:
        settings["stream_by_json"] = config.stream_by_json
    # A library saved under a minimum size holds the stretches that rule compares (and
    # one saved without it, windows): each is used only under the same rule.
    if config.min_size:
        settings["min_size"] = {config.size_unit: config.min_size}
    return settings


def describe_key_settings(settings: dict[str, object]) -> str:
    """Key settings as the options that make them."""
    parts = []
    if settings.get("skip_fields"):
        parts.append(f"--skip-fields {settings['skip_fields']}")
    if settings.get("skip_chars"):
        parts.append(f"--skip-chars {settings['skip_chars']}")
    for kind, value in settings.get("steps") or []:  # type: ignore[attr-defined]
        parts.append(f"--{kind} {value}")
    for option in ("json_key", "json_ignore"):
        for path in settings.get(option) or []:  # type: ignore[attr-defined]
            parts.append(f"--{option.replace('_', '-')} {path}")
    if settings.get("hash_transform"):
        parts.append(f"--hash-transform '{settings['hash_transform']}'")
    for option in ("stream_by", "stream_by_json"):
        if settings.get(option):
            parts.append(f"--{option.replace('_', '-')} '{settings[option]}'")
    sizes = settings.get("min_size")
    for unit, size in sizes.items() if isinstance(sizes, dict) else ():
        parts.append(f"--min-{unit} {size}")
    return " ".join(parts) or "no key options"


SECONDS = -1  # the bound of a duration: a number of seconds above 0, at most MAX_SECONDS

# Each option's own bounds, checked on its value alone: in every Config, and for every
# value of every settings file, whether or not it applies (Config.validate checks the
# combinations of what applies).
OWN_BOUNDS: dict[str, tuple[str, int]] = {
    "window_size": ("--window-size", MIN_WINDOW),
    "min_size": ("--min-bytes", 0),
    "max_history": ("--max-history", MIN_HISTORY),
    "max_unique_sequences": ("--max-unique-sequences", 1),
    "max_candidates": ("--max-candidates", 1),
    "skip_chars": ("--skip-chars", 0),
    "skip_fields": ("--skip-fields", 0),
    "top": ("--top", 0),
    "stream_idle": ("--stream-idle", 1),
    "max_streams": ("--max-streams", 1),
    "fold_every": ("--fold-every", 1),
    "fold_idle": ("--fold-idle", SECONDS),
    "transform_timeout": ("--transform-timeout", SECONDS),
    "rotate_wait": ("--rotate-wait", SECONDS),
}


# On the command line and in settings files, 0 says "none" for these (no limit, never).
ZERO_MEANS_NONE = frozenset({"fold_every", "fold_idle", "transform_timeout", "rotate_wait"})


def window_value(text: str) -> int | str:
    """-w N or -w auto (W = 1 and a minimum size)."""
    return "auto" if text == "auto" else int(text)


def check_own(dest: str, value: Any) -> None:
    """Raise UsageError when ``value`` is outside the bounds of the option ``dest``
    (None: not given)."""
    bound = OWN_BOUNDS.get(dest)
    if bound is None or value is None or isinstance(value, Duration) or value == "auto":
        return
    option, minimum = bound
    if minimum != SECONDS:
        at_least(option, value, minimum)
    elif isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise UsageError(f"{option} must be a number of seconds above 0, got {value!r}")
    elif not value <= MAX_SECONDS:
        raise UsageError(f"{option} must be at most {MAX_SECONDS:,} seconds (a year), got {value}")
