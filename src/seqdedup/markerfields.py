"""The fields of a marker or fold line, by kind (numbers, names), and the default marker
templates."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


DEFAULT_ANNOTATION = (
    "[DUPLICATE: Lines {start}-{end} matched lines {match_start}-{match_end} "
    "(sequence seen {count} times)]"
)


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


FOLD_NAME_FIELDS = (*NAME_FIELDS, "id", "sequence", "first_time", "last_time")
