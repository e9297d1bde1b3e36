"""The import rules of docs/ARCHITECTURE.md, enforced: a newcomer breaking a boundary gets a failing test
that names the file and the import.

Imports are read from the source: top-level and function-local `import`/`from` statements, relative
imports resolved against the file's package, and `importlib.import_module("…")` / `__import__("…")`
with a literal name. Layers, bottom to top: dra → dradash → inventory → allocation → maintenance → migration;
simcluster imports only dra; product code never imports simcluster.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PRODUCT_PACKAGES = ("dradash", "inventory", "allocation", "maintenance", "migration")
ALL_PACKAGES = ("dra", *PRODUCT_PACKAGES, "simcluster")
#: package -> the packages of this repository it may import (besides itself)
ALLOWED = {
    "dra": set(),
    "dradash": {"dra"},
    "inventory": {"dra", "dradash"},
    "allocation": {"dra", "dradash", "inventory"},
    "maintenance": {"dra", "dradash", "inventory", "allocation"},
    "migration": {"dra", "dradash", "inventory", "allocation", "maintenance"},
    "simcluster": {"dra"},
}
# The Django project package wires the rooms together (urls, asgi routing, the demo command, Celery
# autodiscovery); those modules sit above every room and nothing imports them back.
WIRING = {
    "dradash.urls",
    "dradash.routing",
    "dradash.asgi",
    "dradash.celery",
    "dradash.management.commands.demo",
}


def python_files(*parts: str) -> list[Path]:
    base = ROOT.joinpath(*parts)
    if base.is_file():
        return [base]
    return sorted(p for p in base.rglob("*.py") if "migrations" not in p.parts)


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path) -> set[str]:
    """Every module the file imports anywhere in it, relative imports resolved."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    names: set[str] = set()
    # Imports only the type checker runs (`if TYPE_CHECKING:`) are not executed: no runtime cycle.
    type_only = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for stmt in node.body
        for n in ast.walk(stmt)
    }
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            names.add(module)
            # `from pkg import mod` may import a submodule
            names.update(f"{module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in ("import_module", "__import__") and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    names.add(arg.value)
    return {n for n in names if n}


def repo_modules() -> dict[str, Path]:
    return {module_name(p): p for pkg in ALL_PACKAGES for p in python_files(pkg)}


def resolve(name: str, known: dict[str, Path]) -> str | None:
    """The repository module an import name refers to (the longest known prefix), or None."""
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        candidate = ".".join(parts[:n])
        if candidate in known:
            return candidate
    return None


def offending(paths: list[Path], forbidden: tuple[str, ...]) -> list[str]:
    found = []
    for path in paths:
        for module in sorted(imported_modules(path)):
            if any(module == f or module.startswith(f + ".") for f in forbidden):
                found.append(f"{path.relative_to(ROOT)} imports {module}")
    return found


def test_it_keeps_every_room_in_its_layer() -> None:
    known = repo_modules()
    found = []
    for name, path in sorted(known.items()):
        if name in WIRING:
            continue
        room = name.split(".")[0]
        for imported in sorted(imported_modules(path)):
            target = resolve(imported, known)
            if target is None:
                continue
            other = target.split(".")[0]
            if other != room and other not in ALLOWED[room]:
                found.append(f"{path.relative_to(ROOT)} imports {target} ({room} may not import {other})")
    assert found == []


def test_it_keeps_simcluster_out_of_product_code() -> None:
    paths = [p for pkg in PRODUCT_PACKAGES for p in python_files(pkg)]
    assert offending(paths, ("simcluster",)) == []


def test_it_lets_only_inventory_kube_import_kubernetes() -> None:
    kube = ROOT / "inventory" / "kube"
    paths = [p for pkg in (*PRODUCT_PACKAGES, "dra") for p in python_files(pkg) if kube not in p.parents]
    assert offending(paths, ("kubernetes",)) == []


FRAMEWORKS = ("django", "rest_framework", "channels", "celery", "kubernetes")


@pytest.mark.parametrize("room", [("dra",), ("inventory", "mirror", "reflector.py")])
def test_it_keeps_frameworks_out_of_the_pure_rooms(room: tuple[str, ...]) -> None:
    paths = python_files(*room) if ROOT.joinpath(*room).exists() else []
    assert paths, f"{'/'.join(room)} is missing"
    assert offending(paths, FRAMEWORKS) == []


def test_it_keeps_simcluster_free_of_django() -> None:
    assert offending(python_files("simcluster"), FRAMEWORKS) == []


def test_it_has_no_import_cycles() -> None:
    """Function-local imports included: a cycle cannot hide behind one."""
    known = repo_modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in known.items():
        for imported in imported_modules(path):
            target = resolve(imported, known)
            # Importing a package runs its __init__ only; a module importing its own package is not a cycle.
            if target and target != name and not name.startswith(target + "."):
                graph[name].add(target)
    cycles = _cycles(graph)
    assert cycles == [], "import cycles:\n" + "\n".join(" → ".join(c) for c in cycles)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
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
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def test_it_detects_forbidden_imports_of_every_form(tmp_path: Path) -> None:
    pkg = ROOT / "inventory"
    bad = pkg / "_boundary_probe.py"
    bad.write_text(
        "import importlib\n"
        "from simcluster.store import Store\n"
        "def f():\n    import kubernetes.client\n    from ..allocation import services\n"
        "    importlib.import_module('maintenance.services')\n"
    )
    try:
        assert imported_modules(bad) >= {
            "simcluster.store",
            "kubernetes.client",
            "allocation.services",
            "maintenance.services",
        }
    finally:
        bad.unlink()


def test_it_detects_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
