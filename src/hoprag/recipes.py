"""Recipes: a traversal's edges and strategy settings under one name, defined once for the
library, `hoprag query --recipe` and `hoprag eval`.

`multihop` is the multi-hop question recipe that docs/quality.md measures (`hoprag eval`'s
`recommended` method): Beam of depth 1 from the 3 best vector matches and the 2 best BM25
matches (a start's relevance is its similarity plus 0.3 times its BM25 score over the best
start's), each start adding its 3 best neighbours, a neighbour scored half its own similarity
and half its parent's relevance, a step back along a mention (to a document that mentions the
parent) weighted 0.8 and one to a passage sharing a rare phrase 0.7. Its edges are those the
text gives (`hoprag.text`: `mentions` of other documents' titles, `phrases` shared by a few),
so its store needs a lexical index and documents linked with `mentions` and `phrases`
(`hoprag link --phrases phrases`, `hoprag load --lexical`). It also starts from the documents
whose titles the question names, up to 3 (`question_roots`; `Recipe.roots` finds them with a
`hoprag.text.TitleLinker` over the corpus's titles, passed to `atraverse` as
`initial_root_ids`; `atitles(store)` builds it from a store's documents, as `hoprag eval` and
`hoprag query --recipe` do): a question's own entities are often the first hop's pages. The
traversal admits every candidate it finds; a BM25 search from each of its 2 best starts adds
2 more (`requery`, `hoprag.requery.Requery`: the question's terms a start lacks and its rare
names, for bridges no title names); and a ranking fitted on training questions (`ranking`,
`hoprag.reranking.LinearRanking`) chooses the answer among them by what each adds to the
passage it is read with. `MULTIHOP.aretrieve(question, store=...)` runs all of it."""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hoprag.errors import invalid
from hoprag.requery import Requery
from hoprag.reranking import LinearRanking
from hoprag.strategies import Beam
from hoprag.strategies.base import Strategy
from hoprag.validation import MAX_K, check_int, checked_vector

if TYPE_CHECKING:
    from hoprag.documents import Node
    from hoprag.stats import TraversalStats
    from hoprag.text.linking import TitleLinker

__all__ = ["MULTIHOP", "RECIPES", "Pool", "Recipe", "atitles", "recipe"]


@dataclass(frozen=True)
class Pool:
    """A recipe's candidates for one question (`Recipe.apool`): the traversal's nodes then
    the re-query's, the question's roots, the `k` asked and the traversal's stats."""

    nodes: list[Node]
    roots: list[str]
    k: int
    stats: TraversalStats


