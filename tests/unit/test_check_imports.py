"""scripts/check_imports.py: a third-party module that src/hoprag imports and the distribution
does not declare is reported (issue #49's sniffio), on a deliberately undeclared import in a
source tree of our own; the real tree against pyproject.toml has none."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from importlib.metadata import packages_distributions
from pathlib import Path
from types import ModuleType

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


@pytest.fixture(scope="module")
def check() -> Iterator[ModuleType]:
    sys.path.insert(0, str(SCRIPTS))
    try:
        import check_imports

        yield check_imports
    finally:
        sys.path.remove(str(SCRIPTS))


def _tree(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_real_tree_imports_only_what_pyproject_declares(check: ModuleType) -> None:
    requires = check.requirements_of_pyproject(check.ROOT / "pyproject.toml")
    assert check.undeclared(check.SRC, requires, packages_distributions()) == []


def test_an_undeclared_import_is_reported_naming_file_module_and_distribution(
    check: ModuleType, tmp_path: Path
) -> None:
    src = _tree(tmp_path, {"sync.py": "import anyio\nimport sniffio\n"})
    problems = check.undeclared(src, ["anyio>=4.4"], {"anyio": ["anyio"], "sniffio": ["sniffio"]})
    assert problems == [
        "sync.py imports sniffio (sniffio), which is not declared by the base requirements"
    ]


def test_a_function_local_import_is_checked_too(check: ModuleType, tmp_path: Path) -> None:
    src = _tree(tmp_path, {"lazy.py": "def f():\n    from sniffio import current_async_library\n"})
    assert len(check.undeclared(src, [], {})) == 1


def test_an_import_under_type_checking_is_not_a_runtime_import(
    check: ModuleType, tmp_path: Path
) -> None:
    text = "import typing\nif typing.TYPE_CHECKING:\n    import mcp\nelse:\n    import uvicorn\n"
    src = _tree(tmp_path, {"m.py": text})
    assert check.undeclared(src, [], {}) == [
        "m.py imports uvicorn (uvicorn), which is not declared by the base requirements"
    ]


def test_an_extras_module_is_declared_only_in_the_files_of_that_extra(
    check: ModuleType, tmp_path: Path
) -> None:
    src = _tree(
        tmp_path,
        {
            "integrations/langchain.py": "import langchain_core\n",
            "search.py": "import langchain_core\n",
        },
    )
    requires = ['langchain-core>=0.3; extra == "langchain"']
    problems = check.undeclared(src, requires, {"langchain_core": ["langchain-core"]})
    assert problems == [
        "search.py imports langchain_core (langchain-core), which is not declared by the base "
        "requirements"
    ]


def test_a_module_is_mapped_to_its_distribution_by_the_installed_metadata(
    check: ModuleType, tmp_path: Path
) -> None:
    """`cassandra` comes from cassandra-driver, `ahocorasick` from pyahocorasick: declared
    under those names, the imports pass; a module no installed distribution provides is looked
    up under its own name."""
    src = _tree(tmp_path, {"m.py": "import cassandra\nimport ahocorasick\nimport gt_pkg\n"})
    requires = ["cassandra-driver>=3.29", "pyahocorasick>=2.1", "gt-pkg>=1"]
    assert check.undeclared(src, requires, packages_distributions()) == []


def test_the_stdlib_and_hoprag_itself_are_not_third_party(check: ModuleType) -> None:
    assert check.third_party({"json", "hoprag", "__future__", "numpy"}) == {"numpy"}


def test_requires_dist_markers_give_each_extras_distributions(check: ModuleType) -> None:
    requires = ["Sniffio>=1.3", 'pytest_asyncio>=0.24; extra == "testing"']
    assert check.declared(requires) == {"": {"sniffio"}, "testing": {"pytest-asyncio"}}
