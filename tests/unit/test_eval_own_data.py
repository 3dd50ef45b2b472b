"""`hoprag eval --dataset jsonl` on your own passages and questions, as a user runs it: the
same figures as the benchmark reader on the same passages and gold, your metadata kept for
your own edges, and malformed files refused before any work, naming the record."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hoprag.errors import InvalidInputError
from hoprag.evaluation import load_2wiki, load_jsonl_set
from hoprag.evaluation.methods import passage_documents

PEOPLE = ["Ada Vale", "Bo Diaz", "Cy Moss", "Di Lee", "Ed Wood", "Flo Park", "Gus Hale"]


def wiki_files(d: Path) -> None:
    """A small 2Wiki set: people whose pages name their mothers, questions about mothers'
    birthplaces (two gold pages each), and one question whose subject is missing."""
    corpus = []
    for i, name in enumerate(PEOPLE):
        mother = PEOPLE[(i + 1) % len(PEOPLE)]
        town = f"Town{i}"
        corpus.append({"title": name, "text": f"{name} is the child of {mother}. Born in {town}."})
    corpus.append({"title": "Ed Wood (film)", "text": "A film about a director."})
    questions: list[dict[str, Any]] = [
        {"id": f"q{i}", "question_type": "compositional",
         "question": f"Where was the mother of {name} born?",
         "evidence": [[name, "mother", PEOPLE[(i + 1) % len(PEOPLE)]],
                      [PEOPLE[(i + 1) % len(PEOPLE)], "place of birth", f"Town{(i + 1) % 7}"]]}
        for i, name in enumerate(PEOPLE)
    ]  # fmt: skip
    questions.append({"id": "gone", "question": "?", "evidence": [["Nobody", "x", "y"]]})
    (d / "2wiki_corpus.json").write_text(json.dumps(corpus))
    (d / "2wiki_questions.json").write_text(json.dumps(questions))


def as_own_files(wiki: Path, own: Path) -> None:
    """The 2Wiki set's passages and gold (as its reader maps them) as your own JSON lines."""
    s = load_2wiki(wiki / "2wiki_corpus.json", wiki / "2wiki_questions.json")
    passages = [{"id": p.id, "title": p.title, "text": p.text} for p in s.passages]
    questions = [{"id": q.id, "question": q.text, "gold": list(q.gold), "type": q.type}
                 for q in s.questions]  # fmt: skip
    (own / "passages.jsonl").write_text("".join(json.dumps(p) + "\n" for p in passages))
    (own / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))


