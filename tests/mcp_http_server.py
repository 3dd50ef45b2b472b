"""`python tests/mcp_http_server.py HOST GRACE SLOW`: `hoprag.tools.mcp.serve_http` on loopback
port 0 for tests/integration/test_mcp_http_stop.py, serving a topic tool over a MemoryStore (no
Cassandra) whose embedding takes SLOW seconds for a topic holding the word "sleepy" (saying
"searching slowly" on stderr first), with a grace period of GRACE seconds. It prints "listening
at URL" on stderr once it listens and "stopped" when `serve_http` returns."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from hoprag.documents import Document
from hoprag.embeddings.hash import HashEmbedding
from hoprag.stores.memory import MemoryStore
from hoprag.tools import Limit, SearchTool, Topic
from hoprag.tools.mcp import serve_http


def slow_embedding(seconds: float) -> Callable[[str], list[float]]:
    """HashEmbedding(32) as a plain callable that sleeps `seconds` on any text holding the
    word "sleepy"."""
    hashed = HashEmbedding(32)

    def embed(text: str) -> list[float]:
        if "sleepy" in text.split():
            print("searching slowly", file=sys.stderr, flush=True)
            time.sleep(seconds)
        return hashed(text)

    return embed


def note_tool(seconds: float) -> SearchTool:
    """A topic tool over three notes, slow as `slow_embedding` says."""
    store = MemoryStore(slow_embedding(seconds))
    texts = ["slow rivers in winter", "fast trains at night", "a quiet library"]
    store.add([Document(id=f"n{i}", content=t) for i, t in enumerate(texts)])
    return SearchTool(
        "note_search",
        "Notes ranked by a topic.",
        store,
        [Topic("What the notes are about."), Limit(default=3, maximum=10)],
        order_field=None,
        noun="notes",
    )


def main(host: str, grace: str, slow: str) -> None:
    """Serve until SIGTERM, saying where and when it stopped on stderr."""

    def ready(url: str) -> None:
        print(f"listening at {url}", file=sys.stderr, flush=True)

    serve_http(note_tool(float(slow)), host=host, port=0, ready=ready, grace=float(grace))
    print("stopped", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:4])
