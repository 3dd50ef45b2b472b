"""Chunking (`hoprag.text.chunking`): long texts become passages within `max_words`, cut at
sentence and paragraph boundaries, with stable ids, the parent's metadata and title, and
consistent structural fields; bad input is an `InvalidInputError` naming the argument."""

from __future__ import annotations

import itertools
import random
import re

import pytest

from hoprag import Document
from hoprag.errors import InvalidInputError
from hoprag.text.chunking import STRUCTURE_EDGES, chunk_documents, chunk_text

WORD = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|[^\s\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+"
)


def words(text: str) -> list[str]:
    return WORD.findall(text)


def long_text(seed: int, paragraphs: int = 12) -> str:
    """Paragraphs of sentences of random lengths (one over 100 words), as a man page has."""
    rng = random.Random(seed)
    out = []
    for p in range(paragraphs):
        sentences = []
        for s in range(rng.randint(1, 6)):
            n = 130 if (p, s) == (3, 0) else rng.randint(3, 25)
            sentences.append(" ".join(f"p{p}s{s}w{i}" for i in range(n)) + rng.choice(".!?"))
        out.append(" ".join(sentences))
    return "\n\n".join(out)


@pytest.mark.parametrize("max_words", [20, 60, 160])
def test_every_passage_is_within_max_words_and_the_passages_hold_every_word_in_order(
    max_words: int,
) -> None:
    text = long_text(max_words)
    passages = chunk_text(text, max_words=max_words)
    assert len(passages) > 1
    assert all(0 < len(words(p)) <= max_words for p in passages)
    assert [w for p in passages for w in words(p)] == words(text)


def test_passages_end_at_sentence_ends_unless_a_sentence_is_longer_than_max_words() -> None:
    text = long_text(3)
    for p in chunk_text(text, max_words=60):
        last = words(p)[-1]
        cut_long_sentence = last.startswith("p3s0w")  # the 130-word sentence is cut
        assert last[-1] in ".!?" or cut_long_sentence, p[-40:]


def test_a_passage_ends_at_a_paragraph_break_rather_than_split_a_paragraph_that_fits() -> None:
    first = " ".join(f"a{i}" for i in range(30)) + "."
    second = (
        " ".join(f"b{i}" for i in range(20)) + ". " + " ".join(f"c{i}" for i in range(15)) + "."
    )
    passages = chunk_text(f"{first}\n\n{second}", max_words=40)
    assert passages == [first, second]


def test_overlap_repeats_the_last_sentences_of_the_passage_before_within_its_words() -> None:
    text = " ".join(f"s{i}a s{i}b s{i}c s{i}d s{i}e." for i in range(40))
    passages = chunk_text(text, max_words=25, overlap_words=10)
    for before, after in itertools.pairwise(passages):
        shared = [w for w in words(after) if w in set(words(before))]
        assert 0 < len(shared) <= 10
        assert words(after)[: len(shared)] == words(before)[-len(shared) :]
        assert len(words(after)) <= 25


def test_ids_and_structure_are_stable_and_consistent() -> None:
    doc = Document("man/ls", "ls\n\n" + long_text(7), {"title": "ls", "section": 1})
    first = chunk_documents([doc], max_words=50)
    again = chunk_documents([doc], max_words=50)
    assert [(c.id, c.content, c.metadata) for c in first] == [
        (c.id, c.content, c.metadata) for c in again
    ]
    ids = [c.id for c in first]
    assert ids == [f"man/ls#{n}" for n in range(len(first))]
    for n, c in enumerate(first):
        assert c.metadata["parent"] == "man/ls" and c.metadata["chunk"] == n
        assert c.metadata["section"] == 1 and c.metadata["title"] == "ls"
        assert c.content.startswith("ls\n\n")  # every passage says what it is about
        assert c.metadata.get("prev") == (ids[n - 1] if n else None)
        assert c.metadata.get("next") == (ids[n + 1] if n + 1 < len(ids) else None)
    assert doc.metadata == {"title": "ls", "section": 1}  # the input is not changed


def test_a_short_text_is_one_passage_with_its_text_unchanged() -> None:
    (only,) = chunk_documents([Document("d", "Just one line.", {"k": "v"})])
    assert only.id == "d#0" and only.content == "Just one line."
    assert only.metadata == {"k": "v", "parent": "d", "chunk": 0}


@pytest.mark.parametrize("content", ["", "   \n\n  "])
def test_a_text_without_words_is_kept_as_one_empty_passage(content: str) -> None:
    (only,) = chunk_documents([Document("e", content)])
    assert only.id == "e#0" and only.content == "" and only.metadata["parent"] == "e"
    assert chunk_text(content) == []


def test_text_written_without_spaces_is_cut_by_characters() -> None:
    text = "東京は日本の首都です。" * 30 + "\n\n" + "Ünïcödé wörds façade. " * 20
    passages = chunk_text(text, max_words=40)
    assert len(passages) > 3
    assert all(len(words(p)) <= 40 for p in passages)
    assert "".join(words("".join(passages))) == "".join(words(text))


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"max_words": 0}, "max_words"),
        ({"max_words": True}, "max_words"),
        ({"max_words": 2.5}, "max_words"),
        ({"max_words": 10, "overlap_words": 10}, "overlap_words"),
        ({"overlap_words": -1}, "overlap_words"),
    ],
)
def test_bad_sizes_are_refused_naming_the_argument(kwargs: dict, argument: str) -> None:
    with pytest.raises(InvalidInputError) as e:
        chunk_documents([Document("a", "text")], **kwargs)
    assert e.value.argument == argument


def test_documents_that_would_give_clashing_or_structural_fields_are_refused() -> None:
    with pytest.raises(InvalidInputError, match="parent"):
        chunk_documents([Document("a", "text", {"parent": "x"})])
    with pytest.raises(InvalidInputError, match="'a#0'") as e:
        chunk_documents([Document("a", "text"), Document("a#0", "other")])
    assert e.value.argument == "documents"
    with pytest.raises(InvalidInputError, match="not be unique"):
        chunk_documents([Document("a", "one"), Document("a", "two")])
    with pytest.raises(InvalidInputError, match="Documents"):
        chunk_documents(["plain text"])  # type: ignore[list-item]


async def test_structure_edges_join_a_passage_to_its_neighbours_and_its_documents_passages() -> (
    None
):
    from hoprag import Eager, atraverse
    from hoprag.embeddings import HashEmbedding
    from hoprag.stores import MemoryStore

    passages = chunk_documents([Document("doc", long_text(1))], max_words=40)
    store = MemoryStore(embedding=HashEmbedding(16))
    store.add(passages)
    res = await atraverse(
        None,
        query_embedding=[1.0] * 16,
        store=store,
        edges=list(STRUCTURE_EDGES),
        strategy=Eager(start_k=0, select_k=100, adjacent_k=100, max_depth=1),
        initial_root_ids=["doc#2"],
    )
    reached = {n.id for n in res if n.depth == 1}
    assert reached == {p.id for p in passages} - {"doc#2"}  # its document's other passages
    assert {"doc#1", "doc#3"} <= reached
