"""The README's console examples are run and must print exactly what it shows."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import user_env

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
BLOCKS = re.findall(r"```console\n\$ (.+?)\n(.*?)```", README, flags=re.DOTALL)
PYTHON = re.findall(r"```python\n(.*?)```", README, flags=re.DOTALL)


def test_readme_has_console_examples():
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize(("command", "expected"), BLOCKS, ids=[c for c, _ in BLOCKS])
def test_console_example(command, expected):
    env = user_env()
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    p = subprocess.run(
        ["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout + p.stderr == expected


def test_readme_has_python_examples():
    assert len(PYTHON) >= 1


@pytest.mark.parametrize("code", PYTHON)
def test_python_example(code, monkeypatch):
    monkeypatch.chdir(ROOT)
    exec(compile(code, "README.md", "exec"), {})


def test_links_between_the_documents_resolve():
    documents = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for document in documents:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", document.read_text()):
            assert (document.parent / target).exists(), f"{document.name}: {target}"
    assert (ROOT / "docs" / "design.md").exists()
