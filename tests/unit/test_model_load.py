"""The embedding model's cost said, and paid once (issue #49, part 4), in-process with a stand-in
for the SentenceTransformer: the commands say on stderr that the model loads before it loads and
how long it took after; a process loads it once whatever builds MiniLMEmbeddings; a load whose
vectors are all cached never loads it (and never says so); a progress bar's rate and ETA start
after the load; `hoprag query`, `hoprag eval` and `hoprag mcp` load it before their work. The
real model, as a user runs the commands, is in tests/integration/test_model_load_cassandra.py."""

from __future__ import annotations

import io
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from eval_files import hotpot_file
from hoprag.cli import common, main
from hoprag.cli import mcp as mcp_cli
from hoprag.cli import query as query_cli
from hoprag.documents import Document
from hoprag.embeddings import CachedEmbedding, HashEmbedding, minilm
from hoprag.embeddings.minilm import MiniLMEmbedding
from hoprag.stores.memory import MemoryStore

LOADING = "loading the embedding model (all-MiniLM-L6-v2) ..."
LOADED = "loaded the embedding model in "
VECTORS = HashEmbedding(minilm.DIMENSION)


class FakeModel:
    """Stands in for the SentenceTransformer: HashEmbedding's vectors of 384 floats."""

    def encode(self, texts: list[str], **_: Any) -> Any:
        return np.array([VECTORS(t) for t in texts])


class Loads:
    """The stand-in loader: counts loads and keeps what stderr held when each began (the
    output captured so far is kept in `out` and `err`)."""

    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self.capsys = capsys
        self.seen: list[str] = []
        self.clock: Clock | None = None
        self.seconds = 0.0
        self.out = self.err = ""

    def read(self) -> str:
        """Everything written to stderr so far."""
        captured = self.capsys.readouterr()
        self.out += captured.out
        self.err += captured.err
        return self.err

    def __call__(self, device: str) -> FakeModel:
        self.seen.append(self.read())
        if self.clock is not None:
            self.clock.now += self.seconds  # the load takes `seconds` on the fake clock
        return FakeModel()


