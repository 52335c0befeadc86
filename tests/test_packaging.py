"""Installing without a working C compiler still gives a working seqdedup."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import user_env

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_install_without_a_compiler_runs_the_python_engine(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(
        ROOT / "src", source / "src", ignore=shutil.ignore_patterns("*.so", "__pycache__")
    )
    shutil.copytree(ROOT / "man", source / "man")
    target = tmp_path / "site"
    env = user_env()
    env.update(CC="false", LDSHARED="false")  # every compiler call fails
    install = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-build-isolation",  # (this environment's setuptools: the dev extra's)
            "--target",
            str(target),
            str(source),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-2000:]
    assert not list(target.rglob("_kernel*.so")), "the extension should not have been built"
    # The metadata: the version as the package says it, an SPDX licence and its text.
    from seqdedup import __version__

    (dist_info,) = target.glob("seqdedup-*.dist-info")
    metadata = (dist_info / "METADATA").read_text()
    assert f"\nVersion: {__version__}\n" in metadata
    assert "\nLicense-Expression: MIT\n" in metadata
    assert "MIT License" in next(dist_info.rglob("LICENSE")).read_text()
    # -S: only the stdlib and the fresh install, not this environment's site-packages.
    run_env = user_env()
    run_env["PYTHONPATH"] = str(target)
    run_env.pop("SEQDEDUP_ENGINE", None)
    version = subprocess.run(
        [sys.executable, "-S", "-m", "seqdedup", "--version"],
        capture_output=True,
        text=True,
        env=run_env,
        timeout=60,
    )
    assert version.stdout.strip().endswith("(engine: python)"), version.stderr
    run = subprocess.run(
        [sys.executable, "-S", "-m", "seqdedup", "-q", "-w", "2"],
        input=b"a\nb\nc\na\nb\nd\n",
        capture_output=True,
        env=run_env,
        timeout=60,
    )
    assert (run.returncode, run.stdout) == (0, b"a\nb\nc\nd\n"), run.stderr
    # A large input takes every large-batch path; here without numpy (no site-packages).
    lines = b"".join(b"event %d\n" % (i % 1500) for i in range(6000))
    library = tmp_path / "library"

    def seqdedup(*args, bare=True):
        python = [sys.executable, "-S"] if bare else [sys.executable]
        return subprocess.run(
            [*python, "-m", "seqdedup", "-q", *args],
            input=lines,
            capture_output=True,
            env=run_env if bare else user_env(),
            timeout=120,
        )

    for args in (["-w", "3"], ["-w", "3", "-m", "500"], ["-w", "3", "--bypass", "^event 1"]):
        first = seqdedup(*args, "-l", str(library))
        assert first.returncode == 0, first.stderr
        installed = seqdedup(*args, "-r", str(library), bare=False)
        fallback = seqdedup(*args, "-r", str(library))
        assert fallback.returncode == 0, fallback.stderr
        assert fallback.stdout == installed.stdout


# Modules a one-line run must not pay for at start-up (each costs milliseconds to import;
# rich, numpy, sqlite3 and the JSON parsers are imported when a run needs them).
HEAVY = {"rich", "numpy", "dataclasses", "inspect", "sqlite3", "dask", "pandas", "json", "orjson"}
# (argparse's help formatter would import shutil, and with it bz2 and lzma, in every run)
HEAVY |= {"shutil", "bz2", "lzma"}
# (threading: only a hash transform, a thread of attribution or a library's caller need
# it; --stream-by's decider only its runs; each about a millisecond)
HEAVY |= {"threading", "seqdedup.engine.stream_decider"}
# (the rule with a minimum size: only its runs, -w auto among them)
HEAVY |= {"seqdedup.engine.sized"}


def test_a_one_line_run_imports_nothing_heavy():
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "seqdedup", "-q"],
        input=b"a\n",
        capture_output=True,
        env=user_env(),
        timeout=60,
    )
    assert run.returncode == 0 and run.stdout == b"a\n", run.stderr[-2000:]
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in run.stderr.decode().splitlines()
        if line.startswith("import time:")
    }
    assert "seqdedup.api" in imported  # the report was read
    assert not imported & HEAVY, sorted(imported & HEAVY)
