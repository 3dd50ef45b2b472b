"""`hoprag load` and its source: the digest that tells a changed source from the one an earlier
load recorded (so a changed file is loaded again from its first record, never resumed by
position or answered "nothing to do"), the notice saying so, the count of documents a table
holds that the source has not got, and `--sync` (`bulk.mirror`) with its report."""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hoprag.cli.common import Progress
from hoprag.documents import Document
from hoprag.stores.mirror import Phase, document_digest
from hoprag.termsafe import safe

if TYPE_CHECKING:
    from hoprag.cli.common import ModelLoadNotice
    from hoprag.cli.load import LoadPlan
    from hoprag.stores.cassandra.catalog import CatalogEntry
    from hoprag.stores.cassandra.store import CassandraStore

_CHUNK = 1 << 20
"""Bytes read at a time while a file is digested."""


def file_digest(path: str | Path) -> str:
    """`sha256:<hex>` of the bytes of the file at `path`."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return f"sha256:{digest.hexdigest()}"


def documents_digest(documents: Iterable[Document]) -> tuple[int, str]:
    """How many `documents` there are and `sha256:<hex>` of their ids, contents and metadata
    in order (for a source that is not one file)."""
    digest = hashlib.sha256()
    count = 0
    for doc in documents:
        digest.update(doc.id.encode("utf-8", "surrogatepass") + b"\0")
        digest.update(document_digest(doc))
        count += 1
    return count, f"sha256:{digest.hexdigest()}"


def _described(source: str) -> dict[str, Any]:
    """A catalogue entry's source as the dict `LoadPlan.source` writes ({} for another form)."""
    try:
        described = json.loads(source)
    except ValueError:
        return {}
    return described if isinstance(described, dict) else {}


def change_notice(prior: CatalogEntry | None, plan: LoadPlan) -> str | None:
    """The line saying that the plan's source changed since the load `prior` records (same
    dataset, path, limit and link, another digest), or None when it did not."""
    if prior is None or prior.source == plan.source:
        return None
    before, now = _described(prior.source), _described(plan.source)
    if not before or {**before, "digest": None} != {**now, "digest": None}:
        return None
    what = safe(plan.path) if plan.path else f"the {plan.dataset} data"
    why = "changed since the earlier load" if "digest" in before else (
        "may have changed since the earlier load (which recorded no digest of it)")  # fmt: skip
    return f"{what} {why}: loading it again from the first record"


class IdRecorder:
    """Passes documents through, remembering their ids (`ids`)."""

    def __init__(self, documents: Iterable[Document]) -> None:
        self.documents = documents
        self.ids: set[str] = set()

    def __iter__(self) -> Iterator[Document]:
        for doc in self.documents:
            self.ids.add(doc.id)
            yield doc


def stale_notice(store: CassandraStore, source_ids: set[str]) -> str | None:
    """The line saying how many documents the store's table holds that are not among
    `source_ids` (its keys read page by page, `counting.key_pages`, with progress on a large
    table), or None when there are none."""
    from hoprag.cli.stats import shown_pages
    from hoprag.stores.cassandra.counting import key_pages

    where = f"{store.keyspace}.{store.table}"
    pages = shown_pages(
        key_pages(store.session, store.keyspace, store.table) or (), f"ids of {where}"
    )
    stale = sum(1 for page in pages for key in page if key not in source_ids)
    if not stale:
        return None
    if stale == 1:
        return f"1 document in {where} is not in the source; --sync deletes it"
    return f"{stale} documents in {where} are not in the source; --sync deletes them"


class SyncProgress:
    """One progress bar per phase of a mirror (`hoprag.stores.mirror.Phase`), each made when
    its phase begins and closed when the next begins; the embedding model's load (`notice`)
    restarts the current bar's rate."""

    def __init__(self, plan: LoadPlan, notice: ModelLoadNotice | None) -> None:
        self.labels: dict[Phase, tuple[int | None, str]] = {
            "read": (None, f"read {plan.keyspace}.{plan.table}"),
            "compare": (plan.total, f"sync {plan.dataset}"),
            "delete": (None, f"delete from {plan.keyspace}.{plan.table}"),
        }
        self.phase: Phase | None = None
        self.bar: Progress | None = None
        if notice is not None:
            notice.on_loaded(self._restart)

    def __call__(self, phase: Phase, done: int) -> None:
        if phase != self.phase:
            self.close()
            total, label = self.labels[phase]
            self.phase, self.bar = phase, Progress(total, label=label)
        assert self.bar is not None
        self.bar.update(done)

    def _restart(self) -> None:
        if self.bar is not None:
            self.bar.restart()

    def close(self) -> None:
        """Close the bar of the current phase, if any."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def sync_load(plan: LoadPlan, store: CassandraStore, notice: ModelLoadNotice | None = None) -> int:
    """`hoprag load --sync`: make the table hold exactly the plan's documents (`bulk.mirror`),
    with a bar per phase, and print what it did."""
    from hoprag.stores.cassandra import bulk

    began = time.monotonic()
    progress = SyncProgress(plan, notice)
    try:
        result = bulk.mirror(
            store,
            plan.documents(),
            source=plan.source,
            embedding_name=plan.embedding,
            batch=plan.batch,
            catalog_consistency=plan.consistency,
            progress=progress,
        )
    finally:
        progress.close()
    assert result.mirror is not None
    took = time.monotonic() - began
    print(f"synced {plan.keyspace}.{plan.table} with its source in {took:.1f}s: "
          f"{result.mirror.summary()} ({result.written} in all)")  # fmt: skip
    return 0


def print_notice(line: str | None) -> None:
    """`line` on stderr, when there is one."""
    if line is not None:
        print(line, file=sys.stderr)
