"""Shared-phrase edges (`hoprag.text.phrases`): capitalised multi-word names in any script,
joined by short connectors, cut at punctuation; only phrases a few documents share become
edges."""

from __future__ import annotations

import pytest

from hoprag import Document, Eager, atraverse
from hoprag.embeddings import HashEmbedding
from hoprag.errors import InvalidInputError
from hoprag.stores import MemoryStore
from hoprag.text import link_phrases, names_in, phrases_in


def test_phrases_are_runs_of_capitalised_words_in_any_script() -> None:
    text = "Ørsted Prize went to José María Aznar; Bank of England, then New York City."
    assert phrases_in(text) == {
        "ørsted prize",
        "josé maría aznar",
        "bank of england",
        "new york city",
    }


def test_punctuation_and_lower_case_words_end_a_phrase_and_single_names_are_not_phrases() -> None:
    assert phrases_in("Paris, Texas is not Paris Texas.") == {"paris texas"}
    assert phrases_in("He met Stan. Lee was late.") == set()
    assert phrases_in("Bank of") == set()  # a trailing connector is dropped, one name is left
    assert phrases_in("Tom and Jerry") == set()  # "and" joins two names, not one
    assert phrases_in("Duke of the Realm") == set()  # one connector at a time
    assert phrases_in("The Blue Lagoon") == phrases_in("at the Blue Lagoon") == {"blue lagoon"}


def test_names_are_capitalised_runs_of_one_word_or_more_in_order_of_first_appearance() -> None:
    text = "He met Stan Lee in Paris. The Bank of England sent Paris a note; Bank of"
    assert names_in(text) == ["He", "Stan Lee", "Paris", "Bank of England", "Bank"]
    assert names_in("no capitals here") == [] and names_in("") == []
    assert names_in("Ørsted met ØRSTED") == ["Ørsted", "ØRSTED"]  # as written, each once


def test_only_phrases_shared_by_two_to_max_documents_become_the_field() -> None:
    docs = [
        Document("a", "A\n\nAlpha met Stan Lee in New York City."),
        Document("b", "B\n\nStan Lee wrote comics."),
        Document("c", "C\n\nNew York City, New York City."),
        Document("d", "D\n\nNew York City again."),
        Document("e", "Stan Lee\n\nNothing here."),  # the first line is the title: left out
    ]
    got = {d.id: d.metadata["phrases"] for d in link_phrases(docs, max_documents=2)}
    assert got == {"a": ["stan lee"], "b": ["stan lee"], "c": [], "d": [], "e": []}
    three = {d.id: d.metadata["phrases"] for d in link_phrases(docs, max_documents=3)}
    assert three["a"] == ["new york city", "stan lee"] and three["d"] == ["new york city"]
    assert docs[0].metadata == {}  # copies: the originals are untouched


async def test_documents_sharing_a_phrase_are_one_hop_apart() -> None:
    docs = link_phrases([
        Document("a", "A\n\nThe Blue Lagoon film."),
        Document("b", "B\n\nShot at the Blue Lagoon, Iceland."),
        Document("c", "C\n\nNothing shared."),
    ])  # fmt: skip
    store = MemoryStore(HashEmbedding(16))
    await store.aadd(docs)
    strategy = Eager(start_k=0, max_depth=1, select_k=5)
    got = await atraverse("x", store=store, edges=[("phrases", "phrases")], strategy=strategy,
                          initial_root_ids=["a"])  # fmt: skip
    assert [(n.id, n.depth) for n in got] == [("a", 0), ("b", 1)]


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"field": ""}, "field"),
        ({"field": "$id"}, "field"),
        ({"max_documents": 1}, "max_documents"),
        ({"max_documents": True}, "max_documents"),
    ],
)
def test_bad_options_are_refused_naming_them(kwargs: dict, argument: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        link_phrases([Document("a", "text")], **kwargs)
    assert caught.value.argument == argument
