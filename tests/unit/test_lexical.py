"""Lexical relevance (`hoprag.lexical`): the shared tokenizer, BM25 scores as the formula gives
them, the order of a search (best first, ties by id), re-indexing and removal, and a filter."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import pytest

from hoprag.errors import InvalidInputError
from hoprag.lexical import (
    K1,
    B,
    Bm25Index,
    best,
    bm25_among,
    bm25_totals,
    check_max_holders,
    idf,
    tokenize,
)


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


def test_terms_held_by_more_than_max_holders_count_for_nothing() -> None:
    index = Bm25Index()
    for i in ("a", "b", "c"):
        index.add(i, f"common words {i}")
    index.add("rare", "common rare")
    assert index.holders("common") == 4 and index.holders("rare") == 1
    assert index.holders("absent") == 0
    # "common" (4 holders) is left out, so only "rare"'s holder scores, as if asked alone.
    assert index.search("common rare", 10, max_holders=3) == index.search("rare", 10)
    assert len(index.search("common rare", 10, max_holders=4)) == 4
    assert index.search("common", 10, max_holders=3) == []
    # Among the documents a filter keeps, holders are counted after the filter.
    keep = {"a", "rare"}.__contains__
    among = bm25_among(Counter(["common", "rare"]), index.postings, keep, max_holders=1)
    assert set(among) == {"rare"}
    assert set(bm25_among(Counter(["common"]), index.postings, keep, max_holders=2)) == {
        "a", "rare"}  # fmt: skip


@pytest.mark.parametrize("bad", [0, -1, True, 2.0, "3"])
def test_a_bad_max_holders_is_refused_naming_it(bad: object) -> None:
    with pytest.raises(InvalidInputError, match="max_holders must be None or an int >= 1"):
        check_max_holders(bad)
    with pytest.raises(InvalidInputError, match="max_holders"):
        Bm25Index().search("x", 3, max_holders=bad)  # type: ignore[arg-type]
    assert check_max_holders(None) is None and check_max_holders(1) == 1


def test_search_gives_bm25_totals_scores_to_the_bit_and_follows_writes() -> None:
    import random

    rng = random.Random(7)
    words = [f"w{i}" for i in range(30)]
    index = Bm25Index()
    for i in range(200):
        index.add(f"d{i:03}", " ".join(rng.choice(words[: 5 + i % 25]) for _ in range(1 + i % 9)))

    def plain(query: str, k: int, keep: Any = None) -> list[tuple[str, float]]:
        totals = bm25_totals(Counter(tokenize(query)), index.postings, len(index),
                             index._total_length, keep)  # fmt: skip
        return best(totals, k)

    keep = {f"d{i:03}" for i in range(0, 200, 3)}.__contains__
    for step in range(3):
        for query in ("w1", "w0 w0 w7", "w3 w9 w20 w29", "w28 absent", "w2 w4 w6 w8 w10"):
            for k in (1, 5, 50, 500):
                assert index.search(query, k) == plain(query, k), (query, k)  # exact floats
                assert index.search(query, k, keep=keep) == plain(query, k, keep)
        index.add("d007", "w29 w29 w28")  # a write: the arrays are built again
        index.remove(f"d{100 + step}")
