"""The README's and the documentation's examples are run and must print exactly what
they show; the documentation site builds with warnings as errors."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import needs, user_env

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TEXTS = {path.relative_to(ROOT).as_posix(): path.read_text() for path in DOCUMENTS}
BLOCKS = [
    (name, command, expected)
    for name, text in TEXTS.items()
    for command, expected in re.findall(r"```console\n\$ (.+?)\n(.*?)```", text, flags=re.DOTALL)
]
PYTHON = [
    (name, code)
    for name, text in TEXTS.items()
    for code in re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
]


def test_readme_has_console_examples():
    assert len([block for block in BLOCKS if block[0] == "README.md"]) >= 3
    assert len(BLOCKS) >= 20


@pytest.mark.parametrize(
    ("document", "command", "expected"), BLOCKS, ids=[f"{d}: {c}" for d, c, _ in BLOCKS]
)
def test_console_example(document, command, expected):
    env = user_env()
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    p = subprocess.run(
        ["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout + p.stderr == expected


def test_readme_has_python_examples():
    assert len(PYTHON) >= 1


@pytest.mark.parametrize(("document", "code"), PYTHON, ids=[d for d, _ in PYTHON])
def test_python_example(document, code, monkeypatch):
    monkeypatch.chdir(ROOT)
    exec(compile(code, document, "exec"), {})


def test_links_between_the_documents_resolve():
    documents = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for document in documents:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", document.read_text()):
            assert (document.parent / target).exists(), f"{document.name}: {target}"
    assert (ROOT / "docs" / "design.md").exists()


def test_the_readme_is_a_landing_page():
    readme = TEXTS["README.md"]
    assert len(readme.splitlines()) <= 400
    headings = [line for line in readme.splitlines() if line.startswith("## ")]
    assert headings[:3] == ["## What it does", "## Install", "## Quick start on real logs"]
    assert "Python 3.11 or later" in readme


def _mkdocs() -> bool:
    try:
        import mkdocs  # noqa: F401
    except ImportError:
        return False
    return True


@needs(_mkdocs(), "mkdocs (the dev extra installs it)")
def test_the_documentation_site_builds_with_warnings_as_errors(tmp_path):
    env = {**user_env(), "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    pages = {path.relative_to(tmp_path).as_posix() for path in tmp_path.rglob("index.html")}
    for page in ("index.html", "quickstart/index.html", "kubernetes/index.html"):
        assert page in pages
    nav = (ROOT / "mkdocs.yml").read_text()
    for path in sorted((ROOT / "docs").glob("*.md")):
        assert path.name in nav, f"{path.name} is not in mkdocs.yml's nav"
