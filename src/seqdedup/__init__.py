"""seqdedup: remove repeated sequences of records from a stream.

Importing the package is cheap (no numpy, no rich): heavy modules load only when a
large batch or a statistics table needs them.
"""

from __future__ import annotations

TYPE_CHECKING = False  # (not typing's: importing typing costs milliseconds at start-up)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path
    from typing import Any

    from seqdedup.api import Deduplicator, deduplicate
    from seqdedup.budget import Reduction
    from seqdedup.config import Config
    from seqdedup.decisions import Block, Decided, Decisions
    from seqdedup.diff.changes import Broken, Diff, Known, Line, New, Rate
    from seqdedup.diff.compare import DiffOptions
    from seqdedup.diff.inputs import diff_records
    from seqdedup.errors import SeqdedupError, UsageError
    from seqdedup.report import FoldEvent
    from seqdedup.stats import Stats
    from seqdedup.tokens import TokenCounter

# The public names, each loaded on first use (PEP 562): importing a module of the
# package (the console scripts' first step, seqdedup.launch) runs nothing else.
_LAZY = {
    "Block": "seqdedup.decisions",
    "Broken": "seqdedup.diff.changes",
    "Diff": "seqdedup.diff.changes",
    "DiffOptions": "seqdedup.diff.compare",
    "Known": "seqdedup.diff.changes",
    "Line": "seqdedup.diff.changes",
    "New": "seqdedup.diff.changes",
    "Rate": "seqdedup.diff.changes",
    "Config": "seqdedup.config",
    "Decided": "seqdedup.decisions",
    "Decisions": "seqdedup.decisions",
    "Deduplicator": "seqdedup.api",
    "FoldEvent": "seqdedup.report",
    "SeqdedupError": "seqdedup.errors",
    "Stats": "seqdedup.stats",
    "UsageError": "seqdedup.errors",
    "deduplicate": "seqdedup.api",
    "diff_records": "seqdedup.diff.inputs",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'seqdedup' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


__version__ = "0.1.0"


def reduce_to_budget(
    data: bytes,
    budget: int,
    *,
    keep: Sequence[str] = (),
    keep_removed: Path | str | None = None,
    count_tokens: TokenCounter | None = None,
    **options: Any,
) -> Reduction:
    """``seqdedup --budget``: the whole ``data`` reduced to fit in ``budget`` tokens
    (``count_tokens``: any function of a line's bytes; the built-in estimate
    otherwise), what it removed stored in ``keep_removed`` when given. ``options`` are
    :class:`Config`'s keywords (``window_size``, ``key_steps``, ``delimiter``, ...)."""
    from pathlib import Path

    from seqdedup import budget as reducer
    from seqdedup.config import Config

    options.setdefault("max_history", None)
    config = Config(
        budget=budget,
        keep=tuple(keep),
        keep_removed=Path(keep_removed) if keep_removed is not None else None,
        **options,
    )
    return reducer.reduce_to_budget(data, config, count_tokens)


def expand(reduced: bytes, store: Path | str) -> bytes:
    """``seqdedup-expand``: the original input of a reduced text, byte for byte, from
    the store its reduction wrote (an error when the store does not know the text)."""
    from pathlib import Path

    from seqdedup.removed import RemovedStore, restore

    opened = RemovedStore(Path(store), create=False)
    try:
        return restore(reduced, opened)
    finally:
        opened.close()


__all__ = [
    "Block",
    "Broken",
    "Config",
    "Decided",
    "Decisions",
    "Deduplicator",
    "Diff",
    "DiffOptions",
    "FoldEvent",
    "Known",
    "Line",
    "New",
    "Rate",
    "SeqdedupError",
    "Stats",
    "UsageError",
    "__version__",
    "deduplicate",
    "diff_records",
    "expand",
    "reduce_to_budget",
]
