"""The house by stages: the package layout keeps its promises (docs/guarantees.md, README "How it is built").

Read from the source's import statements (``ast``), not by importing it:

- no cycle between the packages under ``storbench`` (any import, also one inside a function;
  ``if TYPE_CHECKING:`` blocks are type hints, not imports);
- one way through the house, every import counted: no cycle between modules nor between packages
  when every import statement is followed (module-level, inside functions, inside
  ``if TYPE_CHECKING:`` blocks) and a face's ``importlib.import_module(f"{__name__}.{...}")`` is
  taken as importing every member of its package; so no package imports one that imports it back
  (nothing runs back up), and no member of a package imports the face that loads it;
- the longest chain of module-level imports inside storbench is at most 12 modules;
- at most 12 modules sit flat at the top of ``src/storbench``;
- every package opens with a docstring that says what it may import, and its "never ..." list
  holds: no module of the package imports a package it names there.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "storbench"
MAX_CHAIN = 12
MAX_FLAT = 12


@dataclass(frozen=True)
class Module:
    name: str  # storbench.run.runner
    path: Path
    is_package: bool


def _modules() -> dict[str, Module]:
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        out[".".join(parts)] = Module(".".join(parts), path, is_package)
    return out


MODULES = _modules()


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and (
        (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
        or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING")
    )


def _named(node: ast.AST, package: str) -> list[str]:
    """The modules an import statement names (``from . import records`` imports the module
    records; ``from .records import X`` records), as written: storbench's and others'."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
        module = ".".join(base) + (f".{node.module}" if node.module else "")
    else:
        module = node.module or ""
    return [f"{module}.{a.name}" if f"{module}.{a.name}" in MODULES else module for a in node.names]


def _imports(mod: Module) -> tuple[set[str], set[str]]:
    """(module-level imports, every import) of ``mod``: storbench modules it names."""
    package = mod.name if mod.is_package else mod.name.rpartition(".")[0]
    top: set[str] = set()
    every: set[str] = set()

    def visit(node: ast.AST, at_top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if _is_type_checking(child):
                continue
            inner_top = at_top and not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            for name in _named(child, package):
                target = _resolve(name) if name.startswith("storbench") else None
                if target and target != mod.name:
                    every.add(target)
                    if inner_top:
                        top.add(target)
            visit(child, inner_top)

    visit(ast.parse(mod.path.read_text(encoding="utf-8")), True)
    return top, every


@functools.cache
def imports() -> dict[str, tuple[set[str], set[str]]]:
    """Each module's imports (:func:`_imports`), read when a test first asks (not at collection:
    every pytest process collects this module)."""
    return {name: _imports(mod) for name, mod in MODULES.items()}


def _every_import(mod: Module) -> set[str]:
    """Every storbench module ``mod`` names in an import statement, wherever it stands (function
    bodies and ``if TYPE_CHECKING:`` blocks included), and every member of its own package when it
    loads them by name (``importlib.import_module(f"{__name__}.{...}")``: a registry or a lazy face)."""
    package = mod.name if mod.is_package else mod.name.rpartition(".")[0]
    out: set[str] = set()
    tree = ast.parse(mod.path.read_text(encoding="utf-8"))
    bound = {mod.name: mod.name}  # a module's local names for the storbench modules it imported
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = ".".join(package.split(".")[: len(package.split(".")) - (node.level - 1)])
            for a in node.names:
                bound[a.asname or a.name] = f"{base}.{node.module}.{a.name}" if node.module else f"{base}.{a.name}"
    for node in ast.walk(tree):
        names = _named(node, package)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "import_module"
              and node.args and isinstance(node.args[0], ast.JoinedStr)):  # fmt: skip
            head = node.args[0].values[0] if node.args[0].values else None
            value = head.value if isinstance(head, ast.FormattedValue) else None
            if isinstance(value, ast.Name) and value.id == "__name__":
                loaded = mod.name
            elif isinstance(value, ast.Attribute) and value.attr == "__name__" and isinstance(value.value, ast.Name):
                loaded = bound.get(value.value.id, package)  # ``{_commands.__name__}``: that module
            else:
                loaded = package
            names = [m for m in MODULES if m.rpartition(".")[0] == loaded]
        for name in names:
            target = _resolve(name) if name.startswith("storbench") else None
            if target and target != mod.name:
                out.add(target)
    return out


