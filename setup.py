"""Builds the optional C kernel; everything else is in pyproject.toml.

The extension is optional: without a compiler (or with SEQDEDUP_NO_EXTENSION=1) the
install still succeeds and seqdedup runs its pure-Python engine.
"""

import os
from pathlib import Path

from setuptools import Extension, setup

# The kernel's C units and their internal headers (src/seqdedup/csrc/kernel.h says
# which unit holds what).
CSRC = Path("src/seqdedup/csrc")
extensions = []
if os.environ.get("SEQDEDUP_NO_EXTENSION", "") in ("", "0"):
    extensions.append(
        Extension(
            "seqdedup._kernel",
            sorted(str(path) for path in CSRC.glob("*.c")),
            depends=sorted(str(path) for path in CSRC.glob("*.h")),
            optional=True,
            # Only the module's init function is exported from the units.
            extra_compile_args=["-std=c99", "-fvisibility=hidden"] if os.name != "nt" else [],
        )
    )

setup(ext_modules=extensions)
