"""Deletes on the node beyond the compliance suite's contract: a delete interrupted at each of
its steps and run again, a `hoprag delete` killed mid-way and run again, and the command as a
user runs it (by id, from a file, by filter, --dry-run)."""

from __future__ import annotations

import functools
import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from hoprag import Document
from hoprag.embeddings import HashEmbedding
from hoprag.lexical import Bm25Index
from hoprag.stores.cassandra.store import CassandraStore
from hoprag.testing import COMPLIANCE_DIM, compliance_documents
from hoprag.testing.compliance.deletes import _reads

pytestmark = pytest.mark.integration

FIELDS = {"type": "entity", "n": "number"}


def _store(session: Any, keyspace: str, table: str, docs: list[Document]) -> CassandraStore:
    store = CassandraStore(HashEmbedding(COMPLIANCE_DIM), keyspace=keyspace, table=table,
                           session=session, lexical=True, fields=FIELDS)  # fmt: skip
    store.add(docs)
    return store


class _Killed(Exception):
    """Stands for the process dying at a write."""


def _fail_at(store: CassandraStore, step: int) -> list[str]:
    """Make the store's `step`-th write (1-based: a `write_all` or `write_groups` burst, or
    a statement `execute`d outside one) raise `_Killed` before it is sent; returns the log of
    the writes made."""
    ex = store.executor
    calls: list[str] = []
    inside: list[str] = []

    def wrap(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        async def wrapped(query: str, *args: Any, **kwargs: Any) -> Any:
            if inside:  # a statement of the burst being counted
                return await fn(query, *args, **kwargs)
            calls.append(query.split(" WHERE ")[0])
            if len(calls) == step:
                raise _Killed(query)
            inside.append(name)
            try:
                return await fn(query, *args, **kwargs)
            finally:
                inside.pop()

        return wrapped

    for name in ("write_all", "write_groups", "execute"):
        setattr(ex, name, wrap(name, getattr(ex, name)))
    return calls


def _restore(store: CassandraStore) -> None:
    for name in ("write_all", "write_groups", "execute"):
        store.executor.__dict__.pop(name, None)


VICTIMS = ["d2", "d3", "d9"]
"""The two birds and an insect (d10 is an insect too)."""

DELETE_STEPS = 7
"""The writes of a delete on a lexical table with an entity field: postings to insert (none),
postings, counters, ledger, rows, ledger cleanup, catalogue."""


@pytest.mark.parametrize("step", [1, 2, 3, 5, 6, 7])
async def test_a_delete_stopped_at_any_resumable_step_and_run_again_is_complete(
    cassandra_session: Any, keyspace: str, step: int
) -> None:
    """A delete that dies before its `step`-th write, then runs again, leaves the store
    answering every read (BM25 scores and name counts included) as a store that never held
    the documents. Step 4, the ledger's write right after the counters' update, is the one
    window that a run again cannot repair (pending.py). d2 and d3 are the only birds, so
    the catalogue's entry of "bird" goes at step 7."""
    docs = compliance_documents()
    store = _store(cassandra_session, keyspace, "doomed", docs)
    calls = _fail_at(store, step)
    with pytest.raises(_Killed):
        await store.adelete(VICTIMS)
    _restore(store)
    assert len(calls) == step
    again = await store.adelete(VICTIMS)
    assert again == (0 if step > 5 else 3)  # after step 5 the rows are gone already
    never = _store(cassandra_session, keyspace, "never",
                   [d for d in docs if d.id not in VICTIMS])  # fmt: skip
    got, want = await _reads(store), await _reads(never)
    assert got["lexical"] == [(i, pytest.approx(s, rel=1e-9)) for i, s in want["lexical"]]
    assert got == want | {"lexical": got["lexical"]}
    for name in ("bird", "insect"):
        assert await store.aresolve(name, ["type"]) == await never.aresolve(name, ["type"])


async def test_every_step_of_a_delete_is_one_of_the_counted_writes(
    cassandra_session: Any, keyspace: str
) -> None:
    """The steps the test above stops at are the delete's writes, in that order."""
    store = _store(cassandra_session, keyspace, "steps", compliance_documents())
    calls = _fail_at(store, 100)  # never fails
    assert await store.adelete(["d9"]) == 1  # d10 is an insect too: "insect" stays held
    ks = keyspace
    assert [" ".join(c.split(" ")[:3]) for c in calls] == [
        f"INSERT INTO {ks}.hoprag_postings",
        f"DELETE FROM {ks}.hoprag_postings",
        f"UPDATE {ks}.hoprag_lexicon SET",
        f"INSERT INTO {ks}.hoprag_lexicon_pending",
        f"DELETE FROM {ks}.steps",
        f"DELETE FROM {ks}.hoprag_lexicon_pending",
    ]  # none to insert; postings; counters; the ledger (the window is before it); rows; ledger
    assert await store.adelete(["d10"]) == 1  # the last insect: its catalogue entry goes
    assert calls[-1] == f"DELETE FROM {ks}.steps_values"
    assert len(calls) == 6 + DELETE_STEPS


# -- the command, as a user runs it ------------------------------------------------------------


def _hoprag(contact: str, keyspace: str, *args: str, stdin: str | None = None) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "hoprag.cli", *args, "--keyspace", keyspace,
         "--contact-points", contact],
        input=stdin, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def _write_jsonl(path: Path, n: int) -> list[dict[str, Any]]:
    records = [
        {"id": f"a{i}", "text": f"article {i} about {'cats' if i % 3 else 'dogs'} and more",
         "metadata": {"src": f"s{i % 3}", "n": i}}
        for i in range(n)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return records


def _kill_while_rows_go(command: list[str], session: Any, fq: str, rows: int) -> int:
    """Start `command`, SIGKILL it once `fq` holds fewer than `rows` rows (or after 240 s),
    and return how many rows it holds then."""
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    count = f"SELECT COUNT(*) FROM {fq}"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        if session.execute(count, timeout=30).one()[0] < rows:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    return int(session.execute(count, timeout=30).one()[0])


def _ids(session: Any, keyspace: str, table: str) -> set[str]:
    return {r[0] for r in session.execute(f"SELECT id FROM {keyspace}.{table}")}


def test_hoprag_delete_by_id_file_and_filter_with_a_dry_run_first(
    cassandra_session: Any, cassandra_contact_points: str, keyspace: str, tmp_path: Path
) -> None:
    path = tmp_path / "articles.jsonl"
    _write_jsonl(path, 30)
    run = _hoprag(cassandra_contact_points, keyspace, "load", "jsonl", "--path", str(path),
                  "--table", "arts", "--embedding", "hash:16", "--lexical")  # fmt: skip
    assert run.returncode == 0, run.stderr
    every = {f"a{i}" for i in range(30)}

    dry = _hoprag(cassandra_contact_points, keyspace, "delete", "--table", "arts",
                  "--id", "a1", "--id", "a2", "--id", "nope", "--dry-run")  # fmt: skip
    assert dry.returncode == 0, dry.stderr
    assert "2 document(s) match 3 id(s)" in dry.stdout
    assert '"a1"' in dry.stdout and "1 of the ids are not in" in dry.stdout
    assert "nothing deleted" in dry.stdout
    assert _ids(cassandra_session, keyspace, "arts") == every

    by_id = _hoprag(cassandra_contact_points, keyspace, "delete", "--table", "arts",
                    "--id", "a1", "--id", "a2", "--id", "nope")  # fmt: skip
    assert by_id.returncode == 0, by_id.stderr
    assert "deleted 2 document(s)" in by_id.stdout
    ids_file = tmp_path / "ids.txt"
    ids_file.write_text("a4\n\na5\r\n")
    from_file = _hoprag(cassandra_contact_points, keyspace, "delete", "--table", "arts",
                        "--ids-file", str(ids_file))  # fmt: skip
    assert "deleted 2 document(s)" in from_file.stdout, from_file.stderr
    by_filter = _hoprag(cassandra_contact_points, keyspace, "delete", "--table", "arts",
                        "--filter", '{"src": "s0"}')  # fmt: skip
    assert by_filter.returncode == 0, by_filter.stderr
    s0 = {f"a{i}" for i in range(0, 30, 3)}
    assert f"deleted {len(s0)} document(s)" in by_filter.stdout
    left = every - {"a1", "a2", "a4", "a5"} - s0
    assert _ids(cassandra_session, keyspace, "arts") == left

    stats = _hoprag(cassandra_contact_points, keyspace, "stats", "--table", "arts", "--json")
    assert stats.returncode == 0, stats.stderr
    assert json.loads(stats.stdout)[0]["documents"] == len(left)
    query = _hoprag(cassandra_contact_points, keyspace, "query", "cats", "--table", "arts",
                    "--edges", "src:src", "--lexical-k", "5", "--start-k", "0",
                    "--select-k", "30", "--json")  # fmt: skip
    assert query.returncode == 0, query.stderr
    assert {n["id"] for n in json.loads(query.stdout)["nodes"]} <= left


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--filter", "{}"], "would empty the store"),
        (["--filter", "{oops"], "is not JSON"),
        (["--filter", '{"src": {"$ne": "s1"}}'], "--filter"),
        (["--ids-file", "/nonexistent/ids.txt"], "cannot be read"),
        (["--id", ""], "non-empty string"),
    ],
)
def test_hoprag_delete_refuses_bad_input_with_exit_2_before_connecting(
    args: list[str], message: str
) -> None:
    """Port 1 has no node: an exit 2 with the message shows the input was refused first."""
    run = _hoprag("127.0.0.1:1", "ks", "delete", "--table", "arts", *args)
    assert run.returncode == 2, run.stderr
    assert message in run.stderr


