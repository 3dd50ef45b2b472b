"""FOLDOC loader on the real Debian dict-foldoc data (installed by scripts/setup)."""

from __future__ import annotations

import pytest

from hoprag.datasets import DatasetNotInstalledError, FoldocData, load, read_foldoc
from hoprag.datasets.foldoc import headword_slug


@pytest.fixture(scope="module")
def foldoc() -> FoldocData:
    return read_foldoc()


@pytest.fixture(scope="module")
def by_id(foldoc: FoldocData) -> dict:
    return {d.id: d for d in foldoc.documents}


def test_counts_in_expected_ranges(foldoc: FoldocData) -> None:
    s = foldoc.stats
    assert 11_500 <= s.articles <= 13_000
    assert len(foldoc.documents) == s.articles
    assert 14_500 <= s.headwords <= 16_500  # DESIGN's "~15k" counts headwords with aliases
    assert 52_000 <= s.references <= 64_000  # DESIGN: ~56k cross-references
    assert s.resolved + s.unresolved + s.self_references == s.references
    assert s.resolved >= 0.8 * s.references
    assert s.unresolved == sum(foldoc.unresolved.values())
    assert 40_000 <= s.links <= s.resolved
    assert s.dated >= 9_000 and s.tagged >= 8_000
    assert s.renamed_duplicates >= 100


def test_ids_unique_and_links_resolve(foldoc: FoldocData, by_id: dict) -> None:
    assert len(by_id) == len(foldoc.documents)
    for doc in foldoc.documents:
        links = doc.metadata["links"]
        assert len(links) == len(set(links))
        assert doc.id not in links
        assert all(t in by_id for t in links), doc.id


def test_known_cross_references(by_id: dict) -> None:
    # "actor: 1. <programming> In {object-oriented} programming, an {object} ... 2. In {Chorus}"
    actor = by_id["actor"]
    assert actor.metadata["title"] == "actor"
    assert actor.metadata["links"] == ["object-oriented", "object", "chorus"]
    assert actor.metadata["keywords"] == ["programming", "operating system"]
    assert actor.metadata["date"] == "1994-11-08"
    assert "{" not in actor.content and "<programming>" not in actor.content
    # ACE's two senses are bare references.
    assert by_id["ace"].metadata["links"] == [
        "advanced_computing_environment",
        "adaptive_communication_environment",
    ]
    lam = by_id["lambda-calculus"].metadata["links"]
    assert {"alonzo_church", "lisp", "functional_programming"} <= set(lam)
    assert {"c", "bjarne_stroustrup"} <= set(by_id["c++"].metadata["links"])
    # {ASCII} resolves through the index alias to the article titled by the long form.
    assert (
        "american_standard_code_for_information_interchange"
        in (by_id["exclamation_mark"].metadata["links"])
    )


def test_plural_and_case_resolution(by_id: dict) -> None:
    # ASpecT: "Algebraic specification of {abstract data types}" -> "abstract data type".
    assert by_id["aspect~3"].metadata["links"][0] == "abstract_data_type"
    # C cites {B}, the language "B" (b~2), not the article "b".
    assert by_id["b~2"].metadata["title"] == "B"
    assert "b~2" in by_id["c"].metadata["links"]


def test_duplicate_headwords_and_case(by_id: dict) -> None:
    assert by_id["actor~2"].metadata["title"] == "Actor"
    assert by_id["actor~2"].metadata["keywords"] == ["language"]
    titles = {by_id[i].metadata["title"] for i in ("aspect", "aspect~2", "aspect~3")}
    assert titles == {"aspect", "ASPECT", "ASpecT"}
    assert by_id["aspect"].metadata["title"] == "aspect"  # the lower-case one keeps the slug


def test_aliases_and_slug(by_id: dict) -> None:
    assert by_id["exclamation_mark"].metadata["aliases"][0] == "!"
    assert headword_slug("  Assembly   Language ") == "assembly_language"


def test_load_limit_and_registry() -> None:
    docs = list(load("foldoc", limit=25))
    assert len(docs) == 25
    assert all(d.metadata["source"] == "foldoc" for d in docs)
    assert list(load("foldoc", limit=0)) == []


def test_missing_data_names_install_command(tmp_path) -> None:
    with pytest.raises(DatasetNotInstalledError, match="apt-get install dict-foldoc"):
        load("foldoc", path=tmp_path)
