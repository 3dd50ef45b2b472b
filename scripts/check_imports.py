"""Which third-party modules `src/hoprag` imports that the hoprag distribution does not
declare (issue #49: a wheel installed without extras failed at `import hoprag` because
`hoprag.sync` imports sniffio, which nothing declared).

    .venv/bin/python scripts/check_imports.py [WHEEL]

Every runtime import in src/hoprag, at any depth (function-local, lazy and guarded imports
too; not those under `if TYPE_CHECKING:`), is reduced to its top-level module; the standard
library's, hoprag's own and relative imports are dropped. Each remaining module is mapped to
the distributions that provide it (`importlib.metadata.packages_distributions()` of the
running environment; a module no installed distribution provides is taken to come from the
distribution of its own name). It is declared when one of those distributions is a base
requirement, or a requirement of an extra the importing file belongs to (`EXTRAS`).
The requirements are the WHEEL's `Requires-Dist` when one is given, else pyproject.toml's.
Prints one line per undeclared import and exits 1 if there is any.

Modules are compared by their top level only: for a namespace package any of its distributions
counts (an import of `opentelemetry.sdk` passes because `opentelemetry-api` is declared)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
import zipfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from email.parser import HeaderParser
from importlib.metadata import packages_distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "hoprag"
BASE = ""
"""The key of the base requirements in `declared()`'s answer."""

EXTRAS: dict[str, tuple[str, ...]] = {
    "integrations/langchain.py": ("langchain",),
    "tools/langchain.py": ("langchain",),
    "tools/tool.py": ("langchain",),  # SearchTool.as_langchain()
    "integrations/llamaindex.py": ("llamaindex",),
    "tools/mcp.py": ("mcp",),
    "telemetry.py": ("otel",),
    "embeddings/minilm.py": ("minilm",),
    "testing/": ("testing",),
}
"""The extras whose requirements a file (path under src/hoprag; a folder ends with `/`) may
import besides the base ones. Every other file imports base requirements only."""

_EXTRA_MARKER = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def _is_type_checking(test: ast.expr) -> bool:
    """Whether an `if` condition is `TYPE_CHECKING` (or `typing.TYPE_CHECKING`)."""
    name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", None)
    return name == "TYPE_CHECKING"


def _runtime_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """`node` and every node below it, except the bodies of `if TYPE_CHECKING:` blocks
    (their `else:` is kept)."""
    yield node
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for other in child.orelse:
                yield from _runtime_nodes(other)
        else:
            yield from _runtime_nodes(child)


def imported_top_levels(source: str, filename: str = "<source>") -> set[str]:
    """The top-level names of the modules `source` imports absolutely at runtime."""
    names: set[str] = set()
    for node in _runtime_nodes(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def third_party(names: Iterable[str]) -> set[str]:
    """`names` without the standard library's modules and hoprag itself."""
    own = {"hoprag", "__future__"}
    return {n for n in names if n not in sys.stdlib_module_names and n not in own}


def declared(requires: Iterable[str]) -> dict[str, set[str]]:
    """The canonical distribution names of `requires` (PEP 508 strings as in `Requires-Dist`,
    an extra's marked `extra == "name"`), by extra; the base ones under `BASE`."""
    by_extra: dict[str, set[str]] = {}
    for text in requires:
        requirement = Requirement(text)
        match = _EXTRA_MARKER.search(str(requirement.marker or ""))
        extra = match.group(1) if match else BASE
        by_extra.setdefault(extra, set()).add(canonicalize_name(requirement.name))
    return by_extra


def extras_of(relative: str) -> tuple[str, ...]:
    """The extras the file at `relative` (a path under src/hoprag) may import from."""
    for key, extras in EXTRAS.items():
        if relative == key or (key.endswith("/") and relative.startswith(key)):
            return extras
    return ()


def undeclared(
    src: Path, requires: Iterable[str], providers: Mapping[str, Sequence[str]]
) -> list[str]:
    """One line per third-party module a file under `src` imports at runtime that neither the
    base requirements nor the file's extras (`extras_of`) declare. `providers` maps a top-level
    module to the distributions that provide it (as `packages_distributions()` does)."""
    by_extra = declared(requires)
    problems = []
    for path in sorted(src.rglob("*.py")):
        relative = path.relative_to(src).as_posix()
        extras = extras_of(relative)
        names = by_extra.get(BASE, set()).union(*(by_extra.get(e, set()) for e in extras))
        where = " or ".join(["the base requirements", *(f"the {e} extra" for e in extras)])
        for module in sorted(third_party(imported_top_levels(path.read_text(), str(path)))):
            dists = {canonicalize_name(d) for d in providers.get(module, [module])}
            if not dists & names:
                problems.append(
                    f"{relative} imports {module} ({', '.join(sorted(dists))}), "
                    f"which is not declared by {where}"
                )
    return problems


def requirements_of_pyproject(pyproject: Path) -> list[str]:
    """pyproject.toml's dependencies and optional dependencies as `Requires-Dist` strings."""
    project = tomllib.loads(pyproject.read_text())["project"]
    extras = project.get("optional-dependencies", {})
    marked = [f'{r}; extra == "{e}"' for e, reqs in extras.items() for r in reqs]
    return [*project.get("dependencies", []), *marked]


def requirements_of_wheel(wheel: Path) -> list[str]:
    """The `Requires-Dist` lines of a wheel's METADATA."""
    with zipfile.ZipFile(wheel) as zf:
        (name,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = HeaderParser().parsestr(zf.read(name).decode())
    return metadata.get_all("Requires-Dist") or []


def main(argv: Sequence[str] | None = None) -> int:
    """Check src/hoprag against the given wheel's requirements (else pyproject.toml's)."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args:
        requires = requirements_of_wheel(Path(args[0]))
    else:
        requires = requirements_of_pyproject(ROOT / "pyproject.toml")
    problems = undeclared(SRC, requires, packages_distributions())
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
