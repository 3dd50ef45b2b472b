"""The multi-hop recipe also starts from the passages a question names (`MULTIHOP.roots`,
`hoprag.text.document_titles`): which titles count, how many, in which order, and that
`hoprag eval`'s `recommended` returns a named passage that neither search ranks first."""

from __future__ import annotations

import asyncio
import dataclasses

from hoprag import Document
from hoprag.embeddings import HashEmbedding
from hoprag.embeddings.base import aembed_query
from hoprag.evaluation.methods import Retrievers
from hoprag.recipes import MULTIHOP, Recipe
from hoprag.stores import MemoryStore
from hoprag.text import TitleLinker, document_titles


def page(i: str, title: str | None, text: str) -> Document:
    return Document(i, f"{title}\n\n{text}" if title else text, {"title": title} if title else {})


def test_roots_are_the_named_passages_in_order_of_mention_at_most_question_roots() -> None:
    docs = [
        page("g", "Gull Records", "A label."),
        page("l", "Leeds", "A city."),
        page("y", "York", "A city."),
        page("a", "Ada Wren", "A singer."),
    ]
    titles = TitleLinker(document_titles(docs))
    question = "Did Ada Wren, born in Leeds, sign with Gull Records of York?"
    assert MULTIHOP.question_roots == 3
    assert MULTIHOP.roots(titles, question) == ["a", "l", "g"]
    assert Recipe("plain", edges=()).roots(titles, question) == []
    assert MULTIHOP.roots(titles, "Which label signed her?") == []


def test_document_titles_read_the_title_field_else_the_id() -> None:
    docs = [page("x1", "Île-de-France", "A region."), page("x2", None, "No title here.")]
    docs.append(Document("x3", "Numbered.", {"title": 7}))
    assert document_titles(docs) == [("x1", "Île-de-France"), ("x2", "x2"), ("x3", "x3")]
    assert document_titles(docs[:1], "name") == [("x1", "x1")]
    # Compared in normalised form, so the question's accents and case must match the title's
    titles = TitleLinker(document_titles(docs))
    assert titles.links("a trip to ÎLE DE FRANCE") == ["x1"]
    assert titles.links("a trip to Ile de France") == []


def _corpus() -> list[Document]:
    """A named page ("Quarry Lane") that shares no word with the question but its title, and
    many pages that share its title's words and more of the question's."""
    long = "A street of small workshops, " + "with shops and yards and sheds, " * 20
    docs = [page("target", "Quarry Lane", long)]
    for i in range(30):
        text = (f"Which river town near Quarry Lane had the oldest mill and the oldest "
                f"bridge? Mill {i} on Quarry Lane did.")  # fmt: skip
        docs.append(page(f"mill{i}", f"Mill {i}", text))
    return docs


def _recommended(docs: list[Document], question: str, recipe: Recipe = MULTIHOP) -> list[str]:
    async def run() -> list[str]:
        store = MemoryStore(HashEmbedding(64))
        await store.aadd(docs)
        retrievers = Retrievers(store, recipe=recipe)
        vec = await aembed_query(store.embedding, question)
        return await retrievers.recommended(question, vec, 10)

    return asyncio.run(run())


def test_recommended_returns_a_passage_the_question_names_that_no_search_ranks_high() -> None:
    question = "Which river town near Quarry Lane had the oldest mill and the oldest bridge?"
    assert "target" in _recommended(_corpus(), question)
    rootless = dataclasses.replace(MULTIHOP, question_roots=0)
    assert "target" not in _recommended(_corpus(), question, rootless)


def test_the_title_linker_is_built_once_from_the_store() -> None:
    async def run() -> tuple[TitleLinker, TitleLinker, list[str]]:
        store = MemoryStore(HashEmbedding(16))
        await store.aadd(_corpus())
        retrievers = Retrievers(store)
        first = await retrievers.title_linker()
        again = await retrievers.title_linker()
        return first, again, first.links("mill 3 and Quarry Lane")

    first, again, found = asyncio.run(run())
    assert first is again and found == ["mill3", "target"]
