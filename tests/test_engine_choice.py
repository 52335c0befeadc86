"""One engine object chosen once (``seqdedup.engine.choice``): both engines expose the
same names (that the Python engine never loads compiled code: tests/test_kernel.py,
``test_the_python_engine_never_imports_the_kernel``)."""

from __future__ import annotations

import inspect

import pytest

from seqdedup.base.engine import Engine
from seqdedup.engine.choice import chosen_engine
from seqdedup.engine.pyengine import PYTHON, PythonEngine

from conftest import every_engine, kernel_built


def test_both_engines_have_every_name_of_the_protocol():
    """The Engine protocol's names are each engine's (mypy checks their types; this, that
    an engine made at run time has them all)."""
    wanted = {
        name
        for name, member in inspect.getmembers(Engine)
        if not name.startswith("_") and (callable(member) or isinstance(member, property))
    }
    assert {"record_bounds", "gather", "literal_hits", "chains", "kernel"} <= wanted
    for engine in every_engine():
        missing = [name for name in wanted if not hasattr(engine, name)]
        assert not missing, (engine.name, missing)
    assert PYTHON.kernel is None and PYTHON.literal_mask is None
    assert isinstance(PYTHON, PythonEngine)


@pytest.mark.skipif(not kernel_built(), reason="the compiled kernel is not installed")
def test_the_engine_is_the_one_the_environment_names(monkeypatch):
    monkeypatch.setenv("SEQDEDUP_ENGINE", "python")
    assert chosen_engine() is PYTHON
    monkeypatch.setenv("SEQDEDUP_ENGINE", "c")
    compiled_engine = chosen_engine()
    assert compiled_engine.name == "c" and compiled_engine.kernel is compiled_engine
    monkeypatch.delenv("SEQDEDUP_ENGINE")
    assert chosen_engine() is compiled_engine  # (made once)


def test_the_timestamp_bit_is_the_normalising_classes_one():
    from seqdedup.base import cengine
    from seqdedup.config.normalize import TIMESTAMP

    assert cengine.TIMESTAMP == TIMESTAMP
