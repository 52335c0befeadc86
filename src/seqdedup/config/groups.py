"""Each feature's option group: the settings one feature reads, typed, with the checks
of its own values and their messages; and the fields of the whole configuration
(:class:`ConfigFields`, with their defaults) and the filter list's entries.

A :class:`~seqdedup.config.settings.Config` is the run's whole configuration (the
keyword options of the Python API, the command line's meaning); the module that
assembles a run (``run.stages``) hands each feature its group (``config.fold_options``)
and the few facts of other groups it needs, so that a feature reads its own options and
no others. :meth:`Config.validate` checks each group's values (``validate`` here) and
then what cannot go together across groups.

(No ``from __future__ import annotations`` here: ``typing.NamedTuple`` compiles a
``ForwardRef`` for each field annotated by a string, about 85 of them at every start-up;
annotated by types, the fields cost nothing. Only the ``Path`` fields stay strings:
``pathlib`` is imported only where a path is used.)
"""

from typing import TYPE_CHECKING, NamedTuple

from seqdedup.base.errors import UsageError
from seqdedup.config.budgetfields import VERBATIM_LEVELS, parse_event_fields, parse_levels
from seqdedup.config.markerfields import (
    FOLD_NAME_FIELDS,
    FOLD_NUMBER_FIELDS,
    MAX_VALUE,
    check_template,
)

if TYPE_CHECKING:
    import re
    from pathlib import Path

DEFAULT_WINDOW = 10
DEFAULT_HISTORY = 100_000
DEFAULT_UNIQUE_SEQUENCES = 10_000
DEFAULT_CANDIDATES = 10
DEFAULT_TRANSFORM_TIMEOUT = 60.0  # seconds one run of the --hash-transform command may take
DEFAULT_FOLD_EVERY = 10_000  # --fold: an interim line after this many removed records
DEFAULT_FOLD_IDLE = 5.0  # --fold: seconds of idle input before a line for the run so far
DEFAULT_STREAM_IDLE = 10_000  # --stream-idle: records without one of a stream end it
DEFAULT_MAX_STREAMS = 10_000  # --max-streams: beyond, the least recently active ends
DEFAULT_ROTATE_WAIT = 5.0  # --follow: seconds a rotated file's late lines are still read
MAX_SECONDS = 366 * 86400  # a year: longer waits mean nothing (and overflow the timers)
MAX_STREAM_WINDOW = 1 << 20  # a stream's window is held per stream (the kernel's bound)
DEFAULT_LEVELS = VERBATIM_LEVELS  # (every level is kept verbatim by default)
DEFAULT_EVENT_FIELDS = ("timestamp", "uuid", "hex", "pid", "port")


DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


class Duration(float):
    """A time in seconds where an option takes a count or a time (``--fold-every 30s``)."""

    @classmethod
    def parse(cls, text: str) -> "int | Duration":
        """``N`` (a count) or ``N`` followed by ms, s, m or h (a time)."""
        import re

        found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*", str(text))
        if found is None:
            raise ValueError(f"not a count nor a duration such as 30s or 5m: {text!r}")
        number, unit = found.groups()
        if unit is None:
            if "." in number:
                raise ValueError(f"a count is a whole number: {text!r}")
            return int(number)
        seconds = cls(float(number) * DURATION_UNITS[unit])
        if not 0 < seconds <= MAX_SECONDS:
            raise ValueError(f"a duration above 0 and at most a year: {text!r}")
        return seconds

    def __str__(self) -> str:
        return f"{float(self):g}s"


class RuleOptions(NamedTuple):
    """The rule: W, a minimum size and its unit, the history and the tables' bounds
    (None: unlimited)."""

    window_size: int = DEFAULT_WINDOW
    min_size: int = 0
    size_unit: str = "bytes"
    max_history: int | None = DEFAULT_HISTORY
    max_unique_sequences: int | None = DEFAULT_UNIQUE_SEQUENCES
    max_candidates: int | None = DEFAULT_CANDIDATES

    def validate(self) -> None:
        if self.max_history is not None and self.max_history < self.window_size:
            raise UsageError(
                f"--max-history ({self.max_history}) must be at least --window-size "
                f"({self.window_size}): a shorter history could never match a window"
            )
        if self.min_size and self.size_unit not in ("bytes", "tokens"):
            raise UsageError(f"size_unit is 'bytes' or 'tokens', not {self.size_unit!r}")


