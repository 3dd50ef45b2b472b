"""The shape of `hoprag.stores.cassandra` (issue #51 part 4), checked on every run: the
store's helpers take the narrow parts they need (`parts.TableParts`), so no module of the
package but `store.py` and `__init__.py` imports `CassandraStore` or the store module, not even
under TYPE_CHECKING, and the `CassandraStore` class stays under 300 lines."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "hoprag" / "stores" / "cassandra"
STORE_MODULE = "hoprag.stores.cassandra.store"
MAX_CLASS_LINES = 300
"""The `CassandraStore` class body spans fewer lines than this."""


def _store_imports(path: Path) -> list[str]:
    """Where `path` imports `CassandraStore` or the store module, at any depth (function-local
    and TYPE_CHECKING imports too), as `line: what`."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [
                f"{node.lineno}: import {a.name}" for a in node.names if a.name == STORE_MODULE
            ]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            relative = node.level > 0
            names = [a.name for a in node.names]
            if module == STORE_MODULE or (relative and module == "store"):
                found.append(f"{node.lineno}: from {module} import {', '.join(names)}")
            elif "CassandraStore" in names or (relative and not module and "store" in names):
                found.append(f"{node.lineno}: from {'.' * node.level}{module} import {names}")
            elif module == "hoprag.stores.cassandra" and "store" in names:
                found.append(f"{node.lineno}: from {module} import store")
    return found


def test_no_helper_module_imports_the_store() -> None:
    helpers = [
        p for p in sorted(PACKAGE.rglob("*.py")) if p.name not in ("store.py", "__init__.py")
    ]
    assert len(helpers) > 20  # the package is where this test looks for it
    offenders = {
        str(p.relative_to(PACKAGE)): found for p in helpers if (found := _store_imports(p))
    }
    assert offenders == {}


def test_the_check_sees_every_form_of_importing_the_store(tmp_path: Path) -> None:
    forms = [
        "from hoprag.stores.cassandra.store import CassandraStore",
        "import hoprag.stores.cassandra.store",
        "from hoprag.stores.cassandra import CassandraStore",
        "from hoprag.stores.cassandra import store",
        "from .store import CassandraStore",
        "from . import store",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from hoprag.stores.cassandra.store import CassandraStore",
        "def f():\n    from hoprag.stores.cassandra.store import CassandraStore",
    ]
    for i, text in enumerate(forms):
        path = tmp_path / f"m{i}.py"
        path.write_text(text + "\n")
        assert _store_imports(path), text
    clean = tmp_path / "clean.py"
    clean.write_text("from hoprag.stores.cassandra.parts import TableParts\n")
    assert _store_imports(clean) == []


def test_the_store_class_spans_fewer_than_300_lines() -> None:
    tree = ast.parse((PACKAGE / "store.py").read_text())
    (store,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "CassandraStore"]
    assert store.end_lineno is not None
    assert store.end_lineno - store.lineno + 1 < MAX_CLASS_LINES
