"""Which engine runs, chosen here and nowhere else: :func:`chosen_engine` gives the
compiled kernel's :class:`CEngine` or the Python engine
(:class:`seqdedup.engine.pyengine.PythonEngine`), two objects with the
same names (:class:`seqdedup.base.engine.Engine`), as CPython chooses ``_bisect`` or
``bisect``'s own functions once.

The kernel is optional at install time. It is used whenever it can be imported, unless
``SEQDEDUP_ENGINE=python`` asks for the pure-Python engine; ``SEQDEDUP_ENGINE=c``
makes a missing kernel an error instead of a silent fallback. The C engine
(:mod:`seqdedup.base.cengine`) is the only object that imports ``seqdedup._kernel``, made
here only when it is chosen: a run on the Python engine never loads compiled code.
"""

from __future__ import annotations

import os

from seqdedup.base.cengine import CEngine
from seqdedup.base.engine import Engine
from seqdedup.base.errors import SeqdedupError

_compiled: CEngine | None = None


def chosen_engine() -> Engine:
    """The engine a run started now uses (``SEQDEDUP_ENGINE``: ``python``, ``c``, or
    unset: the kernel where it is built)."""
    wanted = os.environ.get("SEQDEDUP_ENGINE", "").strip().lower()
    if wanted == "python":
        return python_engine()
    try:
        return engine_named("c")
    except ImportError:  # not built (no compiler at install time, another interpreter)
        if wanted == "c":
            raise SeqdedupError(
                "SEQDEDUP_ENGINE=c but the compiled kernel is not installed "
                "(reinstall with a C compiler, or unset SEQDEDUP_ENGINE)"
            ) from None
        return python_engine()


def engine_named(name: str) -> Engine:
    """The engine called ``name`` (``"c"``: ImportError where the kernel is not built):
    a cluster's workers use the one the job's client chose."""
    return python_engine() if name == "python" else compiled_engine()


def python_engine() -> Engine:
    """The Python engine (its module imported here, where a run takes it)."""
    from seqdedup.engine.pyengine import PYTHON

    return PYTHON


def compiled_engine() -> CEngine:
    """The C engine (made once; ImportError where the kernel is not built)."""
    global _compiled
    if _compiled is None:
        _compiled = CEngine()
    return _compiled


def compiled(engine: Engine) -> CEngine | None:
    """The C engine where ``engine`` is it (None: the Python engine), for the stages only
    the kernel has: its chunk path, matchers, attribution and stream matcher."""
    return engine if isinstance(engine, CEngine) else None


def engine_name() -> str:
    """``"c"`` or ``"python"``: the engine a run started now would use."""
    try:
        return chosen_engine().name
    except SeqdedupError:
        return "none (SEQDEDUP_ENGINE=c, kernel missing)"
