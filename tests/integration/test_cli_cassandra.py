"""`hoprag load / query / stats` run as a user runs them (a subprocess) against the real node:
every strategy and output mode of `query`, the dataset loaders, progress, stats, and a load
that is interrupted and run again."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from keyspaces import new_keyspace

from cli_load import interrupt_after, load_command
from shared_data import write_articles_jsonl

N = 150
EDGES = "references:$id,keywords:keywords"
HOPRAG_SCRIPT = Path(sys.executable).parent / "hoprag"


def _hoprag(contact: str, *args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hoprag.cli", *args, "--contact-points", contact],
        capture_output=True, text=True, check=False, timeout=600, **kw,
    )  # fmt: skip


def _write_graph(path: Path) -> list[str]:
    """`N` articles: keywords topicX/methodY, two references each, a `group` (g0..g2) and a
    numeric `rank` (i % 50) on three articles of four (those with i % 4 == 0 have none)."""
    ids = [f"a{i:05d}" for i in range(N)]
    with path.open("w") as f:
        for i, rid in enumerate(ids):
            rec: dict[str, Any] = {
                "id": rid,
                "title": f"article {i}",
                "text": f"article {i} on topic {i % 17} and method {i % 5}",
                "keywords": [f"topic{i % 17}", f"method{i % 5}"],
                "references": [ids[(i * 7 + 3) % N], ids[(i * 11 + 1) % N]],
                "group": f"g{i % 3}",
            }
            if i % 4:
                rec["rank"] = i % 50
            f.write(json.dumps(rec) + "\n")
    return ids


class Graph:
    """The loaded test graph: where it lives and what its load printed."""

    def __init__(self, contact: str, keyspace: str, ids: list[str], load: Any) -> None:
        self.contact = contact
        self.keyspace = keyspace
        self.ids = ids
        self.load = load

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return _hoprag(self.contact, *args, "--keyspace", self.keyspace)

    def query(self, text: str, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run("query", text, "--table", "arts", "--edges", EDGES, *args)

    def query_json(self, text: str, *args: str) -> dict[str, Any]:
        r = self.query(text, *args, "--json")
        assert r.returncode == 0, r.stderr
        out: dict[str, Any] = json.loads(r.stdout)
        return out


@pytest.fixture(scope="module")
def graph(
    tmp_path_factory: pytest.TempPathFactory, cassandra_contact_points: str, cassandra_session: Any
) -> Graph:
    f = tmp_path_factory.mktemp("cli") / "graph.jsonl"
    ids = _write_graph(f)
    keyspace = new_keyspace(cassandra_session)
    load = _hoprag(cassandra_contact_points, "load", "jsonl", "--path", str(f), "--table",
                   "arts", "--embedding", "hash:32", "--keyspace", keyspace)  # fmt: skip
    assert load.returncode == 0, load.stderr
    return Graph(cassandra_contact_points, keyspace, ids, load)


def _check_paths(nodes: list[dict[str, Any]]) -> None:
    for n in nodes:
        assert n["path"][-1] == n["id"] and len(n["path"]) == n["depth"] + 1
        assert len(n["steps"]) == n["depth"]


# --- load, progress, stats --------------------------------------------------------------------


def test_load_jsonl_writes_every_document_and_reports_progress_counts(
    graph: Graph, cassandra_session: Any
) -> None:
    assert f"loaded {N} documents into {graph.keyspace}.arts" in graph.load.stdout
    rows = cassandra_session.execute(f"SELECT id FROM {graph.keyspace}.arts")
    assert sorted(r.id for r in rows) == graph.ids
    # Not a terminal: plain progress lines on stderr, each with done/total, the last complete.
    counts = [
        int(m.group(1))
        for line in graph.load.stderr.splitlines()
        if (m := re.match(rf"load jsonl \[[# ]{{24}}\] (\d+)/{N} ", line))
    ]
    assert len(counts) >= 2, graph.load.stderr
    assert counts == sorted(counts) and counts[-1] == N


def test_stats_prints_a_table_and_json_of_the_catalogue(graph: Graph) -> None:
    text = subprocess.run(
        [str(HOPRAG_SCRIPT), "stats", "--keyspace", graph.keyspace,
         "--contact-points", graph.contact],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert text.returncode == 0, text.stderr
    header, *lines = text.stdout.splitlines()
    assert header.split()[:4] == ["table", "documents", "disk", "MiB"]
    (line,) = [ln for ln in lines if ln.startswith(f"{graph.keyspace}.arts ")]
    cells = line.split()
    assert cells[1] == str(N) and cells[3:] == ["hash:32", "jsonl"]

    one = graph.run("stats", "--table", "arts", "--json")
    assert one.returncode == 0, one.stderr
    (entry,) = json.loads(one.stdout)
    assert entry["table"] == f"{graph.keyspace}.arts"
    assert entry["documents"] == N and entry["complete"] and entry["embedding"] == "hash:32"
    assert entry["dimension"] == 32 and entry["dataset"] == "jsonl"

    missing = graph.run("stats", "--table", "nosuch")
    assert missing.returncode == 2
    assert (
        missing.stderr.strip() == f"hoprag: error: {graph.keyspace}.nosuch is not in hoprag_catalog"
    )


def test_loading_the_same_file_again_has_nothing_to_do(graph: Graph, tmp_path: Path) -> None:
    # A load is "the same" when dataset, limit and path match: load a copy twice.
    f = tmp_path / "copy.jsonl"
    _write_graph(f)
    args = ("load", "jsonl", "--path", str(f), "--table", "arts2", "--embedding", "hash:32")
    first = graph.run(*args, "--limit", "20")
    assert first.returncode == 0 and "loaded 20 documents" in first.stdout, first.stderr
    again = graph.run(*args, "--limit", "20")
    assert again.returncode == 0 and "the 20 documents of this load; nothing to do" in again.stdout
    other = graph.run(*args, "--limit", "20", "--embedding", "hash:16")
    assert other.returncode == 2
    assert "was loaded with embedding 'hash:32'" in other.stderr


@pytest.mark.parametrize(
    ("dataset", "edges", "table"),
    [
        ("films", "director:director,genre:genre", "films"),
        ("foldoc", "links:$id,keywords:keywords", "foldoc"),
        ("wordnet", "hypernyms:$id,$id:hypernyms", "wordnet"),
    ],
)
def test_dataset_loaders_load_the_limit_and_answer_a_query(
    cassandra_contact_points: str,
    cassandra_session: Any,
    keyspace: str,
    dataset: str,
    edges: str,
    table: str,
) -> None:
    load = _hoprag(cassandra_contact_points, "load", dataset, "--limit", "60", "--embedding",
                   "hash:32", "--keyspace", keyspace)  # fmt: skip
    assert load.returncode == 0, load.stderr
    assert f"loaded 60 documents into {keyspace}.{table}" in load.stdout
    assert cassandra_session.execute(f"SELECT count(*) FROM {keyspace}.{table}").one()[0] == 60
    stats = _hoprag(cassandra_contact_points, "stats", "--json", "--keyspace", keyspace)
    (entry,) = json.loads(stats.stdout)
    assert entry["dataset"] == dataset and entry["documents"] == 60
    q = _hoprag(cassandra_contact_points, "query", "a query", "--table", table, "--edges", edges,
                "--select-k", "8", "--json", "--keyspace", keyspace)  # fmt: skip
    assert q.returncode == 0, q.stderr
    nodes = json.loads(q.stdout)["nodes"]
    assert len(nodes) == 8
    _check_paths(nodes)


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
    stats = _hoprag(cassandra_contact_points, "stats", "--keyspace", keyspace)
    assert stats.stdout.splitlines()[1].endswith("jsonl (incomplete)"), stats.stdout

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


# --- a source that changed: --sync, and a plain load again (issue 49) ---------------------------


def _read_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write_records(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def _edit(path: Path, *, drop: int, change: int) -> tuple[str, str]:
    """Remove record `drop`, rewrite the text of record `change` and add one new record;
    return the removed id and the changed one."""
    records = _read_records(path)
    changed = records[change]["id"]
    changed_text = records[change]["text"] + " (revised)"
    records[change]["text"] = changed_text
    removed = records.pop(drop)["id"]
    records.append({"id": "added", "title": "new", "text": "an article added later"})
    _write_records(path, records)
    return removed, changed


def _table_documents(session: Any, keyspace: str, table: str) -> dict[str, Any]:
    rows = session.execute(f"SELECT id, content, metadata FROM {keyspace}.{table}")
    return {r.id: (r.content, json.loads(r.metadata)) for r in rows}


def _file_documents(path: Path) -> dict[str, Any]:
    from hoprag.datasets import load_jsonl

    return {d.id: (d.content, d.metadata) for d in load_jsonl(path)}


def _stats(contact: str, keyspace: str, table: str) -> dict[str, Any]:
    r = _hoprag(contact, "stats", "--table", table, "--json", "--keyspace", keyspace)
    assert r.returncode == 0, r.stderr
    (entry,) = json.loads(r.stdout)
    out: dict[str, Any] = entry
    return out


def test_load_sync_mirrors_an_edited_file_exactly(
    tmp_path: Path, cassandra_contact_points: str, cassandra_session: Any, keyspace: str
) -> None:
    f = tmp_path / "mine.jsonl"
    write_articles_jsonl(f, 40)
    sync = ("load", "jsonl", "--path", str(f), "--table", "mine", "--embedding", "hash:32",
            "--keyspace", keyspace, "--sync")  # fmt: skip
    first = _hoprag(cassandra_contact_points, *sync)
    assert first.returncode == 0, first.stderr
    assert f"synced {keyspace}.mine with its source in " in first.stdout
    assert "40 added, 0 updated, 0 unchanged, 0 deleted (40 in all)" in first.stdout

    removed, changed = _edit(f, drop=5, change=10)
    second = _hoprag(cassandra_contact_points, *sync)
    assert second.returncode == 0, second.stderr
    assert "1 added, 1 updated, 38 unchanged, 1 deleted (40 in all)" in second.stdout
    held = _table_documents(cassandra_session, keyspace, "mine")
    assert held == _file_documents(f)
    assert removed not in held and held[changed][0].endswith("(revised)")
    stats = _stats(cassandra_contact_points, keyspace, "mine")
    assert (stats["documents"], stats["loaded"], stats["complete"]) == (40, 40, True)

    third = _hoprag(cassandra_contact_points, *sync)
    assert "0 added, 0 updated, 40 unchanged, 0 deleted" in third.stdout, third.stderr
    plain = _hoprag(cassandra_contact_points, *sync[:-1])
    assert plain.returncode == 0 and "the 40 documents of this load; nothing to do" in plain.stdout
    first_30 = _hoprag(cassandra_contact_points, *sync, "--limit", "30")
    assert "0 added, 0 updated, 30 unchanged, 10 deleted (30 in all)" in first_30.stdout
    assert len(_table_documents(cassandra_session, keyspace, "mine")) == 30

    other = (*sync, "--embedding", "hash:16")  # the later --embedding wins
    refused = _hoprag(cassandra_contact_points, *other)
    assert refused.returncode == 2 and refused.stderr.strip() == (
        f"hoprag: error: {keyspace}.mine was loaded with embedding 'hash:32'; load into "
        "another --table or drop the table first"
    )
    cassandra_session.execute(f"DROP TABLE {keyspace}.mine", timeout=120)
    remade = _hoprag(cassandra_contact_points, *other)
    assert "40 added, 0 updated, 0 unchanged, 0 deleted" in remade.stdout, remade.stderr
    assert _stats(cassandra_contact_points, keyspace, "mine")["embedding"] == "hash:16"


def test_an_edited_file_loaded_without_sync_is_loaded_again_never_nothing_to_do(
    tmp_path: Path, cassandra_contact_points: str, cassandra_session: Any, keyspace: str
) -> None:
    f = tmp_path / "mine.jsonl"
    write_articles_jsonl(f, 40)
    load = ("load", "jsonl", "--path", str(f), "--table", "mine", "--embedding", "hash:32",
            "--keyspace", keyspace)  # fmt: skip
    assert _hoprag(cassandra_contact_points, *load).returncode == 0
    removed, changed = _edit(f, drop=5, change=10)

    again = _hoprag(cassandra_contact_points, *load)
    assert again.returncode == 0, again.stderr
    assert "nothing to do" not in again.stdout
    assert f"loaded 40 documents into {keyspace}.mine" in again.stdout
    assert f"{f} changed since the earlier load: loading it again from the first record" in (
        again.stderr
    )
    assert f"1 document in {keyspace}.mine is not in the source; --sync deletes it" in (
        again.stderr
    )
    held = _table_documents(cassandra_session, keyspace, "mine")
    assert {i: d for i, d in held.items() if i != removed} == _file_documents(f)
    assert held[changed][0].endswith("(revised)")
    stats = _stats(cassandra_contact_points, keyspace, "mine")
    assert (stats["documents"], stats["loaded"]) == (41, 40)  # the table, then the load

    delete = _hoprag(cassandra_contact_points, "delete", "--table", "mine", "--id", removed,
                     "--id", changed, "--keyspace", keyspace)  # fmt: skip
    assert delete.returncode == 0 and "deleted 2 document(s)" in delete.stdout, delete.stderr
    assert _stats(cassandra_contact_points, keyspace, "mine")["documents"] == 39


def test_an_interrupted_load_of_a_file_that_then_changed_is_not_resumed_by_position(
    tmp_path: Path, cassandra_contact_points: str, cassandra_session: Any, keyspace: str
) -> None:
    f = tmp_path / "articles.jsonl"
    write_articles_jsonl(f, 4000)
    args = load_command(str(f), keyspace, "arts", cassandra_contact_points)
    code, err = interrupt_after(args, cassandra_session, keyspace, "arts", 400)
    assert code == 130, err
    # Every record after the first moves up one line: resuming by position would skip one
    # record the table does not hold and keep the first record's old text.
    removed, changed = _edit(f, drop=1, change=0)

    again = subprocess.run(args, capture_output=True, text=True, check=False, timeout=600)
    assert again.returncode == 0, again.stderr
    assert "resuming" not in again.stderr
    assert f"{f} changed since the earlier load: loading it again from the first record" in (
        again.stderr
    )
    assert f"1 document in {keyspace}.arts is not in the source" in again.stderr
    held = _table_documents(cassandra_session, keyspace, "arts")
    assert {i: d for i, d in held.items() if i != removed} == _file_documents(f)
    assert held[changed][0].endswith("(revised)")


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


def _table_exists(session: Any, keyspace: str, table: str) -> bool:
    row = session.execute(
        "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s AND table_name = %s",
        (keyspace, table),
    ).one()
    return row is not None


@pytest.mark.parametrize("bad", ["NaN", "Infinity", "-Infinity", "1e400", '"\\ud800"'])
def test_bad_record_on_line_301_writes_nothing(
    tmp_path: Path, cassandra_contact_points: str, cassandra_session: Any, keyspace: str, bad: str
) -> None:
    """The whole file is checked before anything is written: before the fix 256 documents were
    in the table when the store refused line 301."""
    f = tmp_path / "articles.jsonl"
    write_articles_jsonl(f, 400)
    lines = f.read_text().splitlines()
    record = json.loads(lines[300])
    lines[300] = json.dumps(record)[:-1] + f', "score": {bad}}}'
    f.write_text("\n".join(lines) + "\n")
    r = subprocess.run(load_command(str(f), keyspace, "arts", cassandra_contact_points),
                       capture_output=True, text=True, check=False, timeout=600)  # fmt: skip
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    head, detail = r.stderr.strip().splitlines()
    assert head == f"hoprag: error: {f}: 1 bad record field(s):"
    assert detail.startswith("  line 301, field 'score': ")
    assert not _table_exists(cassandra_session, keyspace, "arts")
    assert not _table_exists(cassandra_session, keyspace, "hoprag_catalog")


@pytest.mark.parametrize("text", ["", "\n  \n"])
def test_empty_file_is_refused_and_no_load_is_recorded_as_complete(
    tmp_path: Path, cassandra_contact_points: str, cassandra_session: Any, keyspace: str, text: str
) -> None:
    f = tmp_path / "empty.jsonl"
    f.write_text(text)
    r = subprocess.run(load_command(str(f), keyspace, "arts", cassandra_contact_points),
                       capture_output=True, text=True, check=False, timeout=600)  # fmt: skip
    assert r.returncode == 2 and "holds no records" in r.stderr, r.stderr
    assert "loaded 0 documents" not in r.stdout
    assert not _table_exists(cassandra_session, keyspace, "hoprag_catalog")
    stats = _hoprag(cassandra_contact_points, "stats", "--keyspace", keyspace)
    assert (
        stats.returncode == 0 and stats.stdout.strip() == f"no hoprag tables in keyspace {keyspace}"
    )


HOSTILE_ID = "evil\x1b[2J\r\nfake  0  1.000  row\x9b31m\u202e"
HOSTILE_KEYWORD = "kw\x1b]0;title\x07\rred\n"


def test_control_characters_in_stored_data_are_escaped_in_text_and_exact_in_json(
    tmp_path: Path, cassandra_contact_points: str, keyspace: str
) -> None:
    f = tmp_path / "hostile.jsonl"
    records = [
        {"id": HOSTILE_ID, "text": "control characters", "keywords": [HOSTILE_KEYWORD],
         "note": "\x1b[31mred\x1b[0m\r\u2028"},
        {"id": "plain", "text": "control characters too", "keywords": [HOSTILE_KEYWORD]},
    ]  # fmt: skip
    f.write_text("".join(json.dumps(r) + "\n" for r in records))
    load = _hoprag(cassandra_contact_points, "load", "jsonl", "--path", str(f), "--table", "h",
                   "--embedding", "hash:16", "--keyspace", keyspace)  # fmt: skip
    assert load.returncode == 0, load.stderr
    query = ("query", "control characters", "--table", "h", "--edges", "keywords:keywords",
             "--start-k", "1", "--max-depth", "1", "--keyspace", keyspace)  # fmt: skip

    out = _hoprag(cassandra_contact_points, *query, "--json")
    assert out.returncode == 0, out.stderr
    assert not any(c in out.stdout for c in "\x1b\r\x07\x9b\u202e\u2028")
    nodes = {n["id"]: n for n in json.loads(out.stdout)["nodes"]}
    assert set(nodes) == {HOSTILE_ID, "plain"}
    evil = nodes[HOSTILE_ID]["metadata"]
    assert evil["keywords"] == [HOSTILE_KEYWORD]
    assert evil["note"] == records[0]["note"]

    for mode in ((), ("--stream",)):
        text = _hoprag(cassandra_contact_points, *query, *mode)
        assert text.returncode == 0, text.stderr
        assert not any(c in text.stdout for c in "\x1b\r\x07\x9b\u202e\u2028")
        _, *rows = text.stdout.splitlines()
        assert len(rows) == 2  # no stored character starts a row of its own
        assert all(row.isprintable() for row in rows)
        assert any(row.startswith("evil\\x1b[2J\\x0d\\x0afake") for row in rows), rows
        assert any("--keywords=kw\\x1b]0;title\\x07\\x0dred\\x0a-->" in row for row in rows)


# --- query ------------------------------------------------------------------------------------


def test_eager_query_json_has_paths_steps_and_per_hop_stats(graph: Graph) -> None:
    out = graph.query_json("article 5 on topic 5", "--select-k", "12", "--max-depth", "2")
    nodes = out["nodes"]
    assert out["query"] == "article 5 on topic 5"
    assert len(nodes) == 12 and len({n["id"] for n in nodes}) == 12
    assert set(n["id"] for n in nodes) <= set(graph.ids)
    assert any(n["depth"] >= 1 for n in nodes) and max(n["depth"] for n in nodes) <= 2
    _check_paths(nodes)
    for n in nodes:
        if n["depth"]:
            via = n["steps"][-1]["via"]
            assert via.startswith(("references", "keywords", "$id")), via
    assert out["stats"]["hops"][0]["queries"]["search"] == 1


def test_table_output_lists_the_same_nodes_as_json(graph: Graph) -> None:
    args = ("--select-k", "7", "--max-depth", "1")
    table = graph.query("article 9", *args)
    assert table.returncode == 0, table.stderr
    header, *rows = table.stdout.splitlines()
    assert header.split() == ["id", "depth", "score", "path"]
    want = [(n["id"], n["depth"]) for n in graph.query_json("article 9", *args)["nodes"]]
    assert [(r.split()[0], int(r.split()[1])) for r in rows] == want


def test_stream_prints_nodes_as_admitted_hop_by_hop(graph: Graph) -> None:
    args = ("--select-k", "15", "--max-depth", "2", "--start-k", "3")
    r = graph.query("article 40 on topic 6", *args, "--stream")
    assert r.returncode == 0, r.stderr
    header, *rows = r.stdout.splitlines()
    assert header == "id  depth  score  path (as admitted)"
    streamed = [(row.split()[0], int(row.split()[1])) for row in rows]
    assert len(streamed) == 15
    assert [d for _, d in streamed[:3]] == [0, 0, 0]  # the three start nodes come first
    assert max(d for _, d in streamed) == 2
    # Eager's result is its admission order, so the streamed rows are the result's, in order.
    final = graph.query_json("article 40 on topic 6", *args)["nodes"]
    assert streamed == [(n["id"], n["depth"]) for n in final]


def test_explain_prints_one_line_per_hop(graph: Graph) -> None:
    args = ("--select-k", "20", "--max-depth", "2")
    r = graph.query("article 3", *args, "--explain")
    assert r.returncode == 0, r.stderr
    table, explain = r.stdout.split("\n\n")
    assert table.splitlines()[0].split() == ["id", "depth", "score", "path"]
    assert len(table.splitlines()) == 21
    rounds, header, *hops = explain.strip().splitlines()
    assert rounds.startswith(f"rounds: {len(hops)} sequential, {len(hops)} hops; speculation: auto")
    assert header.split()[:5] == ["hop", "edges", "search", "get", "adjacent"]
    stats = graph.query_json("article 3", *args)["stats"]["hops"]
    assert [int(h.split()[0]) for h in hops] == [h["depth"] for h in stats]
    assert hops[0].split()[2] == "1"  # the start hop's one vector search
    assert [int(h.split()[7]) for h in hops] == [h["kept"] for h in stats]


def test_speculation_changes_the_queries_asked_never_the_nodes(graph: Graph) -> None:
    args = ("--select-k", "12", "--max-depth", "3", "--strategy", "mmr", "--adjacent-k", "4")
    off = graph.query_json("article 21", *args, "--speculation", "off")
    assert off["stats"]["speculation"]["issued"] == 0
    for mode in ("on", "wide", "5"):
        got = graph.query_json("article 21", *args, "--speculation", mode)
        assert got["nodes"] == off["nodes"], mode
        spec = got["stats"]["speculation"]
        assert 0 < spec["issued"] <= spec["budget"], (mode, spec)
        assert spec["mode"] == ("on" if mode == "5" else mode)
    r = graph.query("article 21", *args, "--speculation", "on", "--explain")
    assert r.returncode == 0, r.stderr
    assert "speculation: on, " in r.stdout


def test_filter_keeps_only_matching_documents(graph: Graph) -> None:
    flt = ("--filter", "group=g2", "--filter", "keywords=method3")
    nodes = graph.query_json("article 8", "--select-k", "15", "--max-depth", "2", *flt)["nodes"]
    assert len(nodes) >= 5
    for n in nodes:
        assert n["metadata"]["group"] == "g2" and "method3" in n["metadata"]["keywords"], n
    # A value that parses as JSON is a number: rank 7 is on articles 7, 57 and 107 only.
    numeric = graph.query_json("article 8", "--filter", "rank=7", "--max-depth", "1")["nodes"]
    assert sorted(n["id"] for n in numeric) == ["a00007", "a00057", "a00107"]


def test_filter_takes_operator_json_and_explain_says_how_it_ran(graph: Graph) -> None:
    flt = ("--filter", 'group={"$in": ["g1", "g2"]}', "--filter", 'keywords={"$ne": "method3"}')
    args = ("--select-k", "20", "--max-depth", "2", *flt)
    nodes = graph.query_json("article 8", *args)["nodes"]
    assert len(nodes) >= 10
    for n in nodes:
        assert n["metadata"]["group"] in ("g1", "g2"), n
        assert "method3" not in n["metadata"]["keywords"], n
    r = graph.query("article 8", *args, "--explain")
    assert r.returncode == 0, r.stderr
    assert (
        "filter: 2 queries per read, merged; by the index: group $eq; after the read: "
        "keywords $ne" in r.stdout.splitlines()
    )
    # A range needs the field declared; the error names the command that declares it.
    ranged = graph.query("article 8", "--filter", 'rank={"$gte": 40}')
    assert ranged.returncode == 2, ranged.stderr
    assert "hoprag fields declare" in ranged.stderr and "rank" in ranged.stderr, ranged.stderr
    assert "Traceback" not in ranged.stderr


def test_roots_are_admitted_at_depth_zero_and_expanded(graph: Graph) -> None:
    r = graph.run("query", "article 0", "--table", "arts", "--edges", "references:$id",
                  "--root", "a00123", "--root", "a00077", "--start-k", "1", "--select-k", "30",
                  "--max-depth", "1", "--json")  # fmt: skip
    assert r.returncode == 0, r.stderr
    by_id = {n["id"]: n for n in json.loads(r.stdout)["nodes"]}
    for root in ("a00123", "a00077"):
        assert by_id[root]["depth"] == 0 and by_id[root]["path"] == [root]
    # Article 123 cites articles 114 and 4: they are one hop from a root.
    for ref in ("a00114", "a00004"):
        assert by_id[ref]["depth"] <= 1


def test_ann_overquery_runs_one_search_that_returns_start_k_nodes(graph: Graph) -> None:
    out = graph.query_json("article 11", "--ann-overquery", "3", "--start-k", "5",
                           "--max-depth", "0", "--select-k", "10")  # fmt: skip
    assert [n["depth"] for n in out["nodes"]] == [0] * 5
    hop0 = out["stats"]["hops"][0]
    assert hop0["queries"]["search"] == 1 and hop0["rows"] == 5
    table = graph.query("article 11", "--ann-overquery", "2")
    assert table.returncode == 0 and table.stdout.split()[:3] == ["id", "depth", "score"]


def test_mmr_lambda_mult_trades_relevance_for_diversity(graph: Graph) -> None:
    args = ("--strategy", "mmr", "--select-k", "8", "--max-depth", "2")
    relevant = graph.query_json("article 22 on topic 5", *args, "--lambda-mult", "1.0")["nodes"]
    diverse = graph.query_json("article 22 on topic 5", *args, "--lambda-mult", "0.0")["nodes"]
    for nodes in (relevant, diverse):
        assert len(nodes) == 8 and len({n["id"] for n in nodes}) == 8
        _check_paths(nodes)
    # Both start from the most similar document; then they part ways.
    assert relevant[0]["id"] == diverse[0]["id"]
    assert [n["id"] for n in relevant] != [n["id"] for n in diverse]
    bad = graph.query("x", *args, "--lambda-mult", "1.5")
    assert bad.returncode == 2 and "lambda_mult" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_scored_by_default_ranks_by_similarity(graph: Graph) -> None:
    nodes = graph.query_json("article 31 on topic 14", "--strategy", "scored", "--select-k",
                             "10", "--max-depth", "2")["nodes"]  # fmt: skip
    assert len(nodes) == 10
    _check_paths(nodes)
    scores = [n["scores"]["_score"] for n in nodes]
    assert scores == [n["score"] for n in nodes]  # the score is the similarity
    assert scores == sorted(scores, reverse=True)


def test_scored_by_a_field_ranks_by_it_and_puts_documents_without_it_last(graph: Graph) -> None:
    out = graph.query_json("article 31 on topic 14", "--strategy", "scored", "--score-field",
                           "rank", "--select-k", "12", "--max-depth", "2")  # fmt: skip
    nodes = out["nodes"]
    assert len(nodes) == 12
    _check_paths(nodes)
    for n in nodes:
        assert n["scores"]["_score"] == n["metadata"].get("rank")  # null when it has none
    ranked = [n["scores"]["_score"] for n in nodes if n["scores"]["_score"] is not None]
    unranked = [n for n in nodes if n["scores"]["_score"] is None]
    assert ranked == sorted(ranked, reverse=True) and len(ranked) >= 6
    assert nodes[len(ranked) :] == unranked  # documents without `rank` come last
    assert all(int(n["id"][1:]) % 4 == 0 for n in unranked)


def test_beam_returns_best_paths_first_and_expands_beam_width_paths(graph: Graph) -> None:
    args = ("--strategy", "beam", "--select-k", "10", "--max-depth", "2")
    out = graph.query_json("article 50 on topic 16", *args, "--beam-width", "2")
    nodes = out["nodes"]
    assert 0 < len(nodes) <= 10
    _check_paths(nodes)
    path_scores = [n["scores"]["_path_score"] for n in nodes]
    assert path_scores == sorted(path_scores, reverse=True)
    hops = out["stats"]["hops"]
    # Two paths expanded per hop, each with its one id edge (a `get`) and keyword edges.
    assert all(h["notes"].get("beam") == 2 for h in hops[:-1])
    wide = graph.query_json("article 50 on topic 16", *args, "--beam-width", "6")["stats"]
    assert sum(h["edges"] for h in wide["hops"]) > sum(h["edges"] for h in hops)
    bad = graph.query("x", *args, "--beam-width", "0")
    assert bad.returncode == 2 and "beam_width" in bad.stderr


def test_query_of_a_table_never_loaded_is_a_one_line_error(graph: Graph) -> None:
    r = graph.run("query", "x", "--table", "never", "--edges", EDGES)
    assert r.returncode == 2
    assert r.stderr.strip() == (
        f"hoprag: error: {graph.keyspace}.never has no hoprag_catalog entry; load it with "
        "`hoprag load` or name its --embedding"
    )


# --- the README's examples --------------------------------------------------------------------


def test_the_readme_examples_run_as_shown(cassandra_contact_points: str, keyspace: str) -> None:
    """Every command of README's "The `hoprag` command", with hash vectors instead of MiniLM
    and limits that keep the loads short (FOLDOC's `lisp` is article 6,072)."""

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        r = _hoprag(cassandra_contact_points, *args, "--keyspace", keyspace)
        assert r.returncode == 0, r.stderr
        return r

    def nodes(*args: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = json.loads(run(*base, *args, "--json").stdout)["nodes"]
        _check_paths(out)
        return out

    run("load", "foldoc", "--limit", "6100", "--embedding", "hash:32")
    base = ("query", "garbage collection in Lisp", "--table", "foldoc",
            "--edges", "links:$id,keywords:keywords")  # fmt: skip
    shown = ("--strategy", "mmr", "--select-k", "10", "--max-depth", "2")
    table = run(*base, *shown).stdout.splitlines()
    assert table[0].split() == ["id", "depth", "score", "path"] and len(table) == 11
    assert len(nodes(*shown)) == 10
    assert len(nodes("--strategy", "mmr", "--lambda-mult", "0.3")) > 0
    scored = [n["scores"]["_score"] for n in nodes("--strategy", "scored")]
    assert scored and scored == sorted(scored, reverse=True)
    beam = json.loads(run(*base, "--strategy", "beam", "--beam-width", "4", "--json").stdout)
    assert beam["nodes"] and beam["stats"]["hops"][0]["notes"]["beam"] == 4
    filtered = nodes("--filter", "keywords=language", "--root", "lisp")
    assert {"id": "lisp", "depth": 0} in [{"id": n["id"], "depth": n["depth"]} for n in filtered]
    assert all("language" in n["metadata"]["keywords"] for n in filtered)
    assert run(*base, "--stream").stdout.startswith("id  depth  score  path (as admitted)\n")
    assert "\nhop  edges  search" in run(*base, "--explain").stdout
    assert len(nodes("--ann-overquery", "2")) > 0
    for stats in (run("stats"), run("stats", "--table", "foldoc")):
        assert f"{keyspace}.foldoc" in stats.stdout and " 6100 " in stats.stdout

    run("load", "films", "--limit", "300", "--embedding", "hash:32")
    films = json.loads(run("query", "space opera", "--table", "films", "--edges",
                           "director:director,genre:genre", "--strategy", "scored",
                           "--score-field", "box_office", "--json").stdout)["nodes"]  # fmt: skip
    assert films
    office = [n["scores"]["_score"] for n in films]
    assert office == [n["metadata"].get("box_office") for n in films]
    known = [v for v in office if v is not None]
    assert known == sorted(known, reverse=True) and office[: len(known)] == known


# --- the catalogue API ------------------------------------------------------------------------


def test_load_catalog_round_trips_entries_and_creates_nothing_when_read(
    cassandra_session: Any, keyspace: str
) -> None:
    from hoprag.errors import InvalidInputError
    from hoprag.stores.cassandra.catalog import CatalogEntry, LoadCatalog

    catalog = LoadCatalog(cassandra_session, keyspace, consistency="one")
    assert catalog.consistency == "ONE" and catalog.name == f"{keyspace}.hoprag_catalog"
    # Reading a keyspace that has no catalogue answers "nothing" and creates no table.
    assert catalog.get("films") is None and catalog.entries() == []
    assert not catalog.exists()

    catalog.create()
    assert catalog.exists()
    catalog.put(CatalogEntry("films", '{"dataset": "films"}', "hash:8", 8, 40, False))
    catalog.put(CatalogEntry("films", '{"dataset": "films"}', "hash:8", 8, 90, True))
    catalog.put(CatalogEntry("mine", "{}", "minilm", 384, 3, False))
    films = catalog.get("FILMS")  # names are case-insensitive, as in CQL
    assert films is not None and (films.written, films.complete, films.dimension) == (90, True, 8)
    assert films.updated is not None
    assert sorted((e.table, e.written) for e in catalog.entries()) == [("films", 90), ("mine", 3)]

    for bad in ("x;drop", "bad-name", ""):
        with pytest.raises(InvalidInputError, match="is not a plain name"):
            LoadCatalog(cassandra_session, bad)
        with pytest.raises(InvalidInputError, match="is not a plain name"):
            catalog.get(bad)
    with pytest.raises(InvalidInputError, match="--consistency must be one of"):
        LoadCatalog(cassandra_session, keyspace, consistency="SOMETIMES")


def test_load_with_link_stores_title_mentions_that_queries_follow_both_ways(
    tmp_path: Path, cassandra_contact_points: str, keyspace: str
) -> None:
    """`hoprag load jsonl --link mentions`: each document's `mentions` holds the ids whose
    titles its text names, the load says what it linked, and `--edges mentions:$id` reaches a
    mentioned document from a start node while `$id:mentions` goes back."""
    f = tmp_path / "places.jsonl"
    records = [
        {"id": "quokka", "title": "Quokka", "text": "A marsupial of Rottnest Island."},
        {"id": "rottnest", "title": "Rottnest Island", "text": "An island off Perth."},
        {"id": "perth", "title": "Perth", "text": "Capital of Western Australia."},
        {"id": "wa", "title": "Western Australia", "text": "A state."},
    ]
    f.write_text("".join(json.dumps(r) + "\n" for r in records))
    load = _hoprag(cassandra_contact_points, "load", "jsonl", "--path", str(f), "--table",
                   "places", "--embedding", "hash:32", "--link", "mentions", "--keyspace",
                   keyspace)  # fmt: skip
    assert load.returncode == 0, load.stderr
    assert "linked: 3 of 4 documents linked, 3 links" in load.stderr

    def reached(edges: str, root: str) -> dict[str, int]:
        q = _hoprag(cassandra_contact_points, "query", "island", "--table", "places",
                    "--edges", edges, "--root", root, "--start-k", "0", "--select-k", "10",
                    "--max-depth", "3", "--json", "--keyspace", keyspace)  # fmt: skip
        assert q.returncode == 0, q.stderr
        nodes = json.loads(q.stdout)["nodes"]
        _check_paths(nodes)
        return {n["id"]: n["depth"] for n in nodes}

    assert reached("mentions:$id", "quokka") == {"quokka": 0, "rottnest": 1, "perth": 2, "wa": 3}
    assert reached("$id:mentions", "perth") == {"perth": 0, "rottnest": 1, "quokka": 2}
    bad = _hoprag(cassandra_contact_points, "load", "jsonl", "--path", str(f), "--link",
                  "title", "--keyspace", keyspace)  # fmt: skip
    assert bad.returncode == 2 and "--link 'title' would replace a field" in bad.stderr
