#!/usr/bin/env python
"""Fit the multi-hop recipe's candidate ranking (`hoprag.reranking.LinearRanking`) on the
training questions of the public multi-hop data, and print its weights.

    .venv/bin/python scripts/fit_ranking.py --data ../shared/data [--cv]

Training questions only: MuSiQue's `train` file and the 2Wiki questions outside the
500-question sample `hoprag eval --questions 500 --seed 0` reports (HotpotQA's only file is
reported, so it is not used). For each question, the recipe's traversal and re-query
(`Recipe.apool`; MiniLM, MemoryStore, as `hoprag eval` runs it) give its whole candidate pool;
each candidate gets
`hoprag.reranking.features` and a label (gold passage or not). The weights are those of a
pairwise logistic regression (every gold candidate against every other of the same question,
both ways; features standardised, L2 penalty 1/C, solved by Newton's method), each question
weighing the same within its data set and MuSiQue's questions `--musique-weight` times
2Wiki's; divided by the standardisation's scales, they rank raw features. `--cv` prints
instead the 5-fold cross-validated recall@5 of each setting of a small grid (folds by
question, training questions only), the way the recipe's C and MuSiQue weight were chosen;
with `--requery STARTS,PER_START,MAX_HOLDERS`, over the pools of that re-query setting, the
way the recipe's was chosen (docs/quality.md)."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
from pathlib import Path
from typing import Any

import numpy as np

from hoprag.cli.common import make_embedding
from hoprag.embeddings.base import aembed_query
from hoprag.errors import InvalidInputError
from hoprag.evaluation import load_2wiki, load_musique
from hoprag.evaluation.methods import passage_documents
from hoprag.evaluation.run import sample_questions
from hoprag.recipes import MULTIHOP, Recipe, atitles
from hoprag.requery import Requery
from hoprag.reranking import FEATURES, features
from hoprag.stores import MemoryStore

EDGE_FEATURES = ("edge:$id", "edge:mentions", "edge:phrases", "edge:$search")
NAMES = (*FEATURES, *EDGE_FEATURES)
POOL = 40


@dataclasses.dataclass
class Question:
    """One training question's candidates: their features (rows), gold labels and ids."""

    dataset: str
    x: np.ndarray
    gold: np.ndarray
    golds: int


async def _questions(
    name: str, evalset: Any, asked: list[Any], embedding: Any, recipe: Recipe
) -> list[Question]:
    """Each asked question's candidate pool from the recipe's traversal, with features."""
    docs, _ = passage_documents(evalset.passages)
    store = MemoryStore(embedding)
    await store.aadd(docs)
    titles = await atitles(store)
    out = []
    for i, q in enumerate(asked, 1):
        vec = await aembed_query(embedding, q.text)
        pool = await recipe.apool(q.text, store=store, k=POOL, titles=titles,
                                    query_embedding=vec)  # fmt: skip
        nodes, roots = pool.nodes, pool.roots
        rows = features(q.text, nodes, roots)
        x = np.array([[r.get(n, 0.0) for n in NAMES] for r in rows], dtype=float).reshape(
            -1, len(NAMES)
        )
        gold = np.array([n.id in q.gold for n in nodes], dtype=bool)
        out.append(Question(name, x, gold, len(set(q.gold))))
        if i % 100 == 0:
            print(f"{name}: {i}/{len(asked)} questions", file=sys.stderr)
    return out


def training_questions(data: Path, embedding: Any, recipe: Recipe = MULTIHOP) -> list[Question]:
    """MuSiQue `train` and 2Wiki's questions outside the reported sample, with the features
    of `recipe`'s pools."""
    # The corpus is every MuSiQue file's paragraphs, as `hoprag eval` holds it; the questions
    # are the train file's.
    musique = load_musique(sorted(data.glob("musique*.json*")))
    train = {q.id for q in load_musique(sorted(data.glob("musique*train*.json*"))).questions}
    wiki = load_2wiki(
        next(data.glob("2wiki*corpus*.json")), next(data.glob("2wiki*question*.json"))
    )
    reported = {q.id for q in sample_questions(wiki.questions, count=500, seed=0)}
    rest = [q for q in wiki.questions if q.id not in reported]
    asked = [q for q in musique.questions if q.id in train]
    found = asyncio.run(_questions("musique", musique, asked, embedding, recipe))
    return found + asyncio.run(_questions("2wiki", wiki, rest, embedding, recipe))


