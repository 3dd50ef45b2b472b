"""`hoprag load jsonl --chunk WORDS` run as a user runs it against the node: long texts are
stored as passages within WORDS words with their structure (parent, prev, next) that a query
follows, a second run has nothing to do, and bad sizes are refused before connecting."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

MANUAL = [
    " ".join(f"Option {p}{s} sets word{p}{s}a and word{p}{s}b for the tool." for s in range(6))
    for p in range(8)
]
"""A long manual page: eight paragraphs of six ten-word sentences."""


def _hoprag(contact: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hoprag.cli", *args, "--contact-points", contact],
        capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip


def _write(path: Path) -> None:
    records = [
        {"id": "ls", "title": "ls", "text": "\n\n".join(MANUAL), "keywords": ["files"]},
        {"id": "pwd", "title": "pwd", "text": "Print the working directory."},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def test_load_chunk_stores_passages_within_the_size_that_a_query_follows_in_order(
    tmp_path: Path, cassandra_contact_points: str, cassandra_session: Any, keyspace: str
) -> None:
    f = tmp_path / "man.jsonl"
    _write(f)
    args = ["load", "jsonl", "--path", str(f), "--table", "man", "--embedding", "hash:32",
            "--chunk", "40", "--keyspace", keyspace]  # fmt: skip
    load = _hoprag(cassandra_contact_points, *args)
    assert load.returncode == 0, load.stderr
    rows = {r.id: r for r in cassandra_session.execute(f"SELECT id, content FROM {keyspace}.man")}
    assert "pwd#0" in rows and rows["pwd#0"].content == "pwd\n\nPrint the working directory."
    passages = sorted((i for i in rows if i.startswith("ls#")), key=lambda i: int(i[3:]))
    # 480 words in paragraphs of 60: at least 12 passages of at most 40 words each.
    assert len(passages) >= 12 and passages == [f"ls#{n}" for n in range(len(passages))]
    assert f"loaded {len(rows)} documents into {keyspace}.man" in load.stdout
    for i in passages:
        body = rows[i].content.removeprefix("ls\n\n")
        assert rows[i].content.startswith("ls\n\n") and len(body.split()) <= 40, i
        assert body.endswith("tool."), i  # passages end at sentence ends
    text = " ".join(rows[i].content.removeprefix("ls\n\n") for i in passages)
    assert text.split() == " ".join(MANUAL).split()  # every word once, in order

    q = _hoprag(cassandra_contact_points, "query", "options", "--table", "man", "--edges",
                "next:$id", "--root", "ls#0", "--start-k", "0", "--select-k", "100",
                "--max-depth", "100", "--json", "--keyspace", keyspace)  # fmt: skip
    assert q.returncode == 0, q.stderr
    depths = {n["id"]: n["depth"] for n in json.loads(q.stdout)["nodes"]}
    assert depths == {i: int(i[3:]) for i in passages}  # next leads from each to the one after
    q = _hoprag(cassandra_contact_points, "query", "options", "--table", "man", "--edges",
                "parent:parent", "--root", "ls#5", "--start-k", "0", "--select-k", "100",
                "--adjacent-k", "100", "--max-depth", "1", "--json",
                "--keyspace", keyspace)  # fmt: skip
    assert q.returncode == 0, q.stderr
    assert {n["id"] for n in json.loads(q.stdout)["nodes"]} == set(passages)

    again = _hoprag(cassandra_contact_points, *args)
    assert again.returncode == 0, again.stderr
    assert "already holds" in again.stdout, again.stdout


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--chunk", "0"], "--chunk must be >= 1"),
        (["--chunk", "20", "--chunk-overlap", "20"], "--chunk-overlap must be from 0 to 19"),
        (["--chunk-overlap", "5"], "--chunk-overlap needs --chunk"),
    ],
)
def test_load_refuses_bad_chunk_sizes_before_connecting(
    tmp_path: Path, flags: list[str], message: str
) -> None:
    f = tmp_path / "man.jsonl"
    _write(f)
    run = _hoprag("127.0.0.1:1", "load", "jsonl", "--path", str(f), "--embedding", "hash:32",
                  *flags)  # fmt: skip
    assert run.returncode == 2 and re.search(re.escape(message), run.stderr), run.stderr
