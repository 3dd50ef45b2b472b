"""`hoprag delete`: documents of a table, by id or by filter (`CassandraStore.adelete`), listed
before they go; `--dry-run` lists them and deletes nothing."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hoprag.cli.common import CliError, clip, open_session
from hoprag.errors import InvalidInputError

if TYPE_CHECKING:
    from hoprag.stores.base import DeleteRequest

SHOWN = 20
"""Ids listed before a delete (the rest are counted)."""


@dataclasses.dataclass(frozen=True)
class DeletePlan:
    """What `hoprag delete` was asked to do, checked before anything connects."""

    keyspace: str
    table: str
    request: DeleteRequest
    described: str
    """How the documents were named, for the messages (`3 ids`, `--filter {...}`)."""
    dry_run: bool


def add_delete_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of `hoprag delete`: the table, one way of naming documents, `--dry-run`."""
    parser.add_argument("--table", required=True)
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--id", action="append", metavar="ID", help="a document id, repeatable")
    which.add_argument(
        "--ids-file", metavar="FILE", help="a file of document ids, one per line (- for stdin)"
    )
    which.add_argument(
        "--filter",
        metavar="JSON",
        help='the documents passing this filter, as JSON (e.g. \'{"source": "old.jsonl"}\')',
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="list what would be deleted; delete nothing"
    )


def _ids_from_file(path: str) -> list[str]:
    """The ids of `--ids-file`, one per line (line ends dropped, blank lines skipped)."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"--ids-file {clip(path)} cannot be read ({exc})", 2) from None
    return [line.rstrip("\r") for line in text.split("\n") if line.strip()]


def _filter_arg(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise CliError(f"--filter {clip(raw)} is not JSON ({exc})", 2) from None


def plan_delete(args: argparse.Namespace) -> DeletePlan:
    """Check the arguments of `hoprag delete` (names, ids, the filter); exit 2 naming the
    flag for bad input."""
    from hoprag.stores.base import check_delete
    from hoprag.stores.cassandra.names import check_name

    keyspace = check_name(args.keyspace, what="keyspace")
    table = check_name(args.table, what="table")
    flag = "--filter" if args.filter is not None else "--ids-file" if args.ids_file else "--id"
    try:
        if args.filter is not None:
            request = check_delete(None, _filter_arg(args.filter))
            described = f"--filter {args.filter}"
        else:
            ids = args.id if args.id is not None else _ids_from_file(args.ids_file)
            request = check_delete(ids, None)
            described = f"{len(request.ids or [])} id(s)"
    except InvalidInputError as exc:
        raise CliError(f"{flag}: {exc}", 2) from None
    return DeletePlan(keyspace, table, request, described, args.dry_run)


async def _matching(store: Any, request: DeleteRequest) -> list[str]:
    """The ids of the stored documents the request names."""
    from hoprag.stores.cassandra.query import MAX_COMPLETE_ROWS

    if request.ids is not None:
        hits = await store.aget(request.ids, include_embeddings=False)
    else:
        query = await store.aprepare(None, request.filter, include_embeddings=False)
        hits = await query.afiltered(limit=MAX_COMPLETE_ROWS)
    return [h.id for h in hits]


async def _run(store: Any, plan: DeletePlan) -> int:
    """List the documents, then delete them unless it is a dry run; the exit status."""
    where = f"{plan.keyspace}.{plan.table}"
    found = await _matching(store, plan.request)
    print(f"{where}: {len(found)} document(s) match {plan.described}")
    for doc_id in found[:SHOWN]:
        print(f"  {json.dumps(doc_id, ensure_ascii=False)}")
    if len(found) > SHOWN:
        print(f"  ... and {len(found) - SHOWN} more")
    if plan.request.ids is not None and len(found) < len(plan.request.ids):
        print(f"{len(plan.request.ids) - len(found)} of the ids are not in {where} (skipped)")
    if plan.dry_run:
        print(f"dry run: would delete {len(found)} document(s) from {where}; nothing deleted")
        return 0
    if not found:
        print(f"deleted 0 documents from {where}")
        return 0
    request = plan.request
    deleted = await store.adelete(request.ids, filter=request.filter)
    print(f"deleted {deleted} document(s) from {where}")
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    """`hoprag delete`: check, connect to the existing table, list, delete, report."""
    from hoprag.embeddings import HashEmbedding
    from hoprag.stores.cassandra.store import CassandraStore
    from hoprag.sync import run_sync

    plan = plan_delete(args)
    session = open_session(args)
    try:
        # Nothing is embedded: a delete reads ids and metadata, never vectors.
        store = CassandraStore(HashEmbedding(8), keyspace=plan.keyspace, table=plan.table,
                               session=session, create_schema=False)  # fmt: skip
        return run_sync(_run, store, plan)
    finally:
        session.cluster.shutdown()
