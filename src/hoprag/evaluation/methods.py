"""The retrieval methods `hoprag eval` compares, over one corpus held in a store.

* `vector`: the store's vector search, top k.
* `lexical`: the store's BM25 search of the passages' text (`hoprag.lexical`), top k.
* `hybrid`: reciprocal rank fusion of the top 60 of each (`1 / (60 + rank)` summed).
* `recommended`: the recipe this project recommends for multi-hop questions, the same for
  every data set: edges from the text (each passage's `mentions` of other passages' titles,
  `hoprag.text.linking`, followed both ways, and rare capitalised phrases shared with at most
  two other passages, `hoprag.text.phrases`), a Beam traversal of depth 1 from 3 vector and 2
  lexical starts, and from up to 3 passages whose titles the question names
  (`MULTIHOP.roots`), whose path scores keep the bridge documents (`MULTIHOP.strategy`),
  then a ranking of every candidate it found (`MULTIHOP.ranking`, `hoprag.reranking`), and
  `k` results always: when the traversal admits fewer, the rest come from `hybrid`'s order
  (`Recipe.aretrieve`). Another recipe (`Retrievers.recipe`) can take its place.
* `edges`: the same (the recipe's strategy, roots, ranking and filling) over edges you give
  (`Retrievers.edges`, e.g. your metadata's links), to compare them with the recipe's.

Each method takes the question's text and its embedding (embedded once beforehand, so that a
method's time excludes the embedding) and returns passage ids, best first."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hoprag.documents import Document
from hoprag.errors import invalid
from hoprag.recipes import MULTIHOP, Recipe, atitles
from hoprag.text import LinkReport, TitleLinker, link_documents, link_phrases

RRF_C = 60
FUSED_DEPTH = 60
METHODS = ("vector", "lexical", "hybrid", "recommended", "edges")
DEFAULT_METHODS = METHODS[:4]
"""What `hoprag eval` runs unless told: every method but `edges`, which needs your edges."""

Method = Callable[[str, Sequence[float], int], Awaitable[list[str]]]


def passage_documents(passages: Sequence[Any]) -> tuple[list[Document], LinkReport]:
    """The corpus as Documents (content: title, a blank line, text, or the text alone when
    the passage has no title; metadata: the passage's own, its title, the
    `mentions` of other titles found by linking and the `phrases` shared with at most two
    other passages, `hoprag.text.phrases`) and the linking report."""
    docs = [
        Document(p.id, f"{p.title}\n\n{p.text}" if p.title else p.text, _metadata(p))
        for p in passages
    ]
    linked, report = link_documents(docs)
    return link_phrases(linked), report


def _metadata(passage: Any) -> dict[str, Any]:
    """A passage's metadata (its own, from your files) with its title."""
    return {**getattr(passage, "metadata", {}), "title": passage.title}


def fuse(rankings: Sequence[Sequence[str]], k: int) -> list[str]:
    """Reciprocal rank fusion of `rankings`, top `k` (equal sums by first appearance)."""
    score: dict[str, float] = {}
    for ranking in rankings:
        for rank, doc_id in enumerate(ranking, 1):
            score[doc_id] = score.get(doc_id, 0.0) + 1.0 / (RRF_C + rank)
    order = {d: i for i, d in enumerate(dict.fromkeys(d for r in rankings for d in r))}
    return sorted(score, key=lambda d: (-score[d], order[d]))[:k]


@dataclass
class Retrievers:
    """The methods over one store holding the corpus (with a lexical index). `titles` finds
    the passages a question names (`recommended`'s roots); by default it is built from the
    store's documents on the first `recommended` question."""

    store: Any
    titles: TitleLinker | None = None
    recipe: Recipe = MULTIHOP
    edges: Sequence[tuple[str, str]] | None = None

    async def title_linker(self) -> TitleLinker:
        """`titles`, built once from the store's documents (`hoprag.text.document_titles`)."""
        if self.titles is None:
            self.titles = await atitles(self.store)
        return self.titles

    async def vector(self, question: str, embedding: Sequence[float], k: int) -> list[str]:
        from hoprag.search import asearch

        nodes = await asearch(None, store=self.store, k=k, query_embedding=embedding)
        return [n.id for n in nodes]

    async def lexical_ids(self, question: str, embedding: Sequence[float], k: int) -> list[str]:
        query = await self.store.aprepare(embedding, include_embeddings=False)
        return [h.id for h in await query.alexical(question, k=k)]

    async def hybrid(self, question: str, embedding: Sequence[float], k: int) -> list[str]:
        vec = await self.vector(question, embedding, FUSED_DEPTH)
        lex = await self.lexical_ids(question, embedding, FUSED_DEPTH)
        return fuse([vec, lex], k)

    async def recommended(self, question: str, embedding: Sequence[float], k: int) -> list[str]:
        return await self.traversal(question, embedding, k, self.recipe.edges)

    async def own_edges(self, question: str, embedding: Sequence[float], k: int) -> list[str]:
        if self.edges is None:
            raise invalid("edges", None, "the edges to compare with the recipe's (FROM, TO)")
        return await self.traversal(question, embedding, k, self.edges)

    async def traversal(
        self, question: str, embedding: Sequence[float], k: int, edges: Sequence[Any]
    ) -> list[str]:
        """The recipe (`Recipe.aretrieve`: its traversal over `edges` from its searches'
        starts and the question's roots, its ranking), `k` results always (the rest from
        `hybrid`'s order)."""
        nodes = await self.recipe.aretrieve(question, store=self.store, k=k,
                                            titles=await self.title_linker(), edges=edges,
                                            query_embedding=embedding)  # fmt: skip
        got = list(dict.fromkeys(n.id for n in nodes))[:k]
        if len(got) < k:
            seen = set(got)
            rest = await self.hybrid(question, embedding, k + len(got))
            got += [d for d in rest if d not in seen][: k - len(got)]
        return got

    def method(self, name: str) -> Method:
        """The method called `name` (one of METHODS)."""
        return {
            "vector": self.vector,
            "lexical": self.lexical_ids,
            "hybrid": self.hybrid,
            "recommended": self.recommended,
            "edges": self.own_edges,
        }[name]
