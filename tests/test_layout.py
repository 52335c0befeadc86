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


def module_name(path: Path) -> str:
    """``api``, ``library.store``; a package's ``__init__`` is the package's name (the
    top package's is ``__init__``)."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def package_modules() -> set[str]:
    return {module_name(path) for path in PACKAGE.rglob("*.py")} | {"_kernel"}


def imports_of(path: Path, modules: set[str]) -> set[str]:
    return imports_in(path.read_text(), modules) - {module_name(path)}


def imports_in(source: str, modules: set[str]) -> set[str]:
    """The package's modules that a module imports, anywhere in it: the deepest module
    named (``from seqdedup.library import save`` is ``library.save``); a name taken from
    the package face itself (``from seqdedup import __version__``) is ``__init__``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "seqdedup":
                found |= {a.name if a.name in modules else "__init__" for a in node.names}
            elif node.module.startswith("seqdedup."):
                base = node.module.removeprefix("seqdedup.")
                for alias in node.names:
                    inner = f"{base}.{alias.name}"
                    found.add(inner if inner in modules else base)
        elif isinstance(node, ast.Import):
            named = (a.name for a in node.names if a.name.startswith("seqdedup."))
            found |= {name.removeprefix("seqdedup.") for name in named}
    return found


def test_every_module_is_in_the_map_once():
    order = module_map()
    assert len(order) == len(set(order)), order
    assert set(order) == package_modules()


def test_no_module_imports_one_above_it():
    order = module_map()
    place = {name: index for index, name in enumerate(order)}
    modules = set(order)
    upward = [
        (module_name(path), imported)
        for path in sorted(PACKAGE.rglob("*.py"))
        for imported in sorted(imports_of(path, modules))
        if place[imported] <= place[module_name(path)]
    ]
    assert not upward, f"imports of a module above (or beside) the importer: {upward}"


def test_the_kernels_c_units_are_named_in_the_map():
    text = DESIGN.read_text()
    section = text[text.index("## 8. Module layout") : text.index("## 9.")]
    units = sorted(path.name for path in (PACKAGE / "csrc").iterdir())
    missing = [name for name in units if f"`{name}`" not in section]
    assert not missing, missing


def test_the_rule_catches_an_upward_import():
    """The check itself: imports of modules above the importer are found, lazy ones and
    submodules of a package too."""
    order = module_map()
    source = "def later():\n    from seqdedup import api\n    from seqdedup.library import save\n"
    assert imports_in(source, set(order)) == {"api", "library.save"}
    assert order.index("api") < order.index("records")
    assert order.index("library.save") < order.index("records")


# Sizes that keep each piece readable in one sitting: a class, a function, a C unit.
MAX_CLASS_LINES = 200
MAX_FUNCTION_LINES = 60  # the parser's option tables (cli._*_options) aside
MAX_C_UNIT_LINES = 600


def long_definitions() -> list[tuple[str, str, int]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            if isinstance(node, ast.ClassDef):
                too_long = lines > MAX_CLASS_LINES
            else:
                table = path.name == "cli.py" and node.name.endswith("_options")
                too_long = lines > MAX_FUNCTION_LINES and not table
            if too_long:
                found.append((module_name(path), node.name, lines))
    return found


def test_no_class_or_function_is_too_long():
    assert not long_definitions()


def test_no_c_unit_is_too_long():
    sizes = {p.name: len(p.read_text().splitlines()) for p in (PACKAGE / "csrc").glob("*.c")}
    assert sizes and max(sizes.values()) <= MAX_C_UNIT_LINES, sizes


# -- the ratchet: figures the house must not drift back past -----------------------

MAX_MODULE_LINES = 600
MAX_CLI_LINES = 400
MAX_ANY = 60  # uses of typing.Any outside import lines
MAX_TYPE_IGNORES = 25
MAX_ENGINE_QUESTIONS = 5  # places outside the twin factories that ask which engine runs
# Where each engine twin is chosen, once: (module, function); a question inside one of
# these is the factory's own.
TWIN_FACTORIES = {
    ("matcher", "make_matcher"),
    ("attribution", "make_attribution"),
    ("normalize", "timestamp_finder"),
    ("foldruns", "periodicity"),
    ("tokens", "record_tokens"),
    ("records", "bounds_finder"),
    ("keys", "key_hasher"),
    ("keys", "text_digest"),
    ("jsonkeys", "json_parser"),
    ("streamby.path", "stream_path"),
    ("decisions", "Decisions.__init__"),
    ("plan", "plan_run"),
    ("plan", "RunPlan"),  # (the plan: which engine runs, and the kernel it loaded)
}
ENGINE_NAMES = {"kernel", "engine"}


def _engine_name(node: ast.AST) -> bool:
    """A name or attribute that holds the kernel module (or None): ``kernel``,
    ``self._kernel``, ``keys.kernel``, ``engine``."""
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")
    return name.lstrip("_") in ENGINE_NAMES


def engine_questions(source: str) -> list[tuple[str, int]]:
    """Where code asks which engine runs: ``kernel is None`` / ``is not None``, the
    kernel's truth (``if kernel``, ``not kernel``), ``isinstance(x, Kernel...)``; each
    as (the enclosing function's dotted name, line)."""
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST, where: list[str]) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            where = [*where, node.name]
        asks = False
        if isinstance(node, ast.Compare) and any(
            isinstance(op, ast.Is | ast.IsNot) for op in node.ops
        ):
            asks = any(_engine_name(n) for n in [node.left, *node.comparators])
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            asks = _engine_name(node.operand)
        elif isinstance(node, ast.If | ast.IfExp | ast.While | ast.Assert):
            asks = _engine_name(node.test)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "isinstance":
            asks = len(node.args) == 2 and "Kernel" in ast.unparse(node.args[1])
        if asks:
            found.append((".".join(where), node.lineno))
        for child in ast.iter_child_nodes(node):
            visit(child, where)

    visit(ast.parse(source), [])
    return found


def test_the_engine_question_finder_sees_each_form():
    source = (
        "def f(kernel):\n    if kernel is None: pass\n    x = 1 if self._kernel else 2\n"
        "    assert not keys.kernel\n    isinstance(a, KernelAttributor)\n"
    )
    assert [line for _, line in engine_questions(source)] == [2, 3, 4, 5]


def ratchet_figures() -> dict[str, object]:
    long_modules, anys, ignores, questions = {}, 0, 0, []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text()
        name = module_name(path)
        lines = source.splitlines()
        limit = MAX_CLI_LINES if name == "cli" else MAX_MODULE_LINES
        if len(lines) > limit:
            long_modules[name] = len(lines)
        anys += sum(len(re.findall(r"\bAny\b", line)) for line in lines if "import" not in line)
        ignores += sum("type: ignore" in line for line in lines)
        questions += [
            (name, where, line)
            for where, line in engine_questions(source)
            if not any(
                (name, where) == f or (where.startswith(f[1] + ".") and name == f[0])
                for f in TWIN_FACTORIES
            )
        ]
    return {"long": long_modules, "any": anys, "ignores": ignores, "questions": questions}


def test_the_ratchet_holds():
    """Module sizes, ``Any``, ``type: ignore`` and engine questions stay within the
    figures the last clean-up reached (docs/development.md, "The ratchet")."""
    figures = ratchet_figures()
    assert not figures["long"], figures["long"]
    assert figures["any"] <= MAX_ANY, figures["any"]
    assert figures["ignores"] <= MAX_TYPE_IGNORES, figures["ignores"]
    questions = figures["questions"]
    assert isinstance(questions, list)
    assert len(questions) <= MAX_ENGINE_QUESTIONS, questions
