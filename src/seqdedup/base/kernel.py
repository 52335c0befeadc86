"""Which engine runs: the compiled kernel (``seqdedup._kernel``) or pure Python.

The kernel is optional at install time. It is used whenever it can be imported, unless
``SEQDEDUP_ENGINE=python`` asks for the pure-Python engine; ``SEQDEDUP_ENGINE=c``
makes a missing kernel an error instead of a silent fallback. Both engines give
byte-identical results.
"""

from __future__ import annotations

import os
from types import ModuleType

from seqdedup.base.errors import SeqdedupError

# Record keys are hashed with this per-process random seed: the 128-bit key of the key
# hash, a pseudo-random function (SipHash-2-4-128 in the kernel, keyed BLAKE2b in Python),
# and the source of the window fingerprints' bases. No input can be crafted to collide
# without it (docs/engine.md, "Identity of windows").
SEED = int.from_bytes(os.urandom(16), "little")


def load() -> ModuleType | None:
    """The kernel module, or None when the pure-Python engine is to run."""
    wanted = os.environ.get("SEQDEDUP_ENGINE", "").strip().lower()
    if wanted == "python":
        return None
    try:
        from seqdedup import _kernel
    except ImportError:  # not built (no compiler at install time, another interpreter)
        if wanted == "c":
            raise SeqdedupError(
                "SEQDEDUP_ENGINE=c but the compiled kernel is not installed "
                "(reinstall with a C compiler, or unset SEQDEDUP_ENGINE)"
            ) from None
        return None
    return _kernel


def engine_name() -> str:
    """``"c"`` or ``"python"``: the engine a run started now would use."""
    try:
        return "c" if load() is not None else "python"
    except SeqdedupError:
        return "none (SEQDEDUP_ENGINE=c, kernel missing)"


_numpy: bool | None = None


def numpy_available() -> bool:
    """Whether numpy can be imported (looked up once, without importing it). The
    Python engine uses it for large batches when it is there; the core install does
    not require it."""
    global _numpy
    if _numpy is None:
        from importlib.util import find_spec

        _numpy = find_spec("numpy") is not None
    return _numpy
