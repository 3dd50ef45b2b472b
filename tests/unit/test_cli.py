"""The `hoprag` command's argument handling: edge and filter syntax, clear one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hoprag.cli import CliError, main, parse_edges_arg, parse_filter_arg


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
