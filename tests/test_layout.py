"""The module map of docs/design.md (section 8) is the rule the code follows: a module
imports only modules below it in the map, and every module is in the map."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "seqdedup"
DESIGN = ROOT / "docs" / "design.md"


def module_map() -> list[str]:
    """The modules of the map, from the top down."""
    text = DESIGN.read_text()
    section = text[text.index("## 8. Module layout") : text.index("## 9.")]
    return re.findall(r"^\d+\. \*\*`([\w.]+)`\*\*", section, flags=re.MULTILINE)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The package's modules that a module imports, anywhere in it; a name taken from
    the package face itself (``from seqdedup import __version__``) is ``__init__``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "seqdedup":
                found |= {a.name if a.name in modules else "__init__" for a in node.names}
            elif node.module.startswith("seqdedup."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("seqdedup.")}
    found.discard(path.stem)
    return found


def test_every_module_is_in_the_map_once():
    order = module_map()
    assert len(order) == len(set(order)), order
    modules = {path.stem for path in PACKAGE.glob("*.py")} | {"_kernel"}
    assert set(order) == modules


def test_no_module_imports_one_above_it():
    order = module_map()
    place = {name: index for index, name in enumerate(order)}
    modules = set(order)
    upward = [
        (path.stem, imported)
        for path in sorted(PACKAGE.glob("*.py"))
        for imported in sorted(imports_of(path, modules))
        if place[imported] <= place[path.stem]
    ]
    assert not upward, f"imports of a module above (or beside) the importer: {upward}"


def test_the_kernels_c_units_are_named_in_the_map():
    text = DESIGN.read_text()
    section = text[text.index("## 8. Module layout") : text.index("## 9.")]
    units = sorted(path.name for path in (PACKAGE / "csrc").iterdir())
    missing = [name for name in units if f"`{name}`" not in section]
    assert not missing, missing


def test_the_rule_catches_an_upward_import(tmp_path):
    """The check itself: an import of a module above the importer is found."""
    module = tmp_path / "records.py"
    module.write_text("def later():\n    from seqdedup import api\n")
    order = module_map()
    found = imports_of(module, set(order))
    assert found == {"api"} and order.index("api") < order.index("records")
