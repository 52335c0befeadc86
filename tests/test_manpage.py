"""The man page: made from the parser and the README's examples (tools/manpage.py), in
sync with --help, valid roff, and shipped where `man` finds it; the sdist and the wheel
that `python -m build` makes install and run in a fresh venv."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from conftest import needs, seqdedup_command, user_env

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "man" / "seqdedup.1"


def test_the_shipped_page_is_what_the_tool_writes():
    pytest.importorskip("argparse_manpage")
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import manpage
    finally:
        sys.path.pop(0)
    assert PAGE.read_text() == manpage.page(), "run: python tools/manpage.py > man/seqdedup.1"
    for name, write in manpage.PAGES.items():
        if name == "seqdedup":
            continue
        shipped = ROOT / "man" / f"{name}.1"
        assert shipped.read_text() == write(), f"run: python tools/manpage.py {name} > {shipped}"


def test_every_option_of_help_is_in_the_page():
    help_text = subprocess.run(
        [*seqdedup_command(), "--help"], capture_output=True, text=True, env=user_env()
    ).stdout
    options = set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", help_text))
    assert len(options) > 40
    page = PAGE.read_text().replace("\\-", "-")
    assert sorted(o for o in options if o not in page) == []
    for example in ("seqdedup -w 5 app.log > app.dedup.log", "journalctl -f | seqdedup -w 1 -q"):
        assert example in page.replace("\\e", "\\")


@needs(shutil.which("groff") is not None, "groff (.ci/run installs groff-base)")
@pytest.mark.parametrize("page", sorted(p.name for p in (ROOT / "man").glob("*.1")))
def test_every_page_is_valid_roff(page):
    """Every command's page (all five: a test below checks they ship)."""
    done = subprocess.run(
        ["groff", "-man", "-Tutf8", "-ww", "-z", str(ROOT / "man" / page)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr


def test_every_command_has_a_page_that_ships():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    own = {"seqdedup-diff", "seqdedup-loops"}  # (seqdedup diff, seqdedup loops)
    commands = set(project["project"]["scripts"]) | own
    shipped = project["tool"]["setuptools"]["data-files"]["share/man/man1"]
    assert {Path(page).stem for page in shipped} == commands
    assert all((ROOT / page).is_file() for page in shipped)


@pytest.mark.slow
def test_the_built_wheel_installs_runs_and_brings_its_man_page(tmp_path):
    pytest.importorskip("build")
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    for folder in ("src", "man"):  # (as a clone has them: no build, no egg-info)
        shutil.copytree(
            ROOT / folder,
            source / folder,
            ignore=shutil.ignore_patterns("*.so", "__pycache__", "*.egg-info"),
        )
    dist = tmp_path / "dist"
    # The sdist as a user's build makes it (it compiles nothing); the wheel without the
    # kernel: what the packages hold is the point here (the sdist's sources are checked
    # below; compiling them is every other test's build, 5 CPU-s of this one's at -O0)
    for kind, env in (("--sdist", {}), ("--wheel", {"SEQDEDUP_NO_EXTENSION": "1"})):
        built = subprocess.run(
            [sys.executable, "-m", "build", "--no-isolation", kind, "--outdir", str(dist),
             str(source)],
            capture_output=True,
            text=True,
            env={**user_env(), **env},
            timeout=600,
        )  # fmt: skip
        assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (sdist,) = dist.glob("seqdedup-*.tar.gz")
    (wheel,) = dist.glob("seqdedup-*.whl")
    import tarfile

    with tarfile.open(sdist) as archive:
        names = archive.getnames()
    assert any(name.endswith("man/seqdedup.1") for name in names)
    # every C unit and header the kernel is built from (a missing one would leave a
    # wheel built from the sdist without its kernel: the extension is optional)
    csrc = ROOT / "src" / "seqdedup" / "csrc"
    shipped = {name.split("/src/seqdedup/csrc/")[-1] for name in names if "/csrc/" in name}
    assert {p.name for p in csrc.iterdir() if p.suffix in (".c", ".h")} <= shipped
    home = tmp_path / "venv"
    venv.create(home, with_pip=False)  # (this pip installs into it: --python)
    python = home / "bin" / "python"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", wheel],
        capture_output=True,
        text=True,
        env=user_env(),
        timeout=300,
    )
    assert installed.returncode == 0, installed.stderr[-2000:]
    assert (home / "share" / "man" / "man1" / "seqdedup.1").read_text() == PAGE.read_text()
    run = subprocess.run(
        [str(home / "bin" / "seqdedup"), "-q", "-w", "2"],
        input=b"a\nb\na\nb\nc\n",
        capture_output=True,
        env=user_env(),
        timeout=60,
    )
    assert (run.returncode, run.stdout) == (0, b"a\nb\nc\n"), run.stderr
    if shutil.which("man") is not None:  # man finds it through PATH, as for any venv
        env = {**user_env(), "PATH": f"{home / 'bin'}{os.pathsep}{user_env()['PATH']}"}
        env.pop("MANPATH", None)
        found = subprocess.run(["man", "-w", "seqdedup"], capture_output=True, text=True, env=env)
        assert found.stdout.strip() == str(home / "share" / "man" / "man1" / "seqdedup.1")


def test_the_man_page_is_where_man_finds_it_in_this_environment():
    """The development venv is an editable install: it has the page too (setuptools
    installs data files there only with setup.py's has_data)."""
    page = Path(sys.prefix) / "share" / "man" / "man1" / "seqdedup.1"
    assert page.is_file(), f"no {page}: reinstall with pip install -e ."
    assert page.read_text().startswith(".TH SEQDEDUP ")
