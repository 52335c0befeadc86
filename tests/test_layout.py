"""The layering of docs/design.md (section 8) is the rule the code follows: a module
imports only modules of its own package (without a circle) and of the layers below its
package; every module sits in a declared layer and is named in the design."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "seqdedup"
DESIGN = ROOT / "docs" / "design.md"

# The rule, as data: the layers from the top down. A unit is a package of src/seqdedup
# or one of its top-level modules; a unit may import itself and any unit of a lower row.
LAYERS: list[set[str]] = [
    {"__main__"},
    {"cli"},
    {"__init__"},  # the package face
    {"dask", "diff", "loops"},
    {"page"},
    {"api", "logging"},
    {"run"},
    {"budget", "library"},
    {"engine"},
    {"keys"},
    {"config"},
    {"base"},
    {"_kernel"},
]
ROW = {unit: row for row, units in enumerate(LAYERS) for unit in units}


def design_section() -> str:
    text = DESIGN.read_text()
    return text[text.index("## 8. Module layout") : text.index("## 9.")]


def module_name(path: Path) -> str:
    """``api``, ``library.store``; a package's ``__init__`` is the package's name (the
    top package's is ``__init__``)."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def unit_of(module: str) -> str:
    """The layer unit a module belongs to: its package, or itself at the top level."""
    return module.split(".")[0]


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


def import_graph() -> dict[str, set[str]]:
    modules = package_modules()
    return {module_name(path): imports_of(path, modules) for path in PACKAGE.rglob("*.py")}


def against_the_layers(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Imports of a unit above or beside the importer's (its own package aside)."""
    return sorted(
        (module, imported)
        for module, imported_set in graph.items()
        for imported in imported_set
        if unit_of(imported) != unit_of(module) and ROW[unit_of(imported)] <= ROW[unit_of(module)]
    )


def circles_within_packages(graph: dict[str, set[str]]) -> list[list[str]]:
    """Import circles among the modules of one package (depth-first search)."""
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for imported in sorted(graph.get(module, ())):
            if unit_of(imported) != unit_of(module) or imported not in graph:
                continue
            if state.get(imported) == 1:
                found.append([*path[path.index(imported) :], imported])
            elif imported not in state:
                visit(imported, [*path, imported])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return found


def test_every_module_sits_in_a_layer():
    strays = sorted(m for m in package_modules() if unit_of(m) not in ROW)
    assert not strays, f"modules outside every layer of LAYERS: {strays}"


def test_no_import_goes_against_the_layers():
    upward = against_the_layers(import_graph())
    assert not upward, f"imports of a layer above (or beside) the importer: {upward}"


def test_no_package_has_an_import_circle():
    assert not circles_within_packages(import_graph())


def test_the_rule_catches_an_upward_import_and_a_circle():
    """The checks themselves: a lazy import of a layer above, a submodule of a package
    above, and a circle inside one package are all found."""
    modules = package_modules()
    source = "def later():\n    from seqdedup import api\n    from seqdedup.library import save\n"
    assert imports_in(source, modules) == {"api", "library.save"}
    graph = {"base.records": imports_in(source, modules)}
    assert against_the_layers(graph) == [("base.records", "api"), ("base.records", "library.save")]
    assert against_the_layers({"cli.options": {"base.errors", "cli.parsing"}}) == []
    assert against_the_layers({"dask.job": {"diff.profile"}}) == [("dask.job", "diff.profile")]
    circle = {"run.a": {"run.b"}, "run.b": {"run.c"}, "run.c": {"run.a", "base.errors"}}
    assert circles_within_packages(circle) == [["run.a", "run.b", "run.c", "run.a"]]


def test_the_tree_is_a_few_packages_and_the_faces():
    packages = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists())
    top = sorted(p.stem for p in PACKAGE.glob("*.py"))
    assert len(packages) <= 12, packages  # (loops/ made 12)
    assert top == ["__init__", "__main__", "api", "logging"], top


def test_every_module_is_named_in_the_design():
    section = design_section()
    named = set(re.findall(r"^- \*\*`([\w.]+)`\*\*", section, flags=re.MULTILINE))
    packages = {m for m in package_modules() if (PACKAGE / m.replace(".", "/")).is_dir()}
    missing = sorted(package_modules() - named - packages - {"__init__", "_kernel"} - {"__main__"})
    assert not missing, missing
    assert not sorted(named - package_modules()), sorted(named - package_modules())
    for unit in set().union(*LAYERS):
        assert f"`{unit}`" in section, unit


def test_the_kernels_c_units_are_named_in_the_design():
    section = design_section()
    units = sorted(path.name for path in (PACKAGE / "csrc").iterdir())
    missing = [name for name in units if f"`{name}`" not in section]
    assert not missing, missing


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
                table = module_name(path) == "cli.seqdedup" and node.name.endswith("_options")
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

MAX_CLI_LINES = 400  # the seqdedup command's module: parsing only, the work below
MAX_ANY = 60  # uses of typing.Any outside import lines
MAX_TYPE_IGNORES = 25
MAX_ENGINE_QUESTIONS = 5  # places outside the twin factories that ask which engine runs
# Where a twin that is not yet a name of the Engine object (base.engine) is chosen, once:
# (module, function); a question inside one of these is the factory's own. The kernel's
# array functions, records, tokens and scans are Engine names now: no factory asks.
TWIN_FACTORIES = {
    ("engine.matcher", "make_matcher"),
    ("engine.attribution", "make_attribution"),
    ("keys.maker", "key_hasher"),
    ("keys.maker", "text_digest"),
    ("config.jsonkeys", "json_parser"),
    ("run.stream_path", "stream_path"),
    ("engine.decisions", "Decisions.__init__"),
    ("run.plan", "plan_run"),
    ("run.plan", "RunPlan"),  # (the plan: its engine's kernel, for the kernel's stages)
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
        if name == "cli.seqdedup" and len(lines) > MAX_CLI_LINES:
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


# Who may take the whole Config: the commands and public faces that make one; the
# modules that assemble a run from it; and each answer that is not a run's but is made
# from a whole configuration the way a run is (a public call taking a Config, as
# Deduplicator does), which hands its parts their groups in turn.
CONFIG_MAKERS = {
    "__init__", "api", "config", "cli.arguments", "cli.seqdedup", "cli.diff", "cli.hints",
    "cli.mcp",
}  # fmt: skip
RUN_ASSEMBLY = {"run.plan", "run.stages", "run.assembled"}
OWN_ASSEMBLY = {
    "budget.reduce",  # reduce_to_budget(data, config)
    "dask.job",  # deduplicate_files(inputs, out, config)
    "diff.inputs",  # diff_records(good, bad, config), seqdedup diff's sides
    "page.html", "page.data", "page.reduction",  # ReportPage(path, config): a run's page
    "run.stats",  # the JSON statistics' "configuration" (the run's settings, reported)
    "run.suggest",  # suggest(records, config): trial runs of the configuration
}  # fmt: skip
CONFIG_READERS_LEFT: set[str] = set()  # (a ratchet: features not yet on their groups)


def config_readers() -> set[str]:
    """The modules that import ``Config`` (at the top, lazily or for typing)."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module in ("seqdedup.config.settings", "seqdedup.config")
                and any(alias.name == "Config" for alias in node.names)
            ):
                found.add(module_name(path))
    return found


def test_the_whole_configuration_is_read_where_a_run_is_made_or_assembled():
    """A feature reads its own option group (``config.fold_options``), handed to it by
    the assembling module; the whole ``Config`` is read by those that make it, those
    that assemble a run, and the features not yet moved (a list that only shrinks)."""
    readers = config_readers()
    assert "keys.maker" not in readers and "run.stages" in readers  # (the finder sees both)
    assert readers - CONFIG_MAKERS - RUN_ASSEMBLY - OWN_ASSEMBLY - CONFIG_READERS_LEFT == set()
    assert readers >= CONFIG_READERS_LEFT, CONFIG_READERS_LEFT - readers  # (shrink the list)
