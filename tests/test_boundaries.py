"""The import rules of ARCHITECTURE.md, enforced: a newcomer breaking a boundary gets a failing test
that names the file and the import."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PRODUCT_PACKAGES = ("dradash", "inventory", "maintenance", "allocation")


def python_files(*parts: str) -> list[Path]:
    base = ROOT.joinpath(*parts)
    if base.is_file():
        return [base]
    return sorted(p for p in base.rglob("*.py") if "migrations" not in p.parts)


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def offending(paths: list[Path], forbidden: tuple[str, ...]) -> list[str]:
    found = []
    for path in paths:
        for module in sorted(imported_modules(path)):
            if any(module == f or module.startswith(f + ".") for f in forbidden):
                found.append(f"{path.relative_to(ROOT)} imports {module}")
    return found


def test_it_keeps_simcluster_out_of_product_code() -> None:
    paths = [p for pkg in PRODUCT_PACKAGES for p in python_files(pkg)]
    assert offending(paths, ("simcluster",)) == []


def test_it_lets_only_inventory_kube_import_kubernetes() -> None:
    kube = ROOT / "inventory" / "kube"
    paths = [p for pkg in PRODUCT_PACKAGES for p in python_files(pkg) if kube not in p.parents]
    assert offending(paths, ("kubernetes",)) == []


@pytest.mark.parametrize("room", [("allocation", "allocator"), ("inventory", "reflector.py")])
def test_it_keeps_django_out_of_the_pure_rooms(room: tuple[str, str]) -> None:
    paths = python_files(*room) if ROOT.joinpath(*room).exists() else []
    assert offending(paths, ("django", "rest_framework", "channels", "celery", "kubernetes")) == []


def test_it_keeps_simcluster_free_of_django() -> None:
    assert offending(python_files("simcluster"), ("django", "rest_framework", "channels", "celery")) == []


def test_it_detects_a_forbidden_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from simcluster.store import Store\nimport kubernetes.client\n")
    assert imported_modules(bad) == {"simcluster.store", "kubernetes.client"}
