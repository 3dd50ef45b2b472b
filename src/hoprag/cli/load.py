"""`hoprag load`: a dataset into a table, resumable (`hoprag.stores.cassandra.bulk`), or mirrored
with `--sync` (`hoprag.cli.load_source`)."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hoprag.cli.common import (
    CliError,
    ModelLoadNotice,
    Progress,
    clip,
    embedding_dimension,
    make_embedding,
    open_session,
)
from hoprag.documents import Document
from hoprag.errors import InvalidInputError

if TYPE_CHECKING:
    from hoprag.stores.cassandra.catalog import CatalogEntry

# --- load -------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class LoadPlan:
    """What `hoprag load` was asked to do, checked before anything connects."""

    dataset: str
    path: str | None
    limit: int | None
    keyspace: str
    table: str
    embedding: str
    consistency: str | None
    replication_factor: int
    batch: int
    restart: bool
    total: int | None = None
    """The number of records, when the up-front check counted them (JSONL)."""
    link: str | None = None
    """The field that title mentions go to (`--link`), or None."""
    sync: bool = False
    """Whether the table is to mirror the source (`--sync`)."""
    digest: str | None = None
    """`sha256:<hex>` of the source (the JSONL file's bytes, else the documents), once known."""
    chunk: tuple[int, int] | None = None
    """Passages' words and overlap (`--chunk`, `--chunk-overlap`), or None: documents whole."""

    @property
    def fields(self) -> dict[str, str]:
        """The fields the dataset declares (`DatasetInfo.fields`)."""
        from hoprag import datasets

        return dict(datasets.DATASETS[self.dataset].fields)

    @property
    def source(self) -> str:
        """The catalogue's description of the load, the source's digest included: an
        interrupted load resumes, and a completed one has nothing to do, only when a new run
        describes the same source with the same content."""
        path = str(Path(self.path).resolve()) if self.path else None
        described: dict[str, Any] = {"dataset": self.dataset, "limit": self.limit, "path": path}
        if self.link:
            described["link"] = self.link
        if self.digest:
            described["digest"] = self.digest
        if self.chunk:
            described["chunk"] = list(self.chunk)
        return json.dumps(described, sort_keys=True)

    def documents(self) -> Iterator[Document]:
        """The documents to load, in order (a fresh iterator each call; with `link`, the
        documents with their mentions, linked once)."""
        from hoprag import datasets

        if self.link:
            docs = iter(self._linked)
        else:
            docs = datasets.load(self.dataset, limit=self.limit, path=self.path)
        return docs if self.chunk is None else _passages(docs, *self.chunk)

    @functools.cached_property
    def _linked(self) -> list[Document]:
        from hoprag import datasets
        from hoprag.text import link_documents

        docs = list(datasets.load(self.dataset, limit=self.limit, path=self.path))
        progress = Progress(len(docs), label="link")
        linked, report = link_documents(docs, field=str(self.link), progress=progress.update)
        progress.close()
        print(f"linked: {report.summary()}", file=sys.stderr)
        return linked


def _passages(docs: Iterator[Document], words: int, overlap: int) -> Iterator[Document]:
    """Each document's passages (`hoprag.text.chunking`), document by document."""
    from hoprag.text.chunking import chunk_documents

    for doc in docs:
        yield from chunk_documents([doc], max_words=words, overlap_words=overlap)


def _check_chunk(args: argparse.Namespace) -> tuple[int, int] | None:
    """`--chunk` and `--chunk-overlap` as (words, overlap), or None without `--chunk`."""
    if args.chunk is None:
        if args.chunk_overlap:
            raise CliError("--chunk-overlap needs --chunk WORDS", 2)
        return None
    if args.chunk < 1:
        raise CliError(f"--chunk must be >= 1 (words per passage), got {args.chunk}", 2)
    if not 0 <= args.chunk_overlap < args.chunk:
        raise CliError(f"--chunk-overlap must be from 0 to {args.chunk - 1} (below --chunk), "
                       f"got {args.chunk_overlap}", 2)  # fmt: skip
    return args.chunk, args.chunk_overlap


def _check_counts_and_modes(args: argparse.Namespace) -> None:
    """Refuse a --limit or --batch below 1 and --sync with --restart."""
    if args.limit is not None and args.limit < 1:
        raise CliError(f"--limit must be >= 1, got {args.limit}", 2)
    if args.batch < 1:
        raise CliError(f"--batch must be >= 1, got {args.batch}", 2)
    if args.sync and args.restart:
        raise CliError("--sync compares the source with the table, whatever an earlier load "
                       "did; --restart has no meaning with it", 2)  # fmt: skip


def plan_load(args: argparse.Namespace) -> LoadPlan:
    """Check the arguments of `hoprag load` (names, limits, levels, the whole JSONL file)."""
    from hoprag import datasets
    from hoprag.cli.load_source import file_digest
    from hoprag.stores.cassandra.guards import check_consistency
    from hoprag.stores.cassandra.names import check_name
    from hoprag.stores.cassandra.schema import replication_map

    if args.dataset == "jsonl" and not args.path:
        raise CliError("hoprag load jsonl needs --path FILE.jsonl", 2)
    if args.dataset == "jsonl" and not Path(args.path).is_file():
        raise CliError(f"--path {clip(args.path)} is not a file (hoprag load jsonl reads one)", 2)
    _check_counts_and_modes(args)
    replication_map(args.replication_factor)  # refuses a bad factor
    # A JSONL file is checked whole first (strict JSON, then the stores' own checks on each
    # record): a bad record stops the load before anything connects or is written.
    chunk = _check_chunk(args)
    total = datasets.validate_jsonl(args.path) if args.dataset == "jsonl" else None
    total = None if chunk else total  # passages are counted when the documents are read
    digest = file_digest(args.path) if args.dataset == "jsonl" else None
    if args.link is not None:
        from hoprag.cli.link import RESERVED
        from hoprag.text import check_link_options

        if args.link in RESERVED:
            raise CliError(f"--link {args.link!r} would replace a field the documents have; "
                           "give a new field name, such as mentions", 2)  # fmt: skip
        check_link_options(field=args.link)
    return LoadPlan(
        dataset=args.dataset,
        path=args.path,
        limit=args.limit,
        keyspace=check_name(args.keyspace, what="keyspace"),
        table=check_name(args.table or args.dataset, what="table"),
        embedding=args.embedding,
        consistency=check_consistency(args.consistency, what="--consistency"),
        replication_factor=args.replication_factor,
        batch=args.batch,
        restart=args.restart,
        total=total,
        link=args.link,
        sync=args.sync,
        digest=digest,
        chunk=chunk,
    )


def _counted(plan: LoadPlan) -> LoadPlan:
    """The plan with its number of documents and its digest, read from the documents when the
    up-front check did not give them (a dataset other than JSONL)."""
    from hoprag.cli.load_source import documents_digest

    if plan.total is not None and plan.digest is not None:
        return plan
    total, digest = documents_digest(plan.documents())
    return dataclasses.replace(plan, total=total, digest=digest)


def _check_embedding(plan: LoadPlan, prior: CatalogEntry | None) -> None:
    """`bulk.check_embedding` for the plan, its refusal in the command's words (with
    `--sync`: drop the table first; a plain load: drop it and pass --restart)."""
    from hoprag.stores.cassandra import bulk

    try:
        bulk.check_embedding(prior, plan.embedding, f"{plan.keyspace}.{plan.table}")
    except InvalidInputError:
        assert prior is not None
        then = "drop the table first" if plan.sync else "pass --restart after dropping it"
        raise CliError(
            f"{plan.keyspace}.{plan.table} was loaded with embedding {prior.embedding!r}; load "
            f"into another --table or {then}",
            2,
        ) from None


def _resume_point(plan: LoadPlan, prior: CatalogEntry | None) -> int | None:
    """`bulk.resume_point` for the plan, a table of another embedding refused in the
    command's words."""
    from hoprag.stores.cassandra import bulk

    if not plan.restart:
        _check_embedding(plan, prior)
    return bulk.resume_point(
        prior,
        source=plan.source,
        embedding_name=plan.embedding,
        restart=plan.restart,
        where=f"{plan.keyspace}.{plan.table}",
    )


def _make_store(
    plan: LoadPlan, args: argparse.Namespace, embedding: Any, dimension: int, session: Any
) -> Any:
    """The plan's CassandraStore, set up (a table it refuses, such as --lexical on one
    without, records nothing)."""
    from hoprag.stores.cassandra.store import CassandraStore

    return CassandraStore(
        embedding,
        keyspace=plan.keyspace,
        table=plan.table,
        session=session,
        dimension=dimension,
        replication_factor=plan.replication_factor,
        write_consistency=plan.consistency,
        fields=plan.fields,
        lexical=args.lexical,
        holder_counts=args.holder_counts,
    )


def cmd_load(args: argparse.Namespace) -> int:
    """`hoprag load`: check, count, connect, then the library's resumable load
    (`hoprag.stores.cassandra.bulk`) with a progress bar, or with `--sync` its mirror
    (`load_source.sync_load`). The embedding model loads when the first batch needs it (not
    at all when the cache holds every vector); the bar's rate and ETA start after that load."""
    from hoprag.cli.load_source import change_notice, print_notice, sync_load
    from hoprag.stores.cassandra.catalog import LoadCatalog
    from hoprag.stores.cassandra.counting import holds_rows

    plan = _counted(plan_load(args))
    notice = ModelLoadNotice()
    embedding = make_embedding(plan.embedding, notice=notice)
    dimension = embedding_dimension(embedding)
    session = open_session(args)
    try:
        # Asked before the store is made: a table loaded with another embedding (and so,
        # maybe, another dimension) is refused in the command's words, not the store's.
        catalog = LoadCatalog(session, plan.keyspace, consistency=plan.consistency)
        catalog.create(plan.replication_factor)  # the keyspace at the asked replication too
        prior = catalog.get(plan.table)
        if plan.sync:
            if holds_rows(session, plan.keyspace, plan.table):  # a dropped table is new
                _check_embedding(plan, prior)
            return sync_load(plan, _make_store(plan, args, embedding, dimension, session), notice)
        if _resume_point(plan, prior) is None:
            done = prior.written if prior is not None else 0
            print(f"{plan.keyspace}.{plan.table} already holds the {done} documents "
                  "of this load; nothing to do (--restart loads it again)")  # fmt: skip
            return 0
        print_notice(change_notice(prior, plan))
        store = _make_store(plan, args, embedding, dimension, session)
        return _load(plan, store, notice, prior)
    finally:
        session.cluster.shutdown()


def _load(plan: LoadPlan, store: Any, notice: ModelLoadNotice, prior: CatalogEntry | None) -> int:
    """The resumable load (`bulk.load`) with its progress bar and summary; after a load of
    another source than the one the catalogue recorded, the documents the table holds that
    this source has not got are counted (`load_source.stale_notice`)."""
    from hoprag.cli.load_source import IdRecorder, print_notice, stale_notice
    from hoprag.stores.cassandra import bulk

    progress = Progress(plan.total, label=f"load {plan.dataset}")
    notice.on_loaded(progress.restart)

    def started(skip: int) -> None:
        if skip:
            print(f"resuming: the first {skip} documents were written by an earlier run",
                  file=sys.stderr)  # fmt: skip
            progress.resume_from(skip)

    # From the first document over an earlier load: the table may hold documents this
    # source has not got. (A first load, or one resumed, cannot have added any.)
    replacing = prior is not None and (plan.restart or prior.source != plan.source)
    documents = IdRecorder(plan.documents())
    result = bulk.load(
        store,
        documents,
        source=plan.source,
        embedding_name=plan.embedding,
        batch=plan.batch,
        restart=plan.restart,
        catalog_consistency=plan.consistency,
        started=started,
        progress=progress.update,
    )
    progress.close()
    took = time.monotonic() - progress.began
    print(f"loaded {result.added} documents into {plan.keyspace}.{plan.table} in "
          f"{took:.1f}s ({result.written} in all)")  # fmt: skip
    if replacing:
        print_notice(stale_notice(store, documents.ids))
    return 0