@pytest.fixture
def loads(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> Loads:
    """A process with no model loaded yet, the stand-in loader and the embedding cache in
    `tmp_path`."""
    loader = Loads(capsys)
    monkeypatch.setattr(minilm, "check_installed", lambda: None)
    monkeypatch.setattr(minilm, "_models", {})
    monkeypatch.setattr(minilm, "load_sentence_transformer", loader)
    monkeypatch.setenv("HOPRAG_CACHE_DIR", str(tmp_path / "cache"))
    return loader


def test_the_loading_line_is_written_before_the_model_loads_and_the_time_after(
    loads: Loads,
) -> None:
    embedding = common.make_embedding("minilm")
    assert loads.seen == []  # building the embedding loads nothing
    embedding.embed_query("a query")
    assert loads.seen == [LOADING + "\n"]
    lines = loads.read().splitlines()
    assert lines[0] == LOADING and lines[1].startswith(LOADED) and lines[1].endswith("s")
    assert len(lines) == 2


def test_one_process_loads_the_model_once_and_says_so_once(loads: Loads) -> None:
    first = common.make_embedding("minilm")
    second = common.make_embedding("minilm", cache=False)
    third = MiniLMEmbedding(batch_size=8)
    first.embed_query("one")
    second.embed_documents(["two", "three"])
    third.embed_query("four")
    assert len(loads.seen) == 1
    assert loads.read().count(LOADING) == 1
    assert minilm.shared_model("cpu") is minilm.shared_model("cpu")


def test_a_failed_load_says_it_began_but_never_that_it_loaded(
    loads: Loads, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(device: str) -> Any:
        raise OSError("no weights here")

    monkeypatch.setattr(minilm, "load_sentence_transformer", fail)
    with pytest.raises(OSError, match="no weights here"):
        common.make_embedding("minilm").embed_query("a query")
    assert loads.read() == LOADING + "\n"


def test_documents_all_in_the_cache_are_read_without_loading_or_announcing_the_model(
    loads: Loads, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = ["alpha", "beta", "gamma"]
    vectors = common.make_embedding("minilm").embed_documents(texts)
    assert len(loads.seen) == 1
    monkeypatch.setattr(minilm, "_models", {})  # a new process, the same cache file
    said = loads.read()
    again = common.make_embedding("minilm")
    assert isinstance(again, CachedEmbedding)
    assert again.embed_documents(texts) == vectors and again.hits == len(texts)
    assert len(loads.seen) == 1 and loads.read() == said


class Clock:
    """A fake `time` module for `hoprag.cli.common`: `monotonic()` is `now`."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now


def test_a_progress_bar_rate_and_eta_start_after_the_model_load(
    loads: Loads, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bar exists before the model loads (as in `hoprag load`); the load takes 600 s on a
    fake clock; 50 of 100 documents are then done in 10 s: 5 docs/s and 10 s left, not the
    50/610 docs/s and ten minutes an undisturbed clock would show."""
    clock = Clock()
    monkeypatch.setattr(common, "time", clock)
    loads.clock, loads.seconds = clock, 600.0
    notice = common.ModelLoadNotice()
    embedding = common.make_embedding("minilm", notice=notice)
    out = io.StringIO()
    progress = common.Progress(100, label="load notes", out=out)
    notice.on_loaded(progress.restart)
    embedding.embed_documents(["the first batch"])
    assert progress.start == 600.0 and progress.began == 0.0
    clock.now += 10.0
    progress.update(50, force=True)
    assert "loaded the embedding model in 600.0s" in loads.read()
    assert out.getvalue().split("]", 1)[1].split() == [
        "50/100",
        "50.0%",
        "5",
        "docs/s",
        "ETA",
        "10s",
    ]


def no_session(args: object) -> SimpleNamespace:
    """Stands in for `open_session`: a session whose cluster shuts down."""
    return SimpleNamespace(cluster=SimpleNamespace(shutdown=lambda: None))


def _notes_store(embedding: Any) -> MemoryStore:
    store = MemoryStore(embedding)
    store.add(
        Document(f"n{i}", f"note {i}", {"kw": [f"k{i % 2}"]}, VECTORS(f"note {i}"))
        for i in range(6)
    )
    return store


def test_hoprag_query_with_minilm_says_it_loads_before_the_load_and_keeps_stdout_json(
    loads: Loads, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The line comes before the load, the load before the traversal (whose time it would
    otherwise enter), stdout holds the JSON alone."""
    traversal = query_cli.run_traversal
    loaded_before: list[int] = []

    async def run_traversal(*args: Any) -> Any:
        loaded_before.append(len(loads.seen))
        return await traversal(*args)

    monkeypatch.setattr(query_cli, "open_session", no_session)
    monkeypatch.setattr(query_cli, "open_query_store", lambda a, s, e: _notes_store(e))
    monkeypatch.setattr(query_cli, "run_traversal", run_traversal)
    code = main(["query", "note 3", "--table", "notes", "--edges", "kw:kw", "--embedding",
                 "minilm", "--json"])  # fmt: skip
    err = loads.read()
    assert code == 0, err
    assert loads.seen == [LOADING + "\n"]  # said before the load began, once
    assert err.splitlines()[1].startswith(LOADED) and loaded_before == [1]
    doc = json.loads(loads.out)  # stdout holds the JSON alone
    assert doc["nodes"][0]["id"] == "n3"


def test_hoprag_eval_loads_the_model_once_and_before_its_progress_bar(
    loads: Loads, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded_before: list[int] = []

    class Bar(common.Progress):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            loaded_before.append(len(loads.seen))
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(common, "Progress", Bar)
    hotpot_file(tmp_path / "hotpotqa_small.json")
    code = main(["eval", "--dataset", "hotpotqa", "--data", str(tmp_path), "--embedding",
                 "minilm", "--json", str(tmp_path / "figures.json")])  # fmt: skip
    err = loads.read()
    assert code == 0, err
    assert len(loads.seen) == 1 and loaded_before == [1]  # the bar's clock starts after
    assert err.index(LOADING) < err.index(LOADED) < err.index("eval [")


def test_hoprag_mcp_loads_the_model_and_answers_one_call_before_it_serves(
    loads: Loads, monkeypatch: pytest.MonkeyPatch
) -> None:
    served: list[int] = []

    def serve_stdio(tool: Any, stdout: Any) -> None:
        served.append(len(loads.seen))

    import hoprag.tools.mcp as mcp_tools

    monkeypatch.setattr(mcp_cli, "open_session", no_session)
    monkeypatch.setattr(mcp_cli, "open_query_store", lambda a, s, e: _notes_store(e))
    monkeypatch.setattr(mcp_tools, "serve_stdio", serve_stdio)
    calls: list[dict[str, Any]] = []
    answer = mcp_tools.call_result

    async def call_result(tool: Any, arguments: Any) -> Any:
        calls.append(dict(arguments))
        return await answer(tool, arguments)

    monkeypatch.setattr(mcp_tools, "call_result", call_result)
    code = main(["mcp", "--table", "notes", "--tool", "mcp_factory:topic_tool", "--embedding",
                 "minilm"])  # fmt: skip
    err = loads.read()
    assert code == 0, err
    assert served == [1]  # the model had loaded when serving began
    assert calls == [{"topic": "warm-up"}]  # one call answered as a client's would be
    assert err.index(LOADING) < err.index(LOADED) < err.index("hoprag mcp: serving")