async def test_hoprag_delete_killed_mid_way_and_run_again_leaves_nothing_half_deleted(
    cassandra_session: Any, cassandra_contact_points: str, keyspace: str, tmp_path: Path
) -> None:
    """SIGKILL while the rows go (after the postings and counters), then the same command:
    no deleted document is left anywhere, BM25 ranks and scores the rest as an index of the
    rest alone would, and the table and its statistics count the rest."""
    path = tmp_path / "big.jsonl"
    records = _write_jsonl(path, 3000)
    run = _hoprag(cassandra_contact_points, keyspace, "load", "jsonl", "--path", str(path),
                  "--table", "big", "--embedding", "hash:16", "--lexical")  # fmt: skip
    assert run.returncode == 0, run.stderr
    doomed = [r["id"] for r in records if r["metadata"]["src"] != "s0"]
    ids_file = tmp_path / "doomed.txt"
    ids_file.write_text("\n".join(doomed) + "\n")
    command = [sys.executable, "-m", "hoprag.cli", "delete", "--table", "big",
               "--ids-file", str(ids_file), "--keyspace", keyspace,
               "--contact-points", cassandra_contact_points]  # fmt: skip
    left_then = await anyio.to_thread.run_sync(
        _kill_while_rows_go, command, cassandra_session, f"{keyspace}.big", 3000
    )
    assert 1000 <= left_then < 3000, "the kill did not land while the rows were going"

    again = await anyio.to_thread.run_sync(
        functools.partial(subprocess.run, command, capture_output=True, text=True, timeout=300)
    )
    assert again.returncode == 0, again.stderr
    kept = [r for r in records if r["metadata"]["src"] == "s0"]
    assert _ids(cassandra_session, keyspace, "big") == {r["id"] for r in kept}
    store = CassandraStore(HashEmbedding(16), keyspace=keyspace, table="big",
                           session=cassandra_session, create_schema=False)  # fmt: skip
    reference = Bm25Index()
    for r in kept:
        reference.add(r["id"], r["text"])
    prepared = await store.aprepare(HashEmbedding(16)("article"))
    for text in ("article dogs", "cats more", "article 12"):
        want = reference.search(text, 20)
        hits = await prepared.alexical(text, k=20)
        assert [(h.id, pytest.approx(h.lexical, rel=1e-9)) for h in hits] == want
    stats = cassandra_session.execute(
        f"SELECT documents FROM {keyspace}.hoprag_lexicon WHERE table_name = 'big'"
    ).one()
    assert stats[0] == len(kept)
    postings = cassandra_session.execute(
        f"SELECT id FROM {keyspace}.hoprag_postings WHERE table_name = 'big' AND term = 'cats'"
    )
    assert {r[0] for r in postings} == {r["id"] for r in kept if "cats" in r["text"]}
