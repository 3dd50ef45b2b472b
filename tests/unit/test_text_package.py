"""The text package (issue #51 part 3): normalisation, the tokenizer, title linking and shared
phrases live in `hoprag.text`; the old names `hoprag.linking`, `hoprag.phrases` and the
tokenizer names of `hoprag.lexical` are the same objects for one release; the package imports
only the vocabulary, the standard library and pyahocorasick, and `hoprag.lexical` no longer
imports linking."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import hoprag.lexical
import hoprag.linking
import hoprag.phrases
import hoprag.text
from hoprag.documents import Document
from hoprag.text import linking, normalisation, phrases, tokens

SRC = Path(__file__).resolve().parents[2] / "src" / "hoprag"
TEXT = SRC / "text"

MAY_IMPORT = ("hoprag.text", "hoprag.errors", "hoprag.validation", "hoprag.documents")
"""The hoprag modules the text package may import: itself and the vocabulary it needs."""
THIRD_PARTY = {"ahocorasick"}
"""The modules beside the standard library the text package may import (linking's matcher)."""


def _imports(source: str, filename: str) -> set[str]:
    """Every module a source imports, at any depth (function-local imports too); a relative
    import is named by its dots."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add("." * node.level + (node.module or ""))
    return names


def _foreign(names: set[str]) -> list[str]:
    """The imports that are neither the allowed hoprag modules, the standard library nor the
    allowed third-party modules."""
    return sorted(
        n
        for n in names
        if not (
            n == "__future__"
            or n.startswith(MAY_IMPORT)
            or n.split(".")[0] in sys.stdlib_module_names
            or n.split(".")[0] in THIRD_PARTY
        )
    )


def test_the_text_features_are_importable_from_the_package_and_work() -> None:
    assert hoprag.text.normalise("Saint-Denis, ÉTÉ!") == "saint denis été"
    assert hoprag.text.tokenize("The Quokka's island!") == ["quokka", "s", "island"]
    assert "the" in hoprag.text.STOPWORDS and hoprag.text.MAX_TERM_BYTES == 256
    assert hoprag.text.phrases_in("She met Stan Lee in New York.") == {"stan lee", "new york"}
    docs = [
        Document("a", "Ada wrote to Babbage.", {"title": "Ada"}),
        Document("b", "Babbage answered.", {"title": "Babbage"}),
    ]
    linked, report = hoprag.text.link_documents(docs, min_chars=3)
    assert [d.metadata["mentions"] for d in linked] == [["b"], []]
    assert isinstance(report, hoprag.text.LinkReport) and report.links == 1


def test_every_public_name_of_the_package_is_defined_in_one_of_its_modules() -> None:
    homes = {f"hoprag.text.{p.stem}" for p in TEXT.glob("*.py") if p.stem != "__init__"}
    assert {"hoprag.text.normalisation", "hoprag.text.tokens"} <= homes
    for name in hoprag.text.__all__:
        value = getattr(hoprag.text, name)
        home = getattr(value, "__module__", None)
        if home is None:  # a constant: found by identity in the module that defines it
            home = next(
                m for m in homes if getattr(importlib.import_module(m), name, None) is value
            )
        assert home in homes, (name, home)
    assert hoprag.text.__doc__ and "Text" in hoprag.text.__doc__


@pytest.mark.parametrize(
    ("old", "new"),
    [(hoprag.linking, linking), (hoprag.phrases, phrases)],
    ids=["linking", "phrases"],
)
def test_the_old_modules_re_export_the_same_objects(old: ModuleType, new: ModuleType) -> None:
    assert old.__all__
    for name in old.__all__:
        source = normalisation if name == "normalise" else new
        assert getattr(old, name) is getattr(source, name), name
    assert "one release" in (old.__doc__ or "")


def test_the_old_names_importers_use_are_kept() -> None:
    """What `hoprag.stores.cassandra.link_table`, `hoprag.cli.load`, the README and the
    stores import from the old modules is still there, as the new objects."""
    from hoprag.linking import LinkReport, TitleLinker, check_link_options, link_documents
    from hoprag.phrases import link_phrases

    assert LinkReport is linking.LinkReport and TitleLinker is linking.TitleLinker
    assert check_link_options is linking.check_link_options
    assert link_documents is linking.link_documents and link_phrases is phrases.link_phrases
    assert hoprag.linking.normalise is normalisation.normalise


def test_lexical_keeps_exporting_the_tokenizer_it_imports() -> None:
    for name in ("tokenize", "STOPWORDS", "MAX_TERM_BYTES"):
        assert getattr(hoprag.lexical, name) is getattr(tokens, name), name
    assert hoprag.lexical.Bm25Index.__module__ == "hoprag.lexical"


def test_lexical_does_not_import_linking_or_phrases() -> None:
    path = SRC / "lexical.py"
    names = _imports(path.read_text(), str(path))
    assert not [n for n in names if "linking" in n or "phrases" in n], sorted(names)
    assert "hoprag.text.tokens" in names


@pytest.mark.parametrize("path", sorted(TEXT.glob("*.py")), ids=lambda p: p.name)
def test_the_text_package_imports_only_the_vocabulary_and_the_standard_library(
    path: Path,
) -> None:
    """No store, engine (traversal, rounds, search), command or embedding model: text sits
    beside the vocabulary, so that `hoprag.lexical` can import it."""
    assert _foreign(_imports(path.read_text(), str(path))) == []


def test_the_import_check_catches_stores_engine_commands_and_embeddings() -> None:
    source = (
        "import numpy\nfrom hoprag.stores.base import Store\nimport hoprag.engine.traversal\n"
        "def f():\n    from hoprag.cli import main\n    from hoprag.embeddings import Model\n"
        "from . import x\n"
    )
    assert _foreign(_imports(source, "m.py")) == [
        ".",
        "hoprag.cli",
        "hoprag.embeddings",
        "hoprag.engine.traversal",
        "hoprag.stores.base",
        "numpy",
    ]


@pytest.mark.parametrize(
    "module",
    ["hoprag.text", "hoprag.text.normalisation", "hoprag.text.tokens", "hoprag.text.linking",
     "hoprag.text.phrases", "hoprag.linking", "hoprag.phrases", "hoprag.lexical"],
)  # fmt: skip
def test_each_module_imports_alone_in_a_fresh_interpreter(module: str) -> None:
    """No import circle: each module is the first hoprag module a fresh interpreter imports
    (after the `hoprag` package itself, which Python always runs first)."""
    done = subprocess.run(
        [sys.executable, "-c", f"import {module}"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert importlib.import_module(module).__name__ == module
