"""`hoprag eval` as a user runs it, on small HotpotQA and 2Wiki files the test writes: the
figures printed and written as JSON (questions, methods with recall@5/@10, intervals, time,
results, types), lexical retrieval finding what the files make findable, and bad input (a
missing directory or file, a wrong format, an unknown method) refused with exit 2 before any
work; rank fusion as defined."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from eval_files import hotpot_file
from hoprag.cli import main
from hoprag.evaluation.methods import RRF_C, fuse


def test_eval_prints_and_writes_the_figures_of_every_method(tmp_path: Path) -> None:
    hotpot_file(tmp_path / "hotpotqa_small.json")
    out = tmp_path / "figures.json"
    r = subprocess.run(
        [sys.executable, "-m", "hoprag.cli", "eval", "--dataset", "hotpotqa", "--data",
         str(tmp_path), "--embedding", "hash:32", "--json", str(out)],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "hotpotqa: 18 passages, 6 questions" in r.stdout
    assert "eval [########################] 6/6 100.0%" in r.stderr and "questions/s" in r.stderr
    figures = json.loads(out.read_text())
    assert figures["questions"] == [f"h{i}" for i in range(6)]
    assert set(figures["methods"]) == {"vector", "lexical", "hybrid", "recommended"}
    for name, m in figures["methods"].items():
        assert {"recall@5", "recall@10", "ms_per_query", "by_type"} <= set(m)
        # 18 passages: k results always, but BM25 finds only passages holding a query word
        assert m["results_per_query"] == (10.0 if name != "lexical" else 2.0)
        assert set(m["by_type"]) == {"bridge", "comparison"}
        assert m["ci95@5"][0] <= m["recall@5"] <= m["ci95@5"][1]
    # Each question's two rare words are in its gold paragraphs only.
    assert figures["methods"]["lexical"]["recall@5"] == 1.0
    for name in figures["methods"]:
        assert re.search(rf"^{name} +\d\.\d{{3}}", r.stdout, re.M)


def test_eval_runs_the_questions_asked_by_count_or_by_id(tmp_path: Path) -> None:
    hotpot_file(tmp_path / "hotpotqa_small.json")
    out = tmp_path / "f.json"
    base = ["eval", "--dataset", "hotpotqa", "--data", str(tmp_path), "--embedding", "hash:16",
            "--methods", "lexical", "--json", str(out)]  # fmt: skip
    assert main([*base, "--questions", "3", "--seed", "5"]) == 0
    drawn = json.loads(out.read_text())["questions"]
    assert len(drawn) == 3 and set(drawn) <= {f"h{i}" for i in range(6)}
    assert main([*base, "--questions", "3", "--seed", "5"]) == 0
    assert json.loads(out.read_text())["questions"] == drawn
    ids = tmp_path / "ids.txt"
    ids.write_text("h4\nh1\n")
    assert main([*base, "--question-ids", str(ids)]) == 0
    figures = json.loads(out.read_text())
    assert figures["questions"] == ["h1", "h4"] and list(figures["methods"]) == ["lexical"]


def test_eval_reads_2wiki_and_reports_dropped_questions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "2wiki_corpus.json").write_text(
        json.dumps(
            [{"title": "Lothair II", "text": "King."}, {"title": "Ermengarde", "text": "Queen."}]
        )
    )
    (tmp_path / "2wiki_questions.json").write_text(json.dumps([
        {"id": "a", "question_type": "compositional", "question": "Lothair II's mother?",
         "evidence": [["Lothair II", "mother", "Ermengarde"]]},
        {"id": "b", "question_type": "inference", "question": "?",
         "evidence": [["Somebody Else", "x", "y"]]}]))  # fmt: skip
    out = tmp_path / "f.json"
    assert main(["eval", "--dataset", "2wiki", "--data", str(tmp_path), "--embedding",
                 "hash:16", "--json", str(out)]) == 0  # fmt: skip
    assert "1 dropped" in capsys.readouterr().out
    figures = json.loads(out.read_text())
    assert figures["questions"] == ["a"] and figures["dropped"]["subject not in the corpus"] == 1


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"--data": "nowhere"}, "--data nowhere is not a directory"),
        ({"--dataset": "musique"}, "has no musique*.json or musique*.jsonl file"),
        ({"--dataset": "2wiki"}, "2wiki needs both"),
        ({"--methods": "vector,bogus"}, "methods must be distinct names of vector, lexical"),
        ({"--methods": "vector,vector"}, "methods must be distinct names"),
        ({"--questions": "0"}, "--questions must be >= 1"),
        ({"--ann-overquery": "2"}, "--ann-overquery applies to --store cassandra"),
        ({"--store": "cassandra", "--ann-overquery": "17"}, "--ann-overquery must be 1..16"),
        (
            {"--store": "cassandra", "--keyspace": "no-such"},
            "keyspace 'no-such' is not a plain name",
        ),
        ({"--json": "no/such/dir/out.json"}, "--json no/such/dir/out.json: the directory"),
        ({"--question-ids": "missing.txt"}, "--question-ids missing.txt cannot be read"),
    ],
)
def test_bad_eval_input_is_exit_2_naming_the_problem_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    change: dict[str, str], says: str,
) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    hotpot_file(tmp_path / "hotpotqa_small.json")
    given = {"--dataset": "hotpotqa", "--data": str(tmp_path), "--embedding": "minilm-absent",
             "--json": str(tmp_path / "out.json")} | change  # fmt: skip
    # The embedding is a bad spec on purpose: each check above must come first.
    code = main(["eval", *[x for kv in given.items() for x in kv]])
    assert code == 2
    assert says in capsys.readouterr().err
    assert not (tmp_path / "out.json").exists()


def test_a_file_in_the_wrong_format_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "hotpotqa_bad.json").write_text('[{"question": "?"}]')
    code = main(["eval", "--dataset", "hotpotqa", "--data", str(tmp_path), "--embedding",
                 "hash:8", "--json", str(tmp_path / "o.json")])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "hotpotqa_bad.json: record 0 has no context, supporting_facts" in err


def test_rank_fusion_sums_reciprocal_ranks() -> None:
    assert fuse([["a", "b", "c"], ["c", "a"]], 3) == ["a", "c", "b"]
    assert fuse([["a"], ["b"]], 2) == ["a", "b"]  # equal sums: first appearance
    score_c = 1 / (RRF_C + 3) + 1 / (RRF_C + 1)
    score_b = 1 / (RRF_C + 2)
    assert score_c > score_b


def test_eval_refuses_a_json_output_that_is_its_data_file_and_keeps_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = hotpot_file(tmp_path / "hotpotqa_small.json")
    before = data.read_bytes()
    (tmp_path / "link.json").symlink_to(data)
    for out in (data, tmp_path / "link.json"):
        code = main(["eval", "--dataset", "hotpotqa", "--data", str(tmp_path), "--embedding",
                     "hash:8", "--json", str(out)])  # fmt: skip
        assert code == 2
        err = capsys.readouterr().err
        assert f"--json {out} is the same file as the data file {data}" in err
        assert data.read_bytes() == before


def test_eval_drops_questions_without_gold_and_says_why_instead_of_scoring_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = hotpot_file(tmp_path / "hotpotqa_small.json")
    recs = json.loads(data.read_text())
    recs[0]["supporting_facts"] = []
    data.write_text(json.dumps(recs))
    out = tmp_path / "f.json"
    assert main(["eval", "--dataset", "hotpotqa", "--data", str(tmp_path), "--embedding",
                 "hash:16", "--methods", "lexical", "--json", str(out)]) == 0  # fmt: skip
    assert "5 questions (1 dropped: 1 no gold passage)" in capsys.readouterr().out
    figures = json.loads(out.read_text())
    assert "h0" not in figures["questions"] and len(figures["questions"]) == 5
    assert figures["dropped"] == {"no gold passage": 1}


@pytest.mark.parametrize(
    ("records", "says"),
    [
        ([{"_id": "h", "question": "?", "context": [["A"]], "supporting_facts": [["A", 0]]}],
         "record 0: context[0] must be [title, [sentence, ...]]"),
        ([{"_id": "h", "question": "?", "context": [["A", ["a"]]], "supporting_facts": []}],
         "every question was dropped (1 no gold passage)"),
    ],
)  # fmt: skip
def test_eval_of_malformed_or_all_dropped_records_is_exit_2_naming_the_file_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], records: list[dict], says: str
) -> None:
    data = tmp_path / "hotpotqa_bad.json"
    data.write_text(json.dumps(records))
    code = main(["eval", "--dataset", "hotpotqa", "--data", str(tmp_path), "--embedding",
                 "hash:8", "--json", str(tmp_path / "o.json")])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert f"{data}: {says}" in err and "Traceback" not in err and len(err.splitlines()) == 1
