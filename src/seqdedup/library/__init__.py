"""Sequence libraries (docs/only-new.md): loaded before a run, saved after it.

``store`` (the SQLite schema, rows, the files of a library), ``load`` (reading
libraries into the engine's key space), ``save`` (what a run stages and how it lands),
``admin`` (info and prune). Import the submodule that holds what you need.
"""