@functools.cache
def every() -> dict[str, set[str]]:
    """Each module's every import (:func:`_every_import`), read when a test first asks."""
    return {name: _every_import(mod) for name, mod in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _describe(component: list[str], graph: dict[str, set[str]]) -> str:
    inside = set(component)
    edges = [f"{a} -> {b}" for a in component for b in sorted(graph.get(a, ()) & inside)]
    return f"{len(component)} modules: " + "; ".join(edges)


def test_one_way_through_the_house_every_import_counted():
    graph = every()
    cycles = _cycles(graph)
    assert cycles == [], "\n".join(_describe(c, graph) for c in cycles)
    packages: dict[str, set[str]] = {}
    for name, targets in graph.items():
        for target in targets:
            a, b = _package(name), _package(target)
            if a != b and b != "storbench":
                packages.setdefault(a, set()).add(b)
    back_up = _cycles(packages)
    assert back_up == [], "\n".join(_describe(c, packages) for c in back_up)
    # the walk is real: type-only and function-level imports are in it, and a registry's members
    assert "storbench.activity" in graph["storbench.record"]  # a TYPE_CHECKING import
    assert "storbench.run.loads" in graph["storbench.run.measure"]  # a function-level import
    assert "storbench.checks.cache" in graph["storbench.checks"]  # importlib.import_module(f"{__name__}.{name}")


def test_a_cycle_is_found_when_there_is_one():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def _package(name: str) -> str:
    """The top-level package (or flat module) a module belongs to: ``storbench.run``."""
    return ".".join(name.split(".")[:2])


def _package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name, (_, every) in imports().items():
        for target in every:
            a, b = _package(name), _package(target)
            if a != b and b != "storbench":  # the root package holds only __version__
                graph.setdefault(a, set()).add(b)
    return graph


def test_no_cycle_between_packages():
    graph = _package_graph()
    cycles = []
    state: dict[str, int] = {}

    def walk(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join([*path[path.index(nxt) :], nxt]))
            elif nxt not in state:
                walk(nxt, [*path, nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            walk(node, [node])
    assert cycles == []
    # the graph is real: the run stage imports the job builder and the parsers, commands everything
    assert {"storbench.jobs", "storbench.fio", "storbench.process"} <= graph["storbench.run"]
    assert "storbench.run" not in graph.get("storbench.jobs", set())


def test_the_longest_import_chain_is_at_most_12_modules():
    on_path: list[str] = []

    @functools.cache
    def longest(name: str) -> tuple[str, ...]:
        assert name not in on_path, "module-level import cycle: " + " -> ".join([*on_path, name])
        on_path.append(name)
        best: tuple[str, ...] = (name,)
        for target in sorted(imports()[name][0]):
            chain = (name, *longest(target))
            if len(chain) > len(best):
                best = chain
        on_path.pop()
        return best

    chain = max((longest(name) for name in MODULES), key=len)
    assert len(chain) <= MAX_CHAIN, " -> ".join(chain)
    assert len(chain) >= 5  # storbench does import itself: a walk that found nothing would pass


def test_at_most_12_modules_sit_flat_at_the_top():
    flat = sorted(p.name for p in SRC.glob("*.py") if p.name not in ("__init__.py", "__main__.py"))
    assert len(flat) <= MAX_FLAT, flat
    assert "cli.py" in flat  # the glob reads the right folder


PACKAGES = sorted(name for name, mod in MODULES.items() if mod.is_package and name != "storbench")


@pytest.mark.parametrize("package", PACKAGES)
def test_every_package_says_what_it_owns_and_may_import(package):
    doc = ast.get_docstring(ast.parse(MODULES[package].path.read_text(encoding="utf-8"))) or ""
    assert len(doc.split()) >= 15, f"{package} has no docstring saying what it owns"
    assert re.search(r"\bMay import\b", doc), f"{package}'s docstring does not say what it may import"
    never = re.search(r"\bnever ([^.;]*)", doc[doc.index("May import") :])
    if never is None:
        return
    forbidden = {f"storbench.{w}" for w in re.findall(r"[a-z_]+", never.group(1))} & set(MODULES)
    offenders = sorted(
        f"{name} imports {target}"
        for name, (_, every) in imports().items()
        if name == package or name.startswith(package + ".")
        for target in every
        if any(target == f or target.startswith(f + ".") for f in forbidden)
    )
    assert offenders == [], f"{package} says it never imports {sorted(forbidden)}"


def test_private_names_stay_private():
    """No module of storbench imports another's private (``_name``) name: what is shared is public."""
    offenders = []
    for name, mod in MODULES.items():
        for node in ast.walk(ast.parse(mod.path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("storbench")):
                offenders += [f"{name}:{node.lineno} imports {a.name}" for a in node.names
                              if a.name.startswith("_") and not a.name.startswith("__")]  # fmt: skip
    assert offenders == []


#: the most lines a module may have (issue 50), and the modules allowed more, each with why
MAX_LINES = 800
LONG_MODULES = {
    # fio's classic text output of every version from 2.0.2 to 3.41 read by one state machine: the
    # line classifiers, the per-job and per-direction blocks and the percentile and latency units
    # they share; split, the classifiers would sit apart from the only state that reads them
    "storbench.fio.text": 860,
}


def test_no_module_is_longer_than_800_lines_but_those_named_with_why():
    lengths = {name: len(mod.path.read_text(encoding="utf-8").splitlines()) for name, mod in MODULES.items()}
    over = {name: n for name, n in lengths.items() if n > LONG_MODULES.get(name, MAX_LINES)}
    assert over == {}, f"modules over {MAX_LINES} lines (split them into rooms named after their jobs): {over}"
    assert all(lengths[name] > MAX_LINES for name in LONG_MODULES), "an allowed long module is short now: take it off LONG_MODULES"
