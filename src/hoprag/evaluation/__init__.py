"""Multi-hop retrieval quality: the QA formats `hoprag eval` reads (`formats`) and the
measures it reports (`metrics`)."""

from hoprag.evaluation.formats import (
    EvalSet,
    Passage,
    Question,
    load_2wiki,
    load_hotpotqa,
    load_jsonl_set,
    load_musique,
)
from hoprag.evaluation.metrics import bootstrap_interval, recall_at_k

__all__ = [
    "EvalSet",
    "Passage",
    "Question",
    "bootstrap_interval",
    "load_2wiki",
    "load_hotpotqa",
    "load_jsonl_set",
    "load_musique",
    "recall_at_k",
]
