"""The multi-hop QA formats of `hoprag eval` (`hoprag.evaluation`), on small files the tests
write: 2Wiki's gold passages from evidence subjects (exact, qualified, narrowed, dropped),
MuSiQue's and HotpotQA's corpora as the deduplicated union of their paragraphs, and every
problem with a file an InvalidInputError naming it; recall@k and the bootstrap interval."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hoprag.errors import InvalidInputError
from hoprag.evaluation import (
    bootstrap_interval,
    load_2wiki,
    load_hotpotqa,
    load_musique,
    recall_at_k,
)


def write(path: Path, value: object, lines: bool = False) -> Path:
    if lines:
        assert isinstance(value, list)
        path.write_text("".join(json.dumps(v) + "\n" for v in value), encoding="utf-8")
    else:
        path.write_text(json.dumps(value), encoding="utf-8")
    return path


def test_2wiki_gold_passages_come_from_the_evidence_subjects(tmp_path: Path) -> None:
    corpus = write(tmp_path / "corpus.json", [
        {"title": "Lothair II", "text": "King of Lotharingia."},
        {"title": "Ermengarde of Tours", "text": "Died 20 March 851."},
        {"title": "Heat (1995 film)", "text": "Directed by Michael Mann."},
        {"title": "Heat (1986 film)", "text": "Directed by Dick Richards."},
        {"title": "Mercury (planet)", "text": "The smallest planet."},
        {"title": "Mercury (element)", "text": "A metal, Hg."},
    ])  # fmt: skip
    questions = write(tmp_path / "questions.json", [
        {"id": "q1", "question_type": "compositional", "question": "When did Lothair Ii's "
         "mother die?", "evidence": [["LOTHAIR II", "mother", "Ermengarde of Tours"],
                                     ["Ermengarde of Tours", "date of death", "20 March 851"]]},
        {"id": "q2", "question_type": "comparison", "question": "Who directed the 1995 film "
         "Heat?", "evidence": [["Heat", "director", "Michael Mann"]]},
        {"id": "q3", "question_type": "comparison", "question": "Which metal is Mercury?",
         "evidence": [["Mercury", "symbol", "Hg"]]},
        {"id": "q4", "question_type": "inference", "question": "Who is X's father?",
         "evidence": [["Lothair II", "father", "X"], ["Nobody Here", "child", "X"]]},
        {"id": "q5", "question_type": "inference", "question": "Which Heat?",
         "evidence": [["Heat", "genre", "crime"]]},
    ])  # fmt: skip
    s = load_2wiki(corpus, questions)
    assert [p.id for p in s.passages][:2] == ["Lothair II", "Ermengarde of Tours"]
    gold = {q.id: q.gold for q in s.questions}
    assert gold == {
        "q1": ("Lothair II", "Ermengarde of Tours"),
        "q2": ("Heat (1995 film)",),  # the qualifier's words are in the question
        "q3": ("Mercury (element)",),  # the triple's object is in the passage
    }
    assert s.dropped == {"subject not in the corpus": 1, "subject ambiguous": 1,
                         "no gold passage": 0}  # fmt: skip
    assert {q.id: q.type for q in s.questions}["q2"] == "comparison"


def test_musique_corpus_is_the_deduplicated_union_and_gold_the_supporting_paragraphs(
    tmp_path: Path,
) -> None:
    def rec(qid: str, paras: list[tuple[str, str, bool]]) -> dict:
        return {"id": qid, "question": f"question {qid}?", "paragraphs": [
            {"idx": i, "title": t, "paragraph_text": x, "is_supporting": s}
            for i, (t, x, s) in enumerate(paras)]}  # fmt: skip

    dev = write(tmp_path / "dev.json", [
        rec("2hop__1_2", [("A", "a text", True), ("B", "b text", True), ("C", "c", False)]),
    ])  # fmt: skip
    train = write(tmp_path / "train.jsonl", [
        rec("3hop1__3_4_5", [("A", "a text", False), ("A", "another A", True)]),
    ], lines=True)  # fmt: skip
    s = load_musique([dev, train])
    assert [p.id for p in s.passages] == ["A", "B", "C", "A [2]"]
    assert [(q.type, q.gold) for q in s.questions] == [("2hop", ("A", "B")),
                                                       ("3hop1", ("A [2]",))]  # fmt: skip


def test_hotpotqa_gold_is_the_context_paragraphs_of_the_supporting_facts(tmp_path: Path) -> None:
    f = write(tmp_path / "hotpot.json", [
        {"_id": "h1", "type": "bridge", "question": "If Gallu is a demon Lilu is what?",
         "context": [["Alû", ["Alû is a demon.", " It has no mouth."]],
                     ["Lilu (mythology)", ["Lilu is a demon."]], ["Other", ["Noise."]]],
         "supporting_facts": [["Lilu (mythology)", 0], ["Alû", 1]]},
        {"_id": "h2", "type": "comparison", "question": "?",
         "context": [["Other", ["Noise."]]], "supporting_facts": [["Other", 0]]},
    ])  # fmt: skip
    s = load_hotpotqa([f])
    assert [p.id for p in s.passages] == ["Alû", "Lilu (mythology)", "Other"]
    assert s.passages[0].text == "Alû is a demon. It has no mouth."
    assert [(q.id, q.type, q.gold) for q in s.questions] == [
        ("h1", "bridge", ("Alû", "Lilu (mythology)")),
        ("h2", "comparison", ("Other",)),
    ]


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "no such file"),
        ("not json at all {", "not JSON or JSON lines"),
        ('{"title": "x"}', "not a non-empty list of records"),
        ("[]", "not a non-empty list of records"),
        ('[{"title": "x"}]', "record 0 has no text"),
    ],
)
def test_a_bad_data_file_is_invalid_input_naming_file_and_format(
    tmp_path: Path, content: str | None, says: str
) -> None:
    corpus = tmp_path / "corpus.json"
    if content is not None:
        corpus.write_text(content)
    questions = write(tmp_path / "q.json", [{"id": "q", "question": "?", "evidence": []}])
    with pytest.raises(InvalidInputError) as e:
        load_2wiki(corpus, questions)
    assert str(corpus) in str(e.value) and says in str(e.value)
    assert "expected a JSON list of {title, text}" in str(e.value)


def test_recall_at_k_is_the_share_of_gold_in_the_top_k() -> None:
    assert recall_at_k(["a", "b", "c"], ["a", "c"], 2) == 0.5
    assert recall_at_k(["a", "b", "c"], ["a", "c"], 3) == 1.0
    assert recall_at_k(["x"], ["a", "a"], 5) == 0.0
    with pytest.raises(InvalidInputError, match="gold must be at least one gold passage id"):
        recall_at_k(["a"], [], 5)  # no gold is no recall, not a perfect one
    with pytest.raises(InvalidInputError, match="k must be an int of at least 1"):
        recall_at_k(["a"], ["a"], 0)


def test_the_bootstrap_interval_brackets_the_mean_and_is_reproducible() -> None:
    values = [1.0] * 60 + [0.0] * 40
    lo, hi = bootstrap_interval(values)
    assert lo < 0.6 < hi and 0.45 < lo and hi < 0.75
    assert bootstrap_interval(values) == (lo, hi)
    assert bootstrap_interval([0.5] * 10) == (0.5, 0.5)
    with pytest.raises(InvalidInputError, match="values must be at least one value"):
        bootstrap_interval([])


def test_questions_without_gold_passages_are_dropped_with_the_reason_not_scored(
    tmp_path: Path,
) -> None:
    hotpot = write(tmp_path / "hotpot.json", [
        {"_id": "h1", "question": "?", "context": [["A", ["a."]]], "supporting_facts": [["A", 0]]},
        {"_id": "h2", "question": "?", "context": [["B", ["b."]]], "supporting_facts": []},
        {"_id": "h3", "question": "?", "context": [["C", ["c."]]], "supporting_facts": [["Z", 0]]},
    ])  # fmt: skip
    s = load_hotpotqa([hotpot])
    assert [q.id for q in s.questions] == ["h1"] and s.dropped == {"no gold passage": 2}
    assert [p.id for p in s.passages] == ["A", "B", "C"]  # their paragraphs stay in the corpus
    musique = write(tmp_path / "musique.json", [
        {"id": "2hop__1", "question": "?", "paragraphs": [
            {"title": "A", "paragraph_text": "a", "is_supporting": True}]},
        {"id": "2hop__2", "question": "?", "paragraphs": [
            {"title": "B", "paragraph_text": "b", "is_supporting": False}]},
    ])  # fmt: skip
    m = load_musique([musique])
    assert [q.id for q in m.questions] == ["2hop__1"] and m.dropped == {"no gold passage": 1}
    corpus = write(tmp_path / "corpus.json", [{"title": "A", "text": "a"}])
    questions = write(tmp_path / "q.json", [
        {"id": "w1", "question": "?", "evidence": [["A", "r", "o"]]},
        {"id": "w2", "question": "?", "evidence": []},
    ])  # fmt: skip
    w = load_2wiki(corpus, questions)
    assert [q.id for q in w.questions] == ["w1"] and w.dropped["no gold passage"] == 1


def _hotpot(**change: object) -> dict[str, object]:
    rec: dict[str, object] = {"_id": "h1", "question": "?", "context": [["A", ["a."]]],
                              "supporting_facts": [["A", 0]]}  # fmt: skip
    return rec | change


def _musique(**change: object) -> dict[str, object]:
    para = {"title": "A", "paragraph_text": "a", "is_supporting": True}
    return {"id": "2hop__1", "question": "?", "paragraphs": [para]} | change


@pytest.mark.parametrize(
    ("load", "record", "says"),
    [
        ("hotpotqa", _hotpot(context=[["A"]]), "context[0] must be [title, [sentence, ...]]"),
        ("hotpotqa", _hotpot(context=["A"]), "context[0] must be [title, [sentence, ...]]"),
        ("hotpotqa", _hotpot(context={"A": 1}), "context must be a list of [title"),
        ("hotpotqa", _hotpot(supporting_facts=[3]), "supporting_facts[0] must be [title, sen"),
        ("hotpotqa", _hotpot(supporting_facts=[[]]), "supporting_facts[0] must be [title, sen"),
        ("hotpotqa", _hotpot(question=None), "question must be a string, found null"),
        ("hotpotqa", _hotpot(_id=None), "_id (or id) must be a string or number, found null"),
        ("musique", _musique(paragraphs=["text"]), "paragraphs[0] must be {title, paragraph_t"),
        ("musique", _musique(paragraphs=[{"title": "A"}]), "paragraphs[0] must be {title"),
        ("musique", _musique(id=["x"]), "id must be a string or number"),
        ("2wiki", {"id": "w", "question": "?", "evidence": [3]}, "evidence[0] must be [subject"),
        ("2wiki", {"id": "w", "question": "?", "evidence": [[]]}, "evidence[0] must be [subj"),
        ("2wiki", {"id": "w", "question": "?", "evidence": "A"}, "evidence must be a list of"),
    ],
)
def test_a_malformed_record_is_invalid_input_naming_file_record_and_shape_not_a_traceback(
    tmp_path: Path, load: str, record: dict[str, object], says: str
) -> None:
    wiki = {"id": "w0", "question": "?", "evidence": [["A", "r", "o"]]}
    good = {"hotpotqa": _hotpot(_id="h0"), "musique": _musique(id="2hop__0"), "2wiki": wiki}[load]
    f = write(tmp_path / "data.json", [good, record])
    with pytest.raises(InvalidInputError) as e:
        if load == "2wiki":
            load_2wiki(write(tmp_path / "corpus.json", [{"title": "A", "text": "a"}]), f)
        else:
            (load_hotpotqa if load == "hotpotqa" else load_musique)([f])
    message = str(e.value)
    assert f"{f}: record 1: {says}" in message and "; expected " in message


def test_a_set_whose_every_question_was_dropped_is_invalid_input_saying_why(
    tmp_path: Path,
) -> None:
    f = write(tmp_path / "hotpot.json", [_hotpot(supporting_facts=[]), _hotpot(_id="h2",
              supporting_facts=[["Z", 0]])])  # fmt: skip
    with pytest.raises(InvalidInputError) as e:
        load_hotpotqa(iter([f]))
    assert f"{f}: every question was dropped (2 no gold passage)" in str(e.value)
    corpus = write(tmp_path / "corpus.json", [{"title": "A", "text": "a"}])
    questions = write(tmp_path / "q.json", [{"id": "w", "question": "?", "evidence": [["Z", "r",
                      "o"]]}])  # fmt: skip
    with pytest.raises(InvalidInputError) as e:
        load_2wiki(corpus, questions)
    assert f"{questions}: every question was dropped (1 subject not in the corpus)" in str(e.value)
