"""Running methods over a data set's questions and summing up what they retrieved.

`aevaluate(evalset, methods=..., embedding=...)` builds a MemoryStore of the corpus (linked,
`methods.passage_documents`; or runs on a store given, which holds that corpus already),
embeds every question once, runs each method on each question and returns the figures
`hoprag eval --json` writes: per method recall@5 and recall@10 (means, with 95% bootstrap
intervals), milliseconds per query (mean and median; the method alone, the question's
embedding timed apart), results returned per query, the same recalls per question type, and
the ids each question got (`ids`, in the order of `questions`)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from hoprag.documents import Document
from hoprag.errors import invalid
from hoprag.evaluation.formats import EvalSet, Question
from hoprag.evaluation.methods import METHODS, Retrievers, passage_documents
from hoprag.evaluation.metrics import bootstrap_interval, recall_at_k
from hoprag.recipes import MULTIHOP, Recipe
from hoprag.text import LinkReport

K = 10


def check_methods(names: Sequence[str]) -> list[str]:
    """The method names, each known and given once."""
    unknown = [n for n in names if n not in METHODS]
    if unknown or not names or len(set(names)) != len(names):
        raise invalid("methods", ",".join(names), f"distinct names of {', '.join(METHODS)}")
    return list(names)


def sample_questions(
    questions: Sequence[Question],
    *,
    count: int | None = None,
    seed: int = 0,
    ids: Sequence[str] | None = None,
) -> list[Question]:
    """The questions to run, in file order: those named by `ids` (every id must be there), or
    `count` drawn with `seed`, or all."""
    if ids is not None:
        by_id = {q.id: q for q in questions}
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise invalid("question ids", missing[:5], "ids of questions in the data set")
        wanted = set(ids)
        return [q for q in questions if q.id in wanted]
    if count is None or count >= len(questions):
        return list(questions)
    if count < 1:
        raise invalid("questions", count, "an int of at least 1")
    chosen = set(random.Random(seed).sample(range(len(questions)), count))
    return [q for i, q in enumerate(questions) if i in chosen]


async def aevaluate(
    evalset: EvalSet,
    *,
    methods: Sequence[str],
    embedding: Any,
    questions: Sequence[Question] | None = None,
    progress: Callable[[int], None] | None = None,
    store: Any = None,
    corpus: tuple[list[Document], LinkReport] | None = None,
    recipe: Recipe = MULTIHOP,
    edges: Sequence[tuple[str, str]] | None = None,
) -> dict[str, Any]:
    """The figures of `methods` on `questions` (default: all of the set's); see the module
    docstring. With `store`, the methods run on it: it must hold `corpus` (the set's
    `passage_documents`, computed here when not given) and keep a lexical index. `recipe` is
    the `recommended` method's; `edges`, the `edges` method's (needed when it is asked)."""
    from hoprag.stores import MemoryStore

    names = check_methods(methods)
    if "edges" in names and edges is None:
        raise invalid("edges", None, "the edges the method `edges` follows, as (FROM, TO) pairs")
    asked = list(evalset.questions if questions is None else questions)
    docs, report = corpus if corpus is not None else passage_documents(evalset.passages)
    if store is None:
        store = MemoryStore(embedding)
        await store.aadd(docs)
    retrievers = Retrievers(store, recipe=recipe, edges=edges)
    vectors, embed_ms = await _embed_questions(embedding, asked)
    runs: dict[str, list[tuple[Question, list[str], float]]] = {n: [] for n in names}
    for i, (q, vec) in enumerate(zip(asked, vectors, strict=True), 1):
        for name in names:
            began = time.perf_counter()
            got = await retrievers.method(name)(q.text, vec, K)
            runs[name].append((q, got, (time.perf_counter() - began) * 1000))
        if progress is not None:
            progress(i)
    return {
        "dataset": evalset.name,
        "passages": len(evalset.passages),
        "questions": [q.id for q in asked],
        "dropped": dict(evalset.dropped),
        "linking": report.as_dict(),
        "recipe": recipe.name,
        **({"edges": [list(e) for e in edges]} if edges is not None else {}),
        "embedding_ms_per_query": round(embed_ms, 3),
        "methods": {name: summarise(runs[name]) for name in names},
    }


async def _embed_questions(
    embedding: Any, asked: Sequence[Question]
) -> tuple[list[list[float]], float]:
    """Each question's embedding and the mean milliseconds one took (the model loaded first,
    on the first question: a cached corpus never loaded it, and it is no question's cost)."""
    from hoprag.embeddings.base import aembed_query

    if asked:
        await aembed_query(getattr(embedding, "inner", embedding), asked[0].text)
    t0 = time.perf_counter()
    vectors = [await aembed_query(embedding, q.text) for q in asked]
    return vectors, (time.perf_counter() - t0) * 1000 / max(len(asked), 1)


def summarise(run: Sequence[tuple[Question, list[str], float]]) -> dict[str, Any]:
    """A method's figures over its questions: recalls with intervals, time, results, types."""
    at5 = [recall_at_k(got, q.gold, 5) for q, got, _ in run]
    at10 = [recall_at_k(got, q.gold, 10) for q, got, _ in run]
    ms = sorted(t for _, _, t in run)
    by_type: dict[str, dict[str, Any]] = {}
    for qtype in sorted({q.type for q, _, _ in run}):
        idx = [i for i, (q, _, _) in enumerate(run) if q.type == qtype]
        by_type[qtype] = {
            "questions": len(idx),
            "recall@5": _mean([at5[i] for i in idx]),
            "recall@10": _mean([at10[i] for i in idx]),
        }
    return {
        "recall@5": _mean(at5),
        "recall@10": _mean(at10),
        "ci95@5": [round(v, 4) for v in bootstrap_interval(at5)],
        "ci95@10": [round(v, 4) for v in bootstrap_interval(at10)],
        "ms_per_query": round(sum(ms) / len(ms), 3),
        "ms_p50": round(ms[len(ms) // 2], 3),
        "results_per_query": _mean([len(got) for _, got, _ in run]),
        "by_type": by_type,
        "ids": [got for _, got, _ in run],
    }


def _mean(values: Sequence[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0
