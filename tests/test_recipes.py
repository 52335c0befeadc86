"""The README's recipes on real logs: the figures docs/quickstart.md shows are what the
recipes do now (tests/recipes.py measures them)."""

from __future__ import annotations

import re
from pathlib import Path

from recipes import LOGS, figures

QUICKSTART = Path(__file__).resolve().parent.parent / "docs" / "quickstart.md"


def shown_figures() -> dict[tuple[str, str], str]:
    text = QUICKSTART.read_text()
    table = text[text.index("| recipe | command |") :].split("\n\n")[0]
    shown = {}
    for row in table.splitlines()[2:]:
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", row)[1:-1]]
        for name, figure in zip(LOGS, cells[2:], strict=True):
            shown[(cells[0], name)] = figure
    return shown


def test_the_recipes_do_what_the_quick_start_shows(tmp_path):
    """The figures of the table are the recipes' own; and on both real logs the CI and
    pods recipes remove most lines, what is known from yesterday goes, and halves of one
    log are not called new."""
    found = figures(tmp_path)
    assert shown_figures() == {key: f"{share * 100:.1f}%" for key, share in found.items()}
    for name in LOGS:
        assert found[("a CI log", name)] >= 0.9
        assert found[("pods, interleaved", name)] >= 0.9
        assert found[("only what is new", name)] >= 0.8
        assert found[("what changed (nothing planted)", name)] <= 0.05
