"""The fields of a marker or fold line, by kind (numbers, names), and the default marker
templates."""

from __future__ import annotations

from seqdedup.base.errors import UsageError

DEFAULT_ANNOTATION = (
    "[DUPLICATE: Lines {start}-{end} matched lines {match_start}-{match_end} "
    "(sequence seen {count} times)]"
)


def default_marker(start: int, end: int, source: int, count: int) -> bytes:
    """DEFAULT_ANNOTATION of a piece of records ``start`` .. ``end`` (0-based, one
    input without filters: a record's number is its index plus one) repeating those from
    ``source`` on, its sequence seen ``count`` times (the kernel's mark_runs writes the
    same)."""
    last = source + end - start
    return (
        f"[DUPLICATE: Lines {start + 1}-{end + 1} matched lines {source + 1}-{last + 1} "
        f"(sequence seen {count} times)]"
    ).encode()


DEFAULT_LIBRARY_ANNOTATION = (
    "[DUPLICATE: Lines {start}-{end} matched library sequence {sequence} "
    "records {match_start}-{match_end} (sequence seen {count} times)]"
)


# With several inputs the default texts name the files.
DEFAULT_FILES_ANNOTATION = (
    "[DUPLICATE: Lines {start}-{end} of {file} matched lines {match_start}-{match_end} "
    "of {match_file} (sequence seen {count} times)]"
)


DEFAULT_FILES_LIBRARY_ANNOTATION = (
    "[DUPLICATE: Lines {start}-{end} of {file} matched library sequence {sequence} "
    "records {match_start}-{match_end} (sequence seen {count} times)]"
)


# --stream-by: the default texts name the stream of the run and of its source.
DEFAULT_STREAM_ANNOTATION = (
    "[DUPLICATE: Lines {start}-{end} (stream {stream}) matched lines "
    "{match_start}-{match_end} (stream {match_stream}) (sequence seen {count} times)]"
)


DEFAULT_STREAM_LIBRARY_ANNOTATION = (
    "[DUPLICATE: Lines {start}-{end} (stream {stream}) matched library sequence "
    "{sequence} records {match_start}-{match_end} (sequence seen {count} times)]"
)


DEFAULT_STREAM_FILES_ANNOTATION = (
    "[DUPLICATE: Lines {start}-{end} of {file} (stream {stream}) matched lines "
    "{match_start}-{match_end} of {match_file} (stream {match_stream}) "
    "(sequence seen {count} times)]"
)


# (variants: 2 when a marker's run differs in its text from its occurrence, else 1)
NUMBER_FIELDS = ("start", "end", "match_start", "match_end", "count", "window_size", "variants")


FILE_FIELDS = ("file", "match_file")  # the input a piece lies in, and its source's


NAME_FIELDS = (*FILE_FIELDS, "stream", "match_stream")  # and with --stream-by, their streams


# --fold-format: the marker's fields, and what a summary line adds (docs/ci-logs.md)
FOLD_COUNTS = ("removed", "copies", "extra", "length", "part", "continues")


FOLD_NUMBER_FIELDS = (*NUMBER_FIELDS, *FOLD_COUNTS)


FOLD_NAME_FIELDS = (*NAME_FIELDS, "id", "sequence", "first_time", "last_time", "text")


MAX_FIELD_WIDTH = 1000  # a marker is one line, not a memory bomb


def check_template(
    template: str,
    option: str = "--annotation-format",
    numbers: tuple[str, ...] = NUMBER_FIELDS,
    names: tuple[str, ...] = NAME_FIELDS,
    switch: str = "--annotate",
) -> None:
    """Reject a malformed template (``option``: ``--annotation-format`` or
    ``--fold-format``), an empty one, one naming a field not in ``numbers`` or
    ``names``, or one whose field widths or precisions exceed MAX_FIELD_WIDTH."""
    import re
    import string

    if not template:
        what = "markers" if switch == "--annotate" else "summary lines"
        raise UsageError(f"{option} must not be empty (to write no {what}, leave out {switch})")
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise UsageError(f"{option}: malformed template '{template}': {exc}") from None
    fields = [name for _, name, _, _ in parsed if name is not None]
    for _, name, spec, _ in parsed:
        if spec and (
            "{" in spec or any(int(n) > MAX_FIELD_WIDTH for n in re.findall(r"\d+", spec))
        ):
            raise UsageError(
                f"{option}: the format of '{{{name}}}' ('{spec}') may not nest "
                f"fields or ask for more than {MAX_FIELD_WIDTH} characters"
            )
    for name in fields:
        if name not in numbers + names:
            allowed = ", ".join("{" + f + "}" for f in numbers + names)
            raise UsageError(f"{option}: unknown placeholder '{{{name}}}' (use {allowed})")
    try:  # format specs such as {start:>6} must fit every integer ({start:c} does not)
        for number in (0, MAX_VALUE):
            template.format(**dict.fromkeys(numbers, number), **dict.fromkeys(names, ""))
    except OverflowError as exc:
        raise UsageError(
            f"{option}: '{template}' cannot write every record number ({exc})"
        ) from None
    except (ValueError, IndexError, KeyError, AttributeError) as exc:
        raise UsageError(f"{option}: malformed template '{template}': {exc}") from None


MAX_VALUE = 2**63 - 1  # larger counts mean nothing, and the C kernel holds 64-bit integers
