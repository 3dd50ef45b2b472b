"""A re-query after a traversal: from each of its best starts, one lexical search for
what the question still needs, as multi-hop retrievers search again with the first passage.

A multi-hop question's second passage often shares with the first a name that is no
document's title and no rare phrase of the edges (MuSiQue's bridges: "the performer of X" is
named in X's passage, and the performer's own passage says the rest). `Requery.arequery`
takes the `starts` starts of a run with the best `_path_score` and runs, for each, one BM25
search (`PreparedQuery.alexical`, within the run's filter) of

- the question's terms (`hoprag.lexical.tokenize`) that the start's content does not hold,
- and the terms of the capitalised names in the start's content (`hoprag.text.names_in`,
  its first line, the title, left out) that are not all terms of the question,

counting only the terms held by at most `max_holders` documents, so that the rare words
rank and the common ones' postings are not read into the scores. Of each search's
`search_k` best hits, the first `per_start` not already in the pool become neighbours of
that start: one hop deeper, reached by a `SearchEdge` carrying the search's text, with
`_search_score` their BM25 score over the search's best. They join the pool a ranking
chooses from (`hoprag.recipes.Recipe`); the traversal's own nodes are left as they are."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from hoprag.documents import Node
from hoprag.edges import Edges, SearchEdge
from hoprag.lexical import check_max_holders, tokenize
from hoprag.stores.base import LexicalHit, PreparedQuery, hit_node
from hoprag.text.phrases import content_body, names_in
from hoprag.validation import MAX_K, check_int

__all__ = ["Requery", "requery_text"]

SEARCH_SCORE = "_search_score"
"""The `extra_metadata` key of a found node's BM25 score over its search's best."""

_NO_EDGES = Edges(frozenset(), frozenset())


def requery_text(question: str, content: str) -> str:
    """The text searched from a passage of `content` for `question`: the question's terms
    the passage does not hold, then the terms of the passage's names (its first line left
    out) that are not all the question's, space-separated in that order."""
    asked = tokenize(question)
    asked_set = set(asked)
    held = set(tokenize(content))
    terms = [t for t in asked if t not in held]
    named: set[tuple[str, ...]] = set()
    for name in names_in(content_body(content)):
        words = tuple(tokenize(name))
        if words not in named and not asked_set.issuperset(words):
            terms += words
        named.add(words)
    return " ".join(terms)


@dataclass(frozen=True)
class Requery:
    """One lexical search from each of a run's `starts` best starts, asking its `search_k` best
    hits and adding the first `per_start` of them not in the pool (module docstring); terms
    held by more than `max_holders` documents do not count."""

    starts: int = 2
    per_start: int = 2
    max_holders: int = 50
    search_k: int = 12

    def __post_init__(self) -> None:
        check_int("starts", self.starts, minimum=1, maximum=100)
        check_int("per_start", self.per_start, minimum=1, maximum=100)
        check_max_holders(self.max_holders)
        check_int("search_k", self.search_k, minimum=self.per_start, maximum=MAX_K)

    async def arequery(
        self,
        question: str,
        nodes: Sequence[Node],
        query: PreparedQuery,
        edges_of: Any = None,
    ) -> list[Node]:
        """The nodes the searches from `nodes`' best starts find, in the order of their starts
        then of their BM25 rank, none already among `nodes`; each search runs through `query`
        (the run's prepared query: its filter and similarity). `edges_of` (the run's edge
        function) gives each found document its edges."""
        starts = sorted((n for n in nodes if n.depth == 0), key=_path_score, reverse=True)
        chosen = starts[: self.starts]
        texts = [requery_text(question, start.content) for start in chosen]
        found: list[Sequence[LexicalHit]] = [()] * len(chosen)

        async def search(i: int) -> None:
            found[i] = await query.alexical(texts[i], k=self.search_k, max_holders=self.max_holders)

        async with anyio.create_task_group() as tg:
            for i, text in enumerate(texts):
                if text:
                    tg.start_soon(search, i)
        taken = {n.id for n in nodes}
        out: list[Node] = []
        for start, text, hits in zip(chosen, texts, found, strict=True):
            out += self._new(start, SearchEdge(text), hits, taken, edges_of)
        return out

    def _new(
        self,
        start: Node,
        edge: SearchEdge,
        hits: Sequence[LexicalHit],
        taken: set[str],
        edges_of: Any,
    ) -> list[Node]:
        """The first `per_start` of a start's hits not in `taken` (which they join), as nodes
        reached from `start` by `edge`."""
        best = hits[0].lexical if hits else 0.0
        out: list[Node] = []
        for hit in hits:
            if len(out) == self.per_start:
                break
            if hit.id in taken:
                continue
            taken.add(hit.id)
            edges = edges_of(hit.document) if edges_of is not None else _NO_EDGES
            node = hit_node(hit, start.path.extend(edge, hit.id), edges)
            node.extra_metadata[SEARCH_SCORE] = hit.lexical / best if best > 0 else 0.0
            out.append(node)
        return out


def _path_score(node: Node) -> float:
    value = node.extra_metadata.get("_path_score")
    return float(value) if isinstance(value, int | float) else 0.0
