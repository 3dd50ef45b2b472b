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
`hoprag query --recipe` do): a question's own entities are often the first hop's pages."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hoprag.errors import invalid
from hoprag.strategies import Beam
from hoprag.strategies.base import Strategy

if TYPE_CHECKING:
    from hoprag.text.linking import TitleLinker

__all__ = ["MULTIHOP", "RECIPES", "Recipe", "atitles", "recipe"]


@dataclass(frozen=True)
class Recipe:
    """A named traversal: its edges, its Beam settings (`strategy` makes the strategy, with
    any setting overridden) and how many documents named in the question start it besides
    the searches' starts (`question_roots`, found by `roots`)."""

    name: str
    edges: tuple[tuple[str, str], ...]
    settings: Mapping[str, Any] = field(default_factory=dict, hash=False)
    question_roots: int = 0

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