class KeyOptions(NamedTuple):
    """What a record is and what it is compared by: the delimiter, byte mode, and the
    key options (skips, normalisation and masks, JSON fields, the hash transform); the
    stream name's JSON path, left out of a key; whether why a record is keyed as text
    is kept (``--explain``). The defaults: whole records compared."""

    delimiter: bytes = b"\n"
    byte_mode: bool = False
    skip_chars: int = 0
    skip_fields: int = 0
    hash_transform: str | None = None
    transform_timeout: float | None = DEFAULT_TRANSFORM_TIMEOUT
    key_steps: tuple[tuple[str, str], ...] = ()
    json_key: tuple[str, ...] = ()
    json_ignore: tuple[str, ...] = ()
    stream_by_json: str | None = None
    explain: bool = False

    @property
    def keyed(self) -> bool:
        """Whether records are compared by something else than their whole text:
        copies that count as one sequence may then differ in their text."""
        return bool(
            self.key_steps
            or self.json_key
            or self.json_ignore
            or self.hash_transform
            or self.skip_chars
            or self.skip_fields
        )

    def validate(self) -> None:
        if not self.delimiter:
            raise UsageError("--delimiter must not be empty")
        if self.hash_transform is not None and not self.hash_transform.strip():
            raise UsageError("--hash-transform needs a command")
        if self.key_steps or self.json_key or self.json_ignore:
            self._validate_steps_and_paths()

    def _validate_steps_and_paths(self) -> None:
        """Class names, mask expressions and JSON paths (imported only when used)."""
        from seqdedup.config.jsonkeys import JsonSelector
        from seqdedup.config.normalize import KeySteps

        if (self.json_key or self.json_ignore) and self.byte_mode:
            raise UsageError("--json-key/--json-ignore need text mode; not with --byte-mode")
        KeySteps(self.key_steps)
        for option, paths in (("--json-key", self.json_key), ("--json-ignore", self.json_ignore)):
            if isinstance(paths, str) or not all(isinstance(path, str) for path in paths):
                raise UsageError(f"{option}: paths are a sequence of text, got {paths!r}")
        JsonSelector(self.json_key, self.json_ignore)


class MarkerOptions(NamedTuple):
    """What stands where records were removed, and what is said about them: markers
    (``--annotate``), explanations, colour, the inputs' names they cite."""

    annotate: bool = False
    annotation_format: str | None = None
    explain: bool = False
    inverse: bool = False
    color: bool = False
    inputs: tuple[str, ...] = ()

    def validate(self) -> None:
        if self.annotation_format is not None:
            if not self.annotate:
                raise UsageError("--annotation-format requires --annotate")
            check_template(self.annotation_format)


class FoldOptions(NamedTuple):
    """``--fold``: one summary line per run of removed records; its template (or
    "json", "otel"), when an interim line comes (removed records, or a time by the
    ``fold_clock``: "wall" or "records"), and after how long idle."""

    fold: bool = False
    fold_format: str | None = None
    fold_every: int | Duration | None = DEFAULT_FOLD_EVERY
    fold_clock: str = "wall"
    fold_idle: float | None = DEFAULT_FOLD_IDLE

    def validate(self) -> None:
        if self.fold_format is not None and not self.fold:
            raise UsageError("--fold-format requires --fold")
        if self.fold_format is not None and self.fold_format not in ("json", "otel"):
            check_template(
                self.fold_format, "--fold-format", FOLD_NUMBER_FIELDS, FOLD_NAME_FIELDS, "--fold"
            )
        if self.fold_clock not in ("wall", "records"):
            raise UsageError(f"fold_clock is 'wall' or 'records', not {self.fold_clock!r}")


