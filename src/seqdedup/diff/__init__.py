"""``seqdedup diff GOOD... BAD``: what changed in BAD since the good runs (docs/diff.md).

``changes`` (the typed answer), ``profile`` (GOOD as counts and its whole sequences),
``compare`` (BAD against the profile, on the engine's decision-level call), ``inputs``
(GOOD's files, folders and libraries; BAD's file or standard input), ``text`` (the
answer as text or JSON, within a token budget) and ``page`` (the answer drawn).
Import the submodule that holds what you need.
"""

__all__ = ["changes", "compare", "inputs", "page", "profile", "text"]
