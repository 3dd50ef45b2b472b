"""`hoprag load / query / stats` against the real node, including a load that is interrupted
and run again."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cli_load import interrupt_after, load_command
from shared_data import write_articles_jsonl


def _hoprag(contact: str, *args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hoprag.cli", *args, "--contact-points", contact],
        capture_output=True, text=True, check=False, timeout=600, **kw,
    )  # fmt: skip


def test_load_query_and_stats_on_a_jsonl_file(
    tmp_path: Path, cassandra_contact_points: str, cassandra_session: Any, keyspace: str
) -> None:
    f = tmp_path / "articles.jsonl"
    ids = write_articles_jsonl(f, 300)
    common = ["--keyspace", keyspace]
    load = _hoprag(cassandra_contact_points, "load", "jsonl", "--path", str(f), "--table",
                   "arts", "--embedding", "hash:32", *common)  # fmt: skip
    assert load.returncode == 0, load.stderr
    assert "loaded 300 documents" in load.stdout
    rows = cassandra_session.execute(f"SELECT id FROM {keyspace}.arts")
    assert sorted(r.id for r in rows) == ids

    stats = _hoprag(cassandra_contact_points, "stats", "--json", *common)
    assert stats.returncode == 0, stats.stderr
    (entry,) = json.loads(stats.stdout)
    assert entry["documents"] == 300 and entry["complete"] and entry["embedding"] == "hash:32"

    q = _hoprag(cassandra_contact_points, "query", "article 5 on topic 5", "--table", "arts",
                "--edges", "references:$id,keywords:keywords", "--strategy", "eager",
                "--select-k", "12", "--max-depth", "2", "--json", *common)  # fmt: skip
    assert q.returncode == 0, q.stderr
    out = json.loads(q.stdout)
    nodes = out["nodes"]
    assert 0 < len(nodes) <= 12
    assert any(n["depth"] >= 1 for n in nodes)
    for n in nodes:
        assert n["path"][-1] == n["id"] and len(n["path"]) == n["depth"] + 1
        assert len(n["steps"]) == n["depth"]
    assert out["stats"]["hops"][0]["queries"]["search"] == 1

    table = _hoprag(cassandra_contact_points, "query", "article 5", "--table", "arts",
                    "--edges", "references:$id", "--ann-overquery", "2", *common)  # fmt: skip
    assert table.returncode == 0 and table.stdout.splitlines()[0].split()[:3] == [
        "id",
        "depth",
        "score",
    ]


def test_interrupted_load_resumes_and_ends_with_each_document_once(
    tmp_path: Path, cassandra_contact_points: str, cassandra_session: Any, keyspace: str
) -> None:
    f = tmp_path / "articles.jsonl"
    ids = write_articles_jsonl(f, 4000)
    args = load_command(str(f), keyspace, "arts", cassandra_contact_points)
    code, err = interrupt_after(args, cassandra_session, keyspace, "arts", 400)
    assert code == 130, err
    assert "run the same command again to resume" in err
    partial = cassandra_session.execute(f"SELECT count(*) FROM {keyspace}.arts").one()[0]
    assert 400 <= partial < 4000

    again = subprocess.run(args, capture_output=True, text=True, check=False, timeout=600)
    assert again.returncode == 0, again.stderr
    assert "resuming: the first" in again.stderr
    rows = [r.id for r in cassandra_session.execute(f"SELECT id FROM {keyspace}.arts")]
    assert len(rows) == len(set(rows)) == 4000
    assert sorted(rows) == ids
    row = cassandra_session.execute(
        f"SELECT written, complete FROM {keyspace}.hoprag_catalog WHERE table_name = 'arts'"
    ).one()
    assert row.written == 4000 and row.complete

    third = subprocess.run(args, capture_output=True, text=True, check=False, timeout=600)
    assert third.returncode == 0 and "nothing to do" in third.stdout


@pytest.mark.parametrize("table", ["bad-name", "x;drop"])
def test_bad_table_names_are_rejected_before_anything_is_written(
    cassandra_contact_points: str, table: str, tmp_path: Path
) -> None:
    f = tmp_path / "a.jsonl"
    write_articles_jsonl(f, 3)
    r = _hoprag(cassandra_contact_points, "load", "jsonl", "--path", str(f), "--table", table,
                "--embedding", "hash:8")  # fmt: skip
    assert r.returncode == 2
    assert "is not a plain name" in r.stderr and "Traceback" not in r.stderr