class StreamOptions(NamedTuple):
    """``--stream-by`` / ``--stream-by-json``: interleaved sources, the rule per
    stream; when an idle stream ends, how many are held, whether each has its own
    history."""

    stream_by: str | None = None
    stream_by_json: str | None = None
    stream_idle: int | None = DEFAULT_STREAM_IDLE
    max_streams: int | None = DEFAULT_MAX_STREAMS
    per_stream: bool = False

    @property
    def split(self) -> bool:
        """Whether records are split into interleaved streams."""
        return self.stream_by is not None or self.stream_by_json is not None

    def validate(self, byte_mode: bool) -> None:
        if self.per_stream and not self.split:
            raise UsageError("--per-stream requires --stream-by or --stream-by-json")
        if not self.split:
            return
        if self.stream_by is not None and self.stream_by_json is not None:
            raise UsageError("--stream-by and --stream-by-json cannot be used together")
        if self.stream_by is not None:
            compile_stream_pattern(self.stream_by, byte_mode)
        else:
            from seqdedup.config.jsonkeys import parse_path

            if byte_mode:
                raise UsageError("--stream-by-json needs text mode; not with --byte-mode")
            parse_path(str(self.stream_by_json), "--stream-by-json")


def compile_stream_pattern(
    pattern: str, byte_mode: bool
) -> "tuple[re.Pattern[str] | None, re.Pattern[bytes] | None]":
    """``--stream-by``'s expression: on the record's text, or (byte mode) its bytes."""
    import re

    try:
        if byte_mode:
            return None, re.compile(pattern.encode("utf-8", "surrogateescape"))
        return re.compile(pattern), None
    except re.error as exc:
        raise UsageError(f"--stream-by: invalid regular expression '{pattern}': {exc}") from None


class LibraryOptions(NamedTuple):
    """Libraries: those read (``-r``) and the one saved to (``-l``, read too)."""

    read_sequences: "tuple[Path, ...]" = ()
    library_dir: "Path | None" = None

    @property
    def any(self) -> bool:
        """Whether the run reads or saves a library."""
        return self.library_dir is not None or bool(self.read_sequences)


class BudgetOptions(NamedTuple):
    """``--budget N``: the input reduced to N tokens; the lines kept verbatim (patterns
    and built-in levels), the fields that differ between copies of one event, how
    tokens are counted, the markers' detail, where what was removed is stored."""

    budget: int | None = None
    keep: tuple[str, ...] = ()
    keep_removed: "Path | None" = None
    verbatim_levels: tuple[str, ...] = DEFAULT_LEVELS
    event_fields: tuple[str, ...] = DEFAULT_EVENT_FIELDS
    tokenizer: str | None = None
    long_markers: bool = False

    def given_setting(self) -> str | None:
        """The first of --budget's settings given (None: none is)."""
        for option, given in (
            ("--keep", bool(self.keep)),
            ("--keep-removed", self.keep_removed is not None),
            ("--verbatim", self.verbatim_levels != DEFAULT_LEVELS),
            ("--event-fields", self.event_fields != DEFAULT_EVENT_FIELDS),
            ("--tokenizer", self.tokenizer is not None),
            ("--long-markers", self.long_markers),
        ):
            if given:
                return option
        return None

    def validate(self) -> None:
        if self.budget is None:
            setting = self.given_setting()
            if setting is not None:
                raise UsageError(f"{setting} requires --budget")
            return
        at_least("--budget", self.budget, 1)
        parse_levels(",".join(self.verbatim_levels) or "none")
        parse_event_fields(",".join(self.event_fields) or "none")
        import re

        for pattern in self.keep:
            try:
                re.compile(pattern.encode("utf-8", "surrogateescape"))
            except re.error as exc:
                raise UsageError(f"--keep: invalid regular expression '{pattern}': {exc}") from None


def at_least(option: str, value: int, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"{option} must be a whole number, got {value!r}")
    if value < minimum:
        raise UsageError(f"{option} must be at least {minimum}, got {value}")
    if value > MAX_VALUE:
        raise UsageError(f"{option} must be at most {MAX_VALUE:,}, got {value}")


class FilterRule(NamedTuple):
    """One entry of the ordered filter list: ``kind`` is "track" or "bypass"."""

    kind: str
    pattern: str
    origin: str = ""  # where it came from ("--track", or "file.txt:3"), for messages


