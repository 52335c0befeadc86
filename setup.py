"""Builds the optional C kernel; everything else is in pyproject.toml.

The extension is optional: without a compiler (or with SEQDEDUP_NO_EXTENSION=1) the
install still succeeds and seqdedup runs its pure-Python engine.
"""

import os
from pathlib import Path

from setuptools import Extension, setup
from setuptools.dist import Distribution

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


class _Distribution(Distribution):
    """setuptools' editable install asks for ``has_data`` before it installs data
    files (the man page) and distutils names it ``has_data_files``: without this, an
    editable install (the development venv) has no ``man seqdedup``."""

    def has_data(self) -> bool:
        return self.has_data_files()


setup(ext_modules=extensions, distclass=_Distribution)
