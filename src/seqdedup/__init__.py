"""seqdedup: remove repeated sequences of records from a stream.

Importing the package is cheap (no numpy, no rich): heavy modules load only when a
large batch or a statistics table needs them.
"""

from __future__ import annotations

from seqdedup.base.version import __version__  # (one place: the build reads it there)

TYPE_CHECKING = False  # (not typing's: importing typing costs milliseconds at start-up)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path
    from typing import Any

    from seqdedup.api import Deduplicator, deduplicate
    from seqdedup.base.errors import SeqdedupError, UsageError
    from seqdedup.base.tokens import TokenCounter
    from seqdedup.budget.reduce import Reduction
    from seqdedup.config.settings import Config
    from seqdedup.diff.changes import Broken, Diff, Known, Line, New, Rate, Values
    from seqdedup.diff.compare import DiffOptions
    from seqdedup.diff.inputs import diff_records
    from seqdedup.engine.decisions import Block, Decided, Decisions, Piece
    from seqdedup.run.markers import FoldEvent
    from seqdedup.run.stats import Stats

# The public names, each loaded on first use (PEP 562): importing a module of the
# package (the console scripts' first step, seqdedup.cli.launch) runs nothing else.
_LAZY = {
    "Block": "seqdedup.engine.decisions",
    "Broken": "seqdedup.diff.changes",
    "Call": "seqdedup.loops.calls",
    "Diff": "seqdedup.diff.changes",
    "DiffOptions": "seqdedup.diff.compare",
    "Known": "seqdedup.diff.changes",
    "Line": "seqdedup.diff.changes",
    "Loop": "seqdedup.loops.rule",
    "New": "seqdedup.diff.changes",
    "Piece": "seqdedup.engine.decisions",
    "Rate": "seqdedup.diff.changes",
    "Values": "seqdedup.diff.changes",
    "Config": "seqdedup.config.settings",
    "Decided": "seqdedup.engine.decisions",
    "Decisions": "seqdedup.engine.decisions",
    "Deduplicator": "seqdedup.api",
    "FoldEvent": "seqdedup.run.markers",
    "SeqdedupError": "seqdedup.base.errors",
    "Stats": "seqdedup.run.stats",
    "UsageError": "seqdedup.base.errors",
    "deduplicate": "seqdedup.api",
    "diff_records": "seqdedup.diff.inputs",
    "find_loops": "seqdedup.loops.rule",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'seqdedup' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


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

    from seqdedup.budget import reduce as reducer
    from seqdedup.config.settings import Config

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

    from seqdedup.budget.removed import RemovedStore, restore

    opened = RemovedStore(Path(store), create=False)
    try:
        return restore(reduced, opened)
    finally:
        opened.close()


# Import paths the documentation gave before the modules moved into their packages:
# ``import seqdedup.errors`` and ``from seqdedup.ledger import RunObserver`` still work,
# and give the module itself (loaded on first use, as the names above are).
_MOVED = {"seqdedup.errors": "seqdedup.base.errors", "seqdedup.ledger": "seqdedup.run.ledger"}


if TYPE_CHECKING:
    from importlib.abc import Loader as _Loader
    from importlib.machinery import ModuleSpec
    from types import ModuleType
else:
    _Loader = object  # (importlib.abc costs 45 ms at start-up: the methods are enough)


class _MovedModules(_Loader):
    """A finder for :data:`_MOVED`: the old name is bound to the module at its new place."""

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if name not in _MOVED:
            return None
        from importlib.machinery import ModuleSpec

        return ModuleSpec(name, self)

    def create_module(self, spec: ModuleSpec) -> None:
        return None  # (the default module, replaced by the real one in exec_module)

    def exec_module(self, module: ModuleType) -> None:
        import sys
        from importlib import import_module

        sys.modules[module.__name__] = import_module(_MOVED[module.__name__])  # (returned)


def _install_moved_modules() -> None:
    import sys

    if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
        sys.meta_path.append(_MovedModules())


_install_moved_modules()

__all__ = [
    "Block",
    "Broken",
    "Call",
    "Config",
    "Decided",
    "Decisions",
    "Deduplicator",
    "Diff",
    "DiffOptions",
    "FoldEvent",
    "Known",
    "Line",
    "Loop",
    "New",
    "Piece",
    "Rate",
    "SeqdedupError",
    "Stats",
    "UsageError",
    "Values",
    "__version__",
    "deduplicate",
    "diff_records",
    "expand",
    "find_loops",
    "reduce_to_budget",
]
