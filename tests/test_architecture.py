"""The house's rules, checked: the import contracts, no import circle, small rooms, an engine that
names no format. Imports inside functions and under TYPE_CHECKING count like any other."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
FORMAT_NAMES = ("collaborate", "roundtable")
"""Format names other than the default `scene`, which is also an ordinary word of the record."""
MAX_LINES = 400
MAX_CORE_TOP_LEVEL = 12


def product_modules() -> list[Path]:
    return sorted(p for top in ("core", "tui") for p in (ROOT / top).rglob("*.py"))


def test_every_import_contract_of_pyproject_is_kept():
    """`lint-imports` (import-linter) checks the contracts of `[tool.importlinter]`."""
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_the_contracts_name_every_room_of_the_core():
    """A new top-level room of `core` must be placed in the layers (else nothing checks its arrows)."""
    text = (ROOT / "pyproject.toml").read_text()
    rooms = {p.stem if p.is_file() else p.name for p in (ROOT / "core").iterdir()
             if (p.suffix == ".py" and p.stem != "__init__") or (p.is_dir() and (p / "__init__.py").exists())}
    assert rooms and all(f'"promptdesk.core.{room}' in text or f" promptdesk.core.{room}" in text for room in rooms), rooms


def strongly_connected(graph: grimp.ImportGraph, modules: set[str]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module (or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(start: str) -> None:
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start) & modules)))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child) & modules))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph.find_modules_directly_imported_by(node):
                    found.append(sorted(component))

    for module in sorted(modules):
        if module not in index:
            visit(module)
    return found


def test_no_module_takes_part_in_an_import_circle():
    """Module by module (not only package by package): no circle at all, lazy imports included."""
    graph = grimp.build_graph("promptdesk", exclude_type_checking_imports=False)
    circles = strongly_connected(graph, set(graph.modules))
    assert circles == []


def test_the_circle_finder_finds_a_circle():
    """The check above can fail: a graph with a circle is reported."""
    graph = grimp.ImportGraph()
    for name in ("p", "p.a", "p.b", "p.c"):
        graph.add_module(name)
    graph.add_import(importer="p.a", imported="p.b")
    graph.add_import(importer="p.b", imported="p.c")
    graph.add_import(importer="p.c", imported="p.a")
    assert strongly_connected(graph, {"p.a", "p.b", "p.c"}) == [["p.a", "p.b", "p.c"]]


def test_no_product_module_is_over_400_lines():
    long = {str(p.relative_to(ROOT)): n for p in product_modules() if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}


def test_the_top_of_core_holds_at_most_a_dozen_rooms():
    entries = [p.name for p in (ROOT / "core").iterdir() if p.name not in ("__init__.py", "__pycache__")]
    assert len(entries) <= MAX_CORE_TOP_LEVEL, sorted(entries)


def test_every_package_says_what_it_is_for_and_what_it_may_import():
    silent = []
    for init in sorted(p for top in ("core", "tui") for p in (ROOT / top).rglob("__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        if len(doc) < 40 or "import" not in doc:
            silent.append(str(init.relative_to(ROOT)))
    assert silent == []


def format_names_outside_formats() -> list[str]:
    """Every place outside the format packages that compares with, or indexes by, a format's name."""
    found = []
    for path in product_modules():
        rel = path.relative_to(ROOT)
        if rel.parts[:2] in (("core", "formats"), ("tui", "formats")):
            continue
        tree = ast.parse(path.read_text())
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr)
                      and isinstance(node.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and node.value in FORMAT_NAMES and id(node) not in docstrings):
                found.append(f"{rel}:{node.lineno}: {node.value!r}")
            sides = (node.left, *node.comparators) if isinstance(node, ast.Compare) else ()
            if (any(isinstance(side, ast.Attribute) and side.attr == "format" for side in sides)
                    and any(isinstance(side, (ast.Constant, ast.Tuple, ast.List, ast.Set)) for side in sides)):
                found.append(f"{rel}:{node.lineno}: compares a .format with a name")
    return found


def test_outside_the_format_packages_no_code_switches_on_a_format_name():
    assert format_names_outside_formats() == []


def test_only_a_format_its_console_side_and_the_registries_import_a_format_package():
    """What makes adding a format one package, its console side and one line in each registry:
    nothing else reaches into `promptdesk.core.formats.<name>`."""
    graph = grimp.build_graph("promptdesk", exclude_type_checking_imports=False)
    names = [m.rsplit(".", 1)[1] for m in graph.find_children("promptdesk.core.formats") if m != "promptdesk.core.formats.registry"]
    strays = []
    for name in names:
        package = f"promptdesk.core.formats.{name}"
        allowed = (package, f"promptdesk.tui.formats.{name}", "promptdesk.core.formats.registry")
        for module in graph.find_descendants(package) | {package}:
            for importer in graph.find_modules_that_directly_import(module):
                if not any(importer == a or importer.startswith(a + ".") for a in allowed):
                    strays.append(f"{importer} -> {module}")
    assert names and strays == []
