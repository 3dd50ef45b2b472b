"""The `hoprag` command's argument handling: edge and filter syntax, clear one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hoprag.cli import (
    MISSING_SCORE,
    CliError,
    build_parser,
    field_scorer,
    main,
    make_strategy,
    parse_edges_arg,
    parse_filter_arg,
    similarity_scorer,
)
from hoprag.documents import Node
from hoprag.documents import Path as Path_
from hoprag.strategies import Scored


def test_edges_argument_parses_pairs_including_id() -> None:
    assert parse_edges_arg("keywords:keywords, links:$id") == [
        ("keywords", "keywords"),
        ("links", "$id"),
    ]


@pytest.mark.parametrize("bad", ["", "keywords", "a:", ":b", ","])
def test_malformed_edges_argument_is_a_clear_error(bad: str) -> None:
    with pytest.raises(CliError, match="--edges") as info:
        parse_edges_arg(bad)
    assert info.value.code == 2


def test_filter_values_are_json_when_they_parse_and_strings_otherwise() -> None:
    assert parse_filter_arg(["type=mammal", "legs=4", "wild=true", 'name="4"']) == {
        "type": "mammal",
        "legs": 4,
        "wild": True,
        "name": "4",
    }
    assert parse_filter_arg([]) is None
    with pytest.raises(CliError, match="FIELD=VALUE"):
        parse_filter_arg(["nofield"])


def test_bad_strategy_parameter_is_one_line_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["query", "q", "--table", "t", "--edges", "a:b", "--select-k", "-3"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("hoprag: error: bad eager parameters")
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_invalid_jsonl_is_reported_with_line_numbers_before_connecting(tmp_path: Path) -> None:
    f = tmp_path / "bad.jsonl"
    f.write_text(
        json.dumps({"id": "a", "text": "fine"})
        + "\n{not json\n"
        + json.dumps({"id": "b", "text": "x", "references": "a"})
        + "\n"
    )
    # No Cassandra at this address: the validation error must come before any connection.
    r = subprocess.run(
        [sys.executable, "-m", "hoprag.cli", "load", "jsonl", "--path", str(f),
         "--embedding", "hash:8", "--contact-points", "127.0.0.254:1"],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert r.returncode == 2
    assert "line 2" in r.stderr and "line 3, field 'references'" in r.stderr
    assert "Traceback" not in r.stderr


def test_unknown_embedding_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["query", "q", "--table", "t", "--edges", "a:b", "--embedding", "word2vec"])
    assert code == 2
    assert "unknown --embedding 'word2vec'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--consistency", "SOMETIMES", "--consistency must be one of"),
        ("--replication-factor", "0", "replication_factor must be 1..10"),
    ],
)
def test_bad_cluster_options_of_load_are_refused_before_connecting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str, message: str
) -> None:
    f = tmp_path / "one.jsonl"
    f.write_text(json.dumps({"id": "a", "text": "fine"}) + "\n")
    # No Cassandra at this address: the error must come before any connection.
    code = main(["load", "jsonl", "--path", str(f), "--embedding", "hash:8",
                 "--contact-points", "127.0.0.254:1", flag, value])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and "Traceback" not in err


def test_bad_ann_overquery_is_refused_before_connecting(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["query", "q", "--table", "t", "--edges", "a:b", "--ann-overquery", "0",
                 "--contact-points", "127.0.0.254:1"])  # fmt: skip
    assert code == 2
    assert "--ann-overquery must be an int in 1..16, got 0" in capsys.readouterr().err


def _hoprag(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hoprag.cli", *args], capture_output=True,
                          text=True, check=False, timeout=120)  # fmt: skip


@pytest.mark.parametrize(
    "command",
    [
        ["stats"],
        ["query", "q", "--table", "t", "--edges", "a:b"],
        ["load", "foldoc", "--limit", "3", "--embedding", "hash:8"],
    ],
)
def test_no_node_answering_is_one_line_naming_the_contact_point(command: list[str]) -> None:
    r = _hoprag(*command, "--contact-points", "127.0.0.1:1")
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("hoprag: error: no Cassandra node answered at 127.0.0.1:1 ")


def test_missing_foldoc_names_the_files_in_the_missing_directory(tmp_path: Path) -> None:
    where = tmp_path / "share" / "dictd"
    r = _hoprag("load", "foldoc", "--path", str(where), "--embedding", "hash:8",
                "--contact-points", "127.0.0.254:1")  # fmt: skip
    assert r.returncode == 1 and "Traceback" not in r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert f"{where}/foldoc.index" in line and f"{where}/foldoc.dict.dz" in line
    assert "apt-get install dict-foldoc" in line


def test_missing_foldoc_at_the_default_place_names_its_real_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hoprag.datasets import foldoc
    from hoprag.datasets.errors import DatasetNotInstalledError

    monkeypatch.setattr(foldoc, "DEFAULT_DIR", tmp_path / "dictd")
    with pytest.raises(DatasetNotInstalledError) as info:
        foldoc.read_foldoc()
    assert f"{tmp_path}/dictd/foldoc.index" in str(info.value)
    assert f"{tmp_path}/dictd/foldoc.dict.dz" in str(info.value)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--lambda-mult", "0.5"], "--lambda-mult applies to --strategy mmr, not eager"),
        (["--beam-width", "3"], "--beam-width applies to --strategy beam, not eager"),
        (["--score-field", "year"], "--score-field applies to --strategy scored, not eager"),
        (["--strategy", "mmr", "--lambda-mult", "2"], "bad mmr parameters"),
        (["--strategy", "beam", "--beam-width", "0"], "bad beam parameters"),
        (["--strategy", "scored", "--select-k", "-1"], "bad scored parameters"),
        (["--strategy", "scored", "--score-field", ""], "--score-field"),
    ],
)
def test_strategy_options_are_checked_before_connecting(
    capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    code = main(["query", "q", "--table", "t", "--edges", "a:b", *extra,
                 "--contact-points", "127.0.0.254:1"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"hoprag: error: {message}") and len(err.strip().splitlines()) == 1


def _node(id_: str, metadata: dict[str, object], similarity: float = 0.5) -> Node:
    return Node(id=id_, content="", depth=0, similarity_score=similarity, embedding=None,
                metadata=metadata, incoming_edges=frozenset(), outgoing_edges=frozenset(),
                path=Path_(nodes=(id_,)))  # fmt: skip


def test_score_field_scores_numbers_and_ranks_the_rest_lowest() -> None:
    score = field_scorer("year")
    assert score(_node("a", {"year": 1999})) == 1999.0
    assert score(_node("b", {"year": 2.5})) == 2.5
    for bad in ({}, {"year": "1999"}, {"year": True}, {"year": None}, {"year": [1]}):
        assert score(_node("c", bad)) == MISSING_SCORE
    assert field_scorer("info.year")(_node("d", {"info": {"year": 7}})) == 7.0
    assert similarity_scorer(_node("e", {}, similarity=0.25)) == 0.25


def test_scored_strategy_is_built_with_the_field_or_the_similarity() -> None:
    args = build_parser().parse_args(["query", "q", "--table", "t", "--edges", "a:b",
                                      "--strategy", "scored", "--select-k", "4"])  # fmt: skip
    default = make_strategy(args)
    assert isinstance(default, Scored) and default.scorer is similarity_scorer
    args.score_field = "year"
    by_field = make_strategy(args)
    assert isinstance(by_field, Scored)
    assert by_field.scorer(_node("a", {"year": 3})) == 3.0 and by_field.select_k == 4


def test_query_help_documents_every_strategy_and_the_score_field() -> None:
    r = _hoprag("query", "--help")
    assert r.returncode == 0
    text = " ".join(r.stdout.split())
    for phrase in ("--score-field", "nodes without it rank last", "--lambda-mult",
                   "--beam-width", "--stream", "--explain", "--root", "--filter"):  # fmt: skip
        assert phrase in text, phrase
