"""Builds the optional C kernel; everything else is in pyproject.toml.

The extension is optional: without a compiler (or with SEQDEDUP_NO_EXTENSION=1) the
install still succeeds and seqdedup runs its pure-Python engine.
"""

import os

from setuptools import Extension, setup

extensions = []
if os.environ.get("SEQDEDUP_NO_EXTENSION", "") in ("", "0"):
    extensions.append(
        Extension(
            "seqdedup._kernel",
            ["src/seqdedup/_kernel.c", "src/seqdedup/_kernel_attribution.c"],
            depends=[
                "src/seqdedup/_kernel.h",
                "src/seqdedup/normalize.h",
                "src/seqdedup/jsonkey.h",
            ],
            optional=True,
            extra_compile_args=["-std=c99"] if os.name != "nt" else [],
        )
    )

setup(ext_modules=extensions)