def run_eval(dataset: str, data: Path, out: Path) -> dict[str, Any]:
    r = subprocess.run(
        [sys.executable, "-m", "hoprag.cli", "eval", "--dataset", dataset, "--data", str(data),
         "--embedding", "hash:32", "--json", str(out)],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return json.loads(out.read_text())


def _without_timings(figures: dict[str, Any]) -> dict[str, Any]:
    methods = {
        name: {k: v for k, v in m.items() if "ms" not in k}
        for name, m in figures["methods"].items()
    }
    kept = {k: v for k, v in figures.items() if k not in ("dataset", "dropped", "methods")}
    return {**kept, "methods": methods, "embedding_ms_per_query": None}


def test_your_own_files_give_the_benchmark_readers_figures_for_the_same_passages_and_gold(
    tmp_path: Path,
) -> None:
    wiki, own = tmp_path / "wiki", tmp_path / "own"
    wiki.mkdir()
    own.mkdir()
    wiki_files(wiki)
    as_own_files(wiki, own)
    a = run_eval("2wiki", wiki, tmp_path / "a.json")
    b = run_eval("jsonl", own, tmp_path / "b.json")
    assert a["questions"] == [f"q{i}" for i in range(len(PEOPLE))]
    assert a["methods"]["recommended"]["recall@5"] > 0  # something to compare
    assert _without_timings(b) == _without_timings(a)
    assert b["dataset"] == "jsonl" and b["dropped"] == {"no gold passage": 0}


def test_your_metadata_is_kept_beside_the_title_and_untitled_passages_are_their_text(
    tmp_path: Path,
) -> None:
    (tmp_path / "passages.jsonl").write_text(
        json.dumps({"id": 1, "text": "Plain text.", "metadata": {"team": "red"}}) + "\n"
        + json.dumps({"id": "p2", "title": "Two", "text": "More."}) + "\n"
    )  # fmt: skip
    (tmp_path / "questions.jsonl").write_text(
        json.dumps({"id": "q", "question": "text?", "gold": [1, "p2"]}) + "\n"
        + json.dumps({"id": "none", "question": "nothing?", "gold": []}) + "\n"
    )  # fmt: skip
    s = load_jsonl_set(tmp_path / "passages.jsonl", tmp_path / "questions.jsonl")
    assert [q.gold for q in s.questions] == [("1", "p2")] and s.dropped == {"no gold passage": 1}
    docs, _ = passage_documents(s.passages)
    assert docs[0].content == "Plain text." and docs[0].metadata["team"] == "red"
    assert docs[1].content == "Two\n\nMore." and docs[1].metadata["title"] == "Two"


@pytest.mark.parametrize(
    ("passages", "questions", "says"),
    [
        ([{"id": "a", "text": "x"}, {"id": "a", "text": "y"}], [], "record 1: id \"a\" is the id"),
        ([{"id": "a"}], [], "record 0 has no text"),
        ([{"id": "a", "text": "x", "metadata": ["m"]}], [], "record 0: metadata must be an object"),
        ([{"id": "a", "text": "x", "metadata": {"mentions": []}}], [], "holds mentions"),
        ([{"id": "a", "text": "x", "title": 3}], [], "record 0: title must be a string"),
        ([{"id": "a", "text": "x"}], [{"id": "q", "question": "?", "gold": ["b"]}],
         'record 0: gold ["b"] names no passage'),
        ([{"id": "a", "text": "x"}], [{"id": "q", "question": "?", "gold": "a"}],
         "record 0: gold must be a list"),
        ([{"id": "a", "text": "x"}], [{"id": "q", "gold": ["a"]}], "record 0 has no question"),
    ],
)  # fmt: skip
def test_malformed_own_files_are_refused_naming_the_file_and_the_record(
    tmp_path: Path, passages: list[Any], questions: list[Any], says: str
) -> None:
    questions = questions or [{"id": "q", "question": "?", "gold": ["a"]}]
    (tmp_path / "passages.jsonl").write_text("".join(json.dumps(p) + "\n" for p in passages))
    (tmp_path / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    with pytest.raises(InvalidInputError, match="jsonl: ") as e:
        load_jsonl_set(tmp_path / "passages.jsonl", tmp_path / "questions.jsonl")
    assert says in str(e.value)
    r = subprocess.run(
        [sys.executable, "-m", "hoprag.cli", "eval", "--dataset", "jsonl", "--data",
         str(tmp_path), "--embedding", "hash:16", "--json", str(tmp_path / "out.json")],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert r.returncode == 2 and says in r.stderr, r.stderr
    assert not (tmp_path / "out.json").exists()


def test_eval_jsonl_without_its_two_files_names_the_missing_one(tmp_path: Path) -> None:
    (tmp_path / "passages.jsonl").write_text(json.dumps({"id": "a", "text": "x"}) + "\n")
    r = subprocess.run(
        [sys.executable, "-m", "hoprag.cli", "eval", "--dataset", "jsonl", "--data",
         str(tmp_path), "--json", str(tmp_path / "out.json")],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert r.returncode == 2 and "has no questions.jsonl" in r.stderr, r.stderr


def own_files_with_links(d: Path) -> dict[str, str]:
    """Passages about people that name nobody: each one's `parent` metadata holds the id of
    the parent's passage; questions ask where a person's parent was born (gold: the person's
    passage and the parent's). Returns each question's parent passage id."""
    passages, questions, parents = [], [], {}
    for i, name in enumerate(PEOPLE):
        parent = f"p{(i + 3) % len(PEOPLE)}"
        passages.append({"id": f"p{i}", "title": name, "text": f"{name} grew up in Town{i}.",
                         "metadata": {"parent": parent}})  # fmt: skip
        questions.append({"id": f"q{i}", "question": f"Where was the parent of {name} born?",
                          "gold": [f"p{i}", parent]})  # fmt: skip
        parents[f"q{i}"] = parent
    (d / "passages.jsonl").write_text("".join(json.dumps(p) + "\n" for p in passages))
    (d / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    return parents


def eval_cli(data: Path, out: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hoprag.cli", "eval", "--dataset", "jsonl", "--data", str(data),
         "--embedding", "hash:32", "--json", str(out), *flags],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip


def test_your_own_edges_run_beside_the_recipe_and_reach_what_its_edges_cannot(
    tmp_path: Path,
) -> None:
    parents = own_files_with_links(tmp_path)
    plain = eval_cli(tmp_path, tmp_path / "plain.json")
    assert plain.returncode == 0, plain.stderr
    r = eval_cli(tmp_path, tmp_path / "own.json", "--edges", "parent:$id", "--recipe",
                 "multihop")  # fmt: skip
    assert r.returncode == 0, r.stderr
    own, before = (
        json.loads((tmp_path / "own.json").read_text()),
        json.loads((tmp_path / "plain.json").read_text()),
    )
    assert list(own["methods"]) == ["vector", "lexical", "hybrid", "recommended", "edges"]
    assert own["edges"] == [["parent", "$id"]] and own["recipe"] == "multihop"
    assert "edges" not in before and list(before["methods"])[-1] == "recommended"
    # The recipe's figures do not change because your edges run beside it.
    assert own["methods"]["recommended"]["ids"] == before["methods"]["recommended"]["ids"]
    # Your edge reaches each parent's passage, which the text never names.
    for qid, got in zip(own["questions"], own["methods"]["edges"]["ids"], strict=True):
        assert parents[qid] in got[:5]
    assert own["methods"]["edges"]["recall@5"] == 1.0
    assert own["methods"]["edges"]["recall@5"] > own["methods"]["recommended"]["recall@5"]
    assert "\nedges " in r.stdout  # a row of the table


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--methods", "vector,edges"], "--methods edges needs --edges"),
        (["--edges", "parent:$id", "--methods", "vector"], "add it to --methods"),
        (["--edges", "parnet:$id"], "edges name 'parnet', held by none of the 7 passages; "
         "they hold mentions, parent, phrases, title"),
        (["--edges", "parent"], "parent"),
        (["--recipe", "nope"], "invalid choice: 'nope'"),
    ],
)  # fmt: skip
def test_bad_edge_flags_of_eval_exit_2_before_anything_is_embedded(
    tmp_path: Path, flags: list[str], says: str
) -> None:
    own_files_with_links(tmp_path)
    r = eval_cli(tmp_path, tmp_path / "out.json", *flags)
    assert r.returncode == 2 and says in r.stderr, r.stderr
    assert "passages," not in r.stdout  # refused before the run began
    assert not (tmp_path / "out.json").exists()
