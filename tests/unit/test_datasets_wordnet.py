"""WordNet loader on the real Debian wordnet-base data (installed by scripts/setup)."""

from __future__ import annotations

import pytest

from hoprag.datasets import DatasetNotInstalledError, load
from hoprag.datasets.wordnet import POINTER_FIELDS, synset_id

POINTERS = set(POINTER_FIELDS.values())


@pytest.fixture(scope="module")
def synsets() -> dict:
    return {d.id: d for d in load("wordnet")}


def test_count_is_wordnet_30(synsets: dict) -> None:
    assert len(synsets) == 117_659
    pos = {}
    for d in synsets.values():
        pos[d.metadata["pos"]] = pos.get(d.metadata["pos"], 0) + 1
    assert pos == {"n": 82_115, "v": 13_767, "a": 7_463, "s": 10_693, "r": 3_621}


def test_every_pointer_resolves(synsets: dict) -> None:
    total = 0
    for d in synsets.values():
        for field, value in d.metadata.items():
            if field in POINTERS:
                assert value, f"{d.id}: empty {field} should be absent"
                assert all(t in synsets for t in value), (d.id, field)
                total += len(value)
    assert total > 350_000


def test_hypernyms_and_hyponyms_mirror(synsets: dict) -> None:
    for d in synsets.values():
        for h in d.metadata.get("hypernyms", []):
            assert d.id in synsets[h].metadata["hyponyms"]


def test_dog(synsets: dict) -> None:
    dog = synsets["n:02084071"]
    assert dog.metadata["name"] == "dog.n.01"
    assert dog.metadata["lemmas"] == ["dog", "domestic dog", "Canis familiaris"]
    assert dog.metadata["lexname"] == "noun.animal"
    assert "n:02083346" in dog.metadata["hypernyms"]  # canine
    assert synsets["n:02083346"].metadata["name"] == "canine.n.02"
    assert dog.content.startswith("dog, domestic dog, Canis familiaris: a member of the genus")
    names = [d.metadata["name"] for d in synsets.values()]
    assert len(set(names)) == len(names)


def test_adjective_satellites_and_antonyms(synsets: dict) -> None:
    good = next(d for d in synsets.values() if d.metadata["name"] == "good.a.01")
    bad = next(d for d in synsets.values() if d.metadata["name"] == "bad.a.01")
    assert bad.id in good.metadata["antonyms"]
    assert all(synsets[s].metadata["pos"] in ("a", "s") for s in good.metadata["similar_to"])


def test_limit_and_ids() -> None:
    docs = list(load("wordnet", limit=10))
    assert [d.id for d in docs][:1] == ["n:00001740"]  # entity
    assert len(docs) == 10
    assert synset_id("s", 1740) == "a:00001740"


def test_missing_data_names_install_command(tmp_path) -> None:
    with pytest.raises(DatasetNotInstalledError, match="apt-get install wordnet-base"):
        load("wordnet", path=tmp_path)
