"""Lexical relevance (`hoprag.lexical`): the shared tokenizer, BM25 scores as the formula gives
them, the order of a search (best first, ties by id), re-indexing and removal, and a filter."""

from __future__ import annotations

import math

import pytest

from hoprag.errors import InvalidInputError
from hoprag.lexical import K1, B, Bm25Index, idf, tokenize


def test_tokens_are_folded_words_without_punctuation_or_function_words() -> None:
    assert tokenize("The Quokka's island!") == ["quokka", "s", "island"]
    assert tokenize("Zoe\u0308 and ZOË, Saint-Denis") == ["zoë", "zoë", "saint", "denis"]
    assert tokenize("of the and") == [] and tokenize("") == []


def test_scores_follow_the_bm25_formula() -> None:
    index = Bm25Index()
    texts = {"a": "quokka quokka island", "b": "island of perth", "c": "perth city lights far"}
    for i, t in texts.items():
        index.add(i, t)
    lengths = {"a": 3, "b": 2, "c": 4}  # "of" is a stopword
    mean = sum(lengths.values()) / 3

    def expected(doc: str, tf: dict[str, int], df: dict[str, int]) -> float:
        norm = K1 * (1 - B + B * lengths[doc] / mean)
        return sum(idf(3, df[t]) * n * (K1 + 1) / (n + norm) for t, n in tf.items())

    assert index.score("a", ["quokka", "island"]) == pytest.approx(
        expected("a", {"quokka": 2, "island": 1}, {"quokka": 1, "island": 2})
    )
    assert index.score("b", ["island", "perth"]) == pytest.approx(
        expected("b", {"island": 1, "perth": 1}, {"island": 2, "perth": 2})
    )
    assert idf(3, 1) == pytest.approx(math.log(1 + 2.5 / 1.5))
    assert index.score("c", ["quokka"]) == 0.0 and index.score("zzz", ["perth"]) == 0.0


def test_search_is_best_first_with_ties_by_id_and_only_documents_with_a_term() -> None:
    index = Bm25Index()
    for i in ("d3", "d1", "d2"):
        index.add(i, "same words here")
    index.add("best", "words words words here")
    index.add("none", "nothing shared")
    got = index.search("words", 10)
    assert [i for i, _ in got] == ["best", "d1", "d2", "d3"]
    assert got[1][1] == got[2][1] == got[3][1] > 0
    assert [i for i, _ in index.search("words", 2)] == ["best", "d1"]
    assert index.search("absent", 5) == [] and index.search("words", 0) == []
    assert [i for i, _ in index.search("words", 10, keep=lambda i: i != "best")] == [
        "d1", "d2", "d3"]  # fmt: skip
    with pytest.raises(InvalidInputError, match="k must be an int >= 0"):
        index.search("words", -1)


def test_adding_an_id_again_replaces_its_text_and_remove_takes_it_out() -> None:
    index = Bm25Index()
    index.add("a", "alpha beta")
    index.add("b", "beta gamma")
    index.add("a", "gamma delta")
    assert len(index) == 2
    assert [i for i, _ in index.search("alpha", 5)] == []
    assert {i for i, _ in index.search("gamma", 5)} == {"a", "b"}
    index.remove("b")
    index.remove("not there")
    assert [i for i, _ in index.search("beta gamma", 5)] == ["a"]
    same = Bm25Index()
    same.add("a", "gamma delta")
    assert index.search("gamma delta", 5) == same.search("gamma delta", 5)