@dataclass(frozen=True)
class Recipe:
    """A named traversal: its edges, its Beam settings (`strategy` makes the strategy, with
    any setting overridden), how many documents named in the question start it besides
    the searches' starts (`question_roots`, found by `roots`), the search that follows up
    its best starts after the run (`requery`, `hoprag.requery`; None: none) and how its
    candidates are ranked (`ranking`; None: by path score). `aretrieve` runs it all."""

    name: str
    edges: tuple[tuple[str, str], ...]
    settings: Mapping[str, Any] = field(default_factory=dict, hash=False)
    question_roots: int = 0
    ranking: LinearRanking | None = None
    requery: Requery | None = None

    def strategy(self, **overrides: Any) -> Strategy:
        """The recipe's Beam, with `overrides` (None values ignored) replacing its settings;
        a bad setting is an `InvalidInputError` naming it."""
        given = {k: v for k, v in overrides.items() if v is not None}
        return Beam(**{**self.settings, **given})

    def roots(self, titles: TitleLinker, question: str) -> list[str]:
        """The ids of the documents whose titles `question` names (`titles`: a TitleLinker
        over the corpus's titles, `hoprag.text.document_titles`), in order of first mention,
        at most `question_roots`: the traversal's `initial_root_ids`."""
        return titles.links(question)[: self.question_roots] if self.question_roots else []

    def pool_size(self, k: int) -> int:
        """The `select_k` of a run that answers with `k` documents: the ranking's whole pool
        (at least `k`), or `k` when the path score ranks."""
        return max(k, self.ranking.pool) if self.ranking is not None else k

    def rank(
        self, question: str, nodes: Sequence[Node], roots: Collection[str], k: int
    ) -> list[Node]:
        """The `k` best of a run's `nodes` (its pool, `pool_size(k)` admitted) by the
        recipe's ranking (`_rank_score`), or the first `k` as admitted when it has none."""
        if self.ranking is None:
            return list(nodes)[:k]
        return self.ranking.rank(question, nodes, roots, k=k)

    async def apool(
        self,
        question: str,
        *,
        store: Any,
        k: int | None = None,
        titles: TitleLinker | None = None,
        edges: Sequence[Any] | None = None,
        settings: Mapping[str, Any] | None = None,
        **traverse: Any,
    ) -> Pool:
        """The candidates `rank` chooses `k` from: roots named by the question (`titles`, built
        from `store` when not given), the traversal over `edges` (default: the recipe's) with
        its Beam (`settings` override them, as `strategy` takes them) admitting
        `pool_size(k)`, then the re-query's finds (`requery`), with the run's stats.
        `traverse` goes to `atraverse` (`query_embedding`, `filter`, ...)."""
        from hoprag.embeddings.base import aembed_query_vector
        from hoprag.engine.traversal import atraverse

        given = {key: v for key, v in (settings or {}).items() if v is not None}
        want = k if k is not None else given.get("select_k", self.settings.get("select_k", 5))
        want = check_int("k", want, minimum=1, maximum=MAX_K)
        strategy = self.strategy(**{**given, "select_k": self.pool_size(want)})
        linker = titles if titles is not None else await atitles(store)
        roots = self.roots(linker, question)
        followed = list(self.edges if edges is None else edges)
        vector = traverse.pop("query_embedding", None)
        if vector is not None:  # checked once for the traversal and the re-query
            vector = checked_vector(vector, what="query embedding")
        elif self.requery is not None:
            vector = await aembed_query_vector(store.embedding, question)
        result = await atraverse(question, store=store, edges=followed, strategy=strategy,
                                 initial_root_ids=roots, query_embedding=vector,
                                 **traverse)  # fmt: skip
        flt = traverse.get("filter")
        found = await self.arequery(question, result, store=store, edges=followed,
                                   query_embedding=vector, filter=flt)  # fmt: skip
        return Pool([*result, *found], roots, want, result.stats)

    async def arequery(
        self,
        question: str,
        nodes: Sequence[Node],
        *,
        store: Any,
        edges: Any,
        query_embedding: Sequence[float] | None = None,
        filter: Any = None,
    ) -> list[Node]:
        """The recipe's re-query's finds from a run's `nodes` (none without
        `requery`), searched within `filter`, scored against `query_embedding` (the
        question's, embedded when not given), given the edges of `edges`."""
        if self.requery is None:
            return []
        from hoprag.edges import parse_edges
        from hoprag.embeddings.base import aembed_query_vector

        vector = query_embedding
        if vector is None:
            vector = await aembed_query_vector(store.embedding, question)
        query = await store.aprepare(vector, filter, include_embeddings=False)
        return await self.requery.arequery(question, nodes, query, parse_edges(edges))

    async def aretrieve(self, question: str, **arguments: Any) -> list[Node]:
        """The recipe's `k` documents for `question` (default: its `select_k`), best first:
        `apool`'s candidates for the same `arguments` (`store`, `k`, `titles`, `edges`,
        `settings` and `atraverse`'s own: `query_embedding`, `filter`, ...), then the
        ranking (`rank`)."""
        pool = await self.apool(question, **arguments)
        return self.rank(question, pool.nodes, pool.roots, pool.k)

    def retrieve(self, question: str, **kwargs: Any) -> list[Node]:
        """Synchronous `aretrieve` (`hoprag.sync.run_sync`)."""
        from hoprag.sync import run_sync

        return run_sync(functools.partial(self.aretrieve, question, **kwargs))


MULTIHOP = Recipe(
    "multihop",
    edges=(("mentions", "$id"), ("$id", "mentions"), ("phrases", "phrases")),
    settings={
        "select_k": 5,
        "start_k": 3,
        "lexical_k": 2,
        "adjacent_k": 3,
        "max_depth": 1,
        "beam_width": 5,
        "decay": 0.5,
        "lexical_weight": 0.3,
        "edge_weights": {"mentions": 0.8, "phrases": 0.7},
    },
    question_roots=3,
    requery=Requery(starts=2, per_start=2, max_holders=50, search_k=12),
    # Fitted by scripts/fit_ranking.py (C 1, MuSiQue weight 1: the best mean recall@5 of MuSiQue
    # train and 2Wiki's non-sample questions under 5-fold cross-validation) on those questions
    # only; docs/quality.md, "The ranking".
    ranking=LinearRanking(
        {
            "coverage": -3.0851,
            "residual": 3.0286,
            "union": 2.6768,
            "similarity": 1.2184,
            "hop": -2.2204,
            "root": 3.7514,
            "parent_relevance": 3.7832,
            "path_score": 8.5618,
            "linked": 1.3387,
            "hop_coverage": 2.8255,
            "hop_residual": 3.0924,
            "hop_union": -0.9606,
            "hop_similarity": 2.4224,
            "search_score": 2.5325,
            "edge:$id": -0.2455,
            "edge:mentions": -3.6393,
            "edge:phrases": -1.6869,
            "edge:$search": 0.2188,
        },
        pool=40,
    ),
)
RECIPES: Mapping[str, Recipe] = {MULTIHOP.name: MULTIHOP}
"""Every recipe by name."""


async def atitles(store: Any, title_field: str = "title") -> TitleLinker:
    """A TitleLinker over the titles of every document `store` holds (read a page at a time
    with `adocuments`; a document's title is its metadata `title_field`, else its id), for
    `Recipe.roots`."""
    from hoprag.text.linking import TitleLinker, document_titles

    titles = [t async for page in store.adocuments() for t in document_titles(page, title_field)]
    return TitleLinker(titles)


def recipe(name: Any) -> Recipe:
    """The recipe called `name`, or `InvalidInputError` naming the recipes there are."""
    found = RECIPES.get(name) if isinstance(name, str) else None
    if found is None:
        raise invalid("recipe", name, f"one of {', '.join(map(repr, RECIPES))}")
    return found