class ConfigFields(NamedTuple):
    """The fields of :class:`~seqdedup.config.settings.Config`, with their defaults
    (each group above is a view of some of them)."""

    window_size: int = DEFAULT_WINDOW
    # --min-bytes / --min-tokens (-w auto): a repeat also holds at least this much of
    # ``size_unit`` ("bytes" or "tokens" of the keys, one per delimiter); 0: any size
    min_size: int = 0
    size_unit: str = "bytes"
    max_history: int | None = DEFAULT_HISTORY
    max_unique_sequences: int | None = DEFAULT_UNIQUE_SEQUENCES
    max_candidates: int | None = DEFAULT_CANDIDATES
    skip_chars: int = 0
    skip_fields: int = 0  # blank-separated fields left out of the key, before skip_chars
    # Markers and summary lines in colour (ANSI escapes): the command line sets it when
    # they go to a terminal (--color).
    color: bool = False
    hash_transform: str | None = None
    delimiter: bytes = b"\n"
    byte_mode: bool = False
    filters: tuple[FilterRule, ...] = ()
    inverse: bool = False
    annotate: bool = False
    annotation_format: str | None = None
    explain: bool = False
    read_sequences: "tuple[Path, ...]" = ()
    library_dir: "Path | None" = None
    transform_timeout: float | None = DEFAULT_TRANSFORM_TIMEOUT
    top: int = 0  # report the N costliest repeated sequences (0: no report)
    # Names of the input streams in order (the command line's files): markers,
    # explanations and statistics name them when there are several.
    inputs: tuple[str, ...] = ()
    # Key making (docs: Keys for real logs): ("normalize", "timestamp,uuid") and
    # ("mask", REGEX) passes in command-line order; JSON fields compared or ignored.
    key_steps: tuple[tuple[str, str], ...] = ()
    json_key: tuple[str, ...] = ()
    json_ignore: tuple[str, ...] = ()
    # Count the distinct sequences for the statistics (Stats.unique_sequences). That
    # needs attribution of every duplicate run; a run whose statistics nobody reads
    # (the command line's -q), with no markers, explanations, --top or library, skips it.
    sequence_stats: bool = True
    # --fold: one summary line in place of each run of skipped records (docs/ci-logs.md:
    # Folding repeats); its template or "json"; an interim line every N removed records
    # of a run that goes on (None: only at its end) and after this many seconds of idle
    # input (None: never; the command line's reader watches the time).
    fold: bool = False
    fold_format: str | None = None
    fold_every: int | Duration | None = DEFAULT_FOLD_EVERY  # removed records, or a time
    # --fold-every DURATION: "wall" (live input: the clock) or "records" (named files:
    # the records' own timestamps)
    fold_clock: str = "wall"
    fold_idle: float | None = DEFAULT_FOLD_IDLE
    # --follow: how long a rotated file is still read for lines written to it late
    rotate_wait: float | None = DEFAULT_ROTATE_WAIT
    # --stream-by REGEX / --stream-by-json PATH: interleaved sources, the rule per stream
    # (docs/kubernetes.md); a stream idle this many tracked records ends, and
    # beyond max_streams the least recently active one ends (None: never).
    stream_by: str | None = None
    stream_by_json: str | None = None
    stream_idle: int | None = DEFAULT_STREAM_IDLE
    max_streams: int | None = DEFAULT_MAX_STREAMS
    # --per-stream: each stream has its own history (a window another stream showed
    # is new to it); without it the history is shared
    per_stream: bool = False
    # --budget N: the whole input reduced to fit in N tokens (docs/llm-context.md); the
    # patterns of lines kept verbatim besides the built-in ones; where what was removed
    # is stored (--keep-removed)
    budget: int | None = None
    keep: tuple[str, ...] = ()
    keep_removed: "Path | None" = None
    # --verbatim LEVELS: the built-in levels kept verbatim ("error", "warning", "words");
    # --event-fields: the fields that differ between copies of one event;
    # --tokenizer: how tokens are counted (None: the built-in estimate);
    # --long-markers: markers with every detail (lines counted, values, three kinds)
    verbatim_levels: tuple[str, ...] = DEFAULT_LEVELS
    event_fields: tuple[str, ...] = DEFAULT_EVENT_FIELDS
    tokenizer: str | None = None
    long_markers: bool = False