def _pairs(qs: list[Question], weights: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """Differences gold - other (and other - gold), each pair weighted so that a question
    sums to its data set's weight."""
    diffs, w = [], []
    for q in qs:
        pos, neg = np.where(q.gold)[0], np.where(~q.gold)[0]
        if not len(pos) or not len(neg):
            continue
        d = (q.x[pos][:, None, :] - q.x[neg][None, :, :]).reshape(-1, q.x.shape[1])
        diffs.append(d)
        w.append(np.full(len(d), weights[q.dataset] / len(d)))
    return np.vstack(diffs), np.concatenate(w)


def fit(qs: list[Question], c: float, weights: dict[str, float]) -> np.ndarray:
    """The raw-feature weights of the pairwise logistic regression (see the module docstring)."""
    allx = np.vstack([q.x for q in qs])
    scale = allx.std(axis=0)
    scale[scale == 0] = 1.0
    d, w = _pairs(qs, weights)
    d = d / scale
    w = w * len(w) / w.sum()
    # Both orders of a pair: label 1 for gold - other, 0 for its negation (the logistic loss of
    # -d with label 0 equals that of d with label 1), so twice the loss of d with label 1.
    coef = np.zeros(d.shape[1])
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(d @ coef)))
        grad = coef - 2 * c * d.T @ (w * (1 - p))
        hess = np.eye(len(coef)) + 2 * c * (d * (w * p * (1 - p))[:, None]).T @ d
        step = np.linalg.solve(hess, grad)
        coef -= step
        if np.abs(step).max() < 1e-10:
            break
    return coef / scale


def recall_at_5(qs: list[Question], coef: np.ndarray) -> float:
    """Mean recall@5 of the pools ranked by `coef` (gold outside the pool counts as missed)."""
    got = []
    for q in qs:
        order = np.argsort(-(q.x @ coef), kind="stable")[:5]
        got.append(q.gold[order].sum() / q.golds)
    return float(np.mean(got))


def cross_validate(
    qs: list[Question], c: float, weights: dict[str, float], folds: int = 5
) -> dict[str, float]:
    """Recall@5 per data set on held-out folds (folds drawn by question, seed 0)."""
    fold = np.random.default_rng(0).integers(0, folds, len(qs))
    held: dict[str, list[float]] = {}
    for f in range(folds):
        coef = fit([q for q, k in zip(qs, fold, strict=True) if k != f], c, weights)
        for name in weights:
            test = [q for q, k in zip(qs, fold, strict=True) if k == f and q.dataset == name]
            held.setdefault(name, []).append(recall_at_5(test, coef))
    return {name: round(float(np.mean(v)), 4) for name, v in held.items()}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, type=Path, help="the directory of the data files")
    ap.add_argument("--c", type=float, default=1.0, help="inverse L2 penalty (default 1)")
    ap.add_argument("--musique-weight", type=float, default=1.0,
                    help="a MuSiQue question's weight against a 2Wiki one's")  # fmt: skip
    ap.add_argument("--cv", action="store_true", help="cross-validate a grid instead")
    ap.add_argument("--requery", metavar="STARTS,PER_START,MAX_HOLDERS",
                    help="another re-query setting's pools (default: the recipe's)")  # fmt: skip
    args = ap.parse_args(argv)
    recipe = MULTIHOP
    if args.requery:
        parts = args.requery.split(",")
        if len(parts) != 3 or not all(p.strip().isdigit() for p in parts):
            ap.error(f"--requery: {args.requery!r} is not three ints STARTS,PER_START,MAX_HOLDERS")
        starts, per_start, most = (int(p) for p in parts)
        try:
            requery = Requery(starts=starts, per_start=per_start, max_holders=most)
        except InvalidInputError as e:
            ap.error(f"--requery: {e}")
        recipe = dataclasses.replace(MULTIHOP, requery=requery)
    qs = training_questions(args.data, make_embedding("minilm"), recipe)
    if args.cv:
        for c in (0.01, 0.1, 1.0):
            for mw in (1.0, 3.0, 10.0):
                got = cross_validate(qs, c, {"musique": mw, "2wiki": 1.0})
                mean = (got["musique"] + got["2wiki"]) / 2
                print(f"C {c:<5} musique weight {mw:<5} recall@5 {got}  mean {mean:.4f}")
        return 0
    coef = fit(qs, args.c, {"musique": args.musique_weight, "2wiki": 1.0})
    print("weights = {")
    for name, value in zip(NAMES, coef, strict=True):
        print(f"    {name!r}: {value:.4f},")
    print("}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
