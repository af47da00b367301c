"""Every module of chalicelib is imported by at least one test file (issue 37): a module no test names is one whose
behaviour nothing checks where it is written, however often the service runs it. Read from the test files' import
statements (``import chalicelib.x.y``, ``from chalicelib.x import y``, ``from chalicelib.x.y import name``), not by
running them; a package's ``__init__`` that holds only its docstring, and a ``__main__``, have nothing to test."""

from __future__ import annotations

import ast
import importlib.util
import pkgutil
from collections.abc import Iterator
from pathlib import Path

import chalicelib

TESTS = Path(__file__).resolve().parents[1]


def _modules() -> Iterator[str]:
    """chalicelib and each module under it, by dotted name."""
    yield "chalicelib"
    for info in pkgutil.walk_packages(chalicelib.__path__, "chalicelib."):
        yield info.name


def _holds_only_a_docstring(module: str) -> bool:
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None
    body = ast.parse(Path(spec.origin).read_text()).body
    return all(isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) for node in body)


def imported_names(source: str) -> set[str]:
    """What a file's imports name: each module imported, and for ``from x import y`` both ``x`` and ``x.y`` (y may
    be a module, or a name in x)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_every_module_is_imported_by_a_test() -> None:
    modules = [name for name in _modules() if not name.endswith(".__main__") and not _holds_only_a_docstring(name)]
    tested = set().union(*(imported_names(path.read_text()) for path in TESTS.rglob("test_*.py")))

    untested = sorted(set(modules) - tested)

    assert not untested, f"{len(untested)} modules no test imports: " + ", ".join(untested)
    assert "chalicelib.domain.execution.routing" in modules  # the walk reaches the sub-packages' modules


def test_a_module_counts_as_imported_by_itself_or_from_its_package() -> None:
    source = "import chalicelib.aws\nfrom chalicelib.store import jobs\nfrom chalicelib.core.status import Status\n"

    assert imported_names(source) >= {"chalicelib.aws", "chalicelib.store.jobs", "chalicelib.core.status"}
    assert "chalicelib.store" in imported_names(source)  # names a package too, which counts for its __init__ only
    assert imported_names("from . import sibling\n") == set()  # a relative import names no chalicelib module
