"""The console scripts' first step: Ctrl-C, SIGTERM and SIGHUP are held back before
anything that takes time (the imports of the command included), and let through once
the signal table is in place (:func:`seqdedup.base.stopping.stop_on_termination_signals`
releases them, :mod:`seqdedup.base.signalmask`),
so a signal in the first milliseconds follows the table instead of the default action,
which kills the process (and, with ``--output``, would lose the SIGHUP's reopen). What
comes before this module runs is the interpreter's own start-up. Once the command has
returned, they are held back again: the interpreter's shutdown puts the default actions
back, and a signal arriving then would kill a run that has written everything and
decided its exit status.
"""

from __future__ import annotations

import sys

from seqdedup.base.signalmask import hold, release


def seqdedup() -> None:
    hold()
    if sys.argv[1:2] == ["loops"]:  # (without the run's modules: a hook starts per call)
        from seqdedup.cli.loops import entry_point
    else:
        from seqdedup.cli.seqdedup import entry_point

    try:
        entry_point()
    finally:
        hold()  # (see the module docstring: the run's status stands)


def seqdedup_dask() -> None:
    hold()
    from seqdedup.cli.dask import entry_point

    try:
        entry_point()
    finally:
        hold()  # (see the module docstring: the run's status stands)


def seqdedup_library() -> None:
    hold()
    from seqdedup.cli.library import entry_point

    try:
        entry_point()
    finally:
        hold()  # (see the module docstring: the run's status stands)


def seqdedup_expand() -> None:
    hold()
    from seqdedup.cli.expand import entry_point

    release()  # (it keeps Python's own Ctrl-C: its table is the default one)
    entry_point()


def seqdedup_mcp() -> None:
    hold()
    from seqdedup.cli.mcp import entry_point

    release()  # (the server's own loop handles its signals)
    entry_point()
