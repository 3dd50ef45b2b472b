"""`hoprag stats`: each loaded table's documents (counted in the table, not taken from the
load catalogue, so deleted documents are not counted), its size on disk and what the
catalogue says of its load."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from hoprag.cli.common import CliError, Progress, open_session
from hoprag.termsafe import safe, safe_json

if TYPE_CHECKING:
    from hoprag.stores.cassandra.catalog import LoadCatalog

# --- stats ------------------------------------------------------------------------------------


SHOW_COUNT_AFTER = 100_000
"""Rows counted before a count shows its progress on stderr."""


def shown_pages(pages: Iterable[list[Any]], label: str) -> Iterator[list[Any]]:
    """The pages of keys, with a progress line on stderr (`label`, keys read) once more than
    SHOW_COUNT_AFTER have passed."""
    count = 0
    progress: Progress | None = None
    for page in pages:
        yield page
        count += len(page)
        if progress is None and count >= SHOW_COUNT_AFTER:
            progress = Progress(None, label=label, unit="keys")
        if progress is not None:
            progress.update(count)
    if progress is not None:
        progress.close()


def count_documents(session: Any, keyspace: str, table: str) -> int | None:
    """The rows of `keyspace.table`, counted page by page (`counting.key_pages`, progress
    shown by `shown_pages`); None for a table that is not there."""
    from hoprag.stores.cassandra.counting import key_pages

    pages = key_pages(session, keyspace, table)
    if pages is None:
        return None
    return sum(len(page) for page in shown_pages(pages, f"count {keyspace}.{table}"))


def stats_rows(catalog: LoadCatalog, table: str | None) -> list[dict[str, Any]]:
    """One summary per catalogued table (only `table` when given): the documents the table
    holds (None when the table is gone), those its last load wrote by the catalogue
    (`loaded`), completeness, dataset, embedding, dimension, MiB on disk, last update."""
    entries = catalog.entries()
    if table is not None:
        entries = [e for e in entries if e.table == table]
        if not entries:
            raise CliError(f"{catalog.keyspace}.{table} is not in hoprag_catalog", 2)
    sizes = catalog.disk_mib() if entries else {}
    return [
        {
            "table": f"{catalog.keyspace}.{e.table}",
            "documents": count_documents(catalog.session, catalog.keyspace, e.table),
            "loaded": e.written,
            "complete": e.complete,
            "dataset": json.loads(e.source).get("dataset"),
            "embedding": e.embedding,
            "dimension": e.dimension,
            "disk_mib": sizes.get(e.table),
            "updated": e.updated.isoformat() if e.updated else None,
        }
        for e in entries
    ]


def print_stats(rows: list[dict[str, Any]], keyspace: str) -> None:
    """The stats as a text table, `(incomplete)` marking a load that did not finish and
    `(no table)` a catalogued table that is gone."""
    if not rows:
        print(f"no hoprag tables in keyspace {keyspace}")
        return
    print(f"{'table':<28} {'documents':>9}  {'disk MiB':>8}  embedding   dataset")
    for o in rows:
        mark = "" if o["complete"] else " (incomplete)"
        count = o["documents"]
        if count is None:
            count, mark = "-", f"{mark} (no table)"
        print(f"{safe(o['table']):<28} {count:>9}  {o['disk_mib'] or 0:>8}  "
              f"{safe(o['embedding']):<10}  {safe(o['dataset'])}{mark}")  # fmt: skip


def cmd_stats(args: argparse.Namespace) -> int:
    """`hoprag stats`: the keyspace's loaded tables, their documents counted, as a table or
    JSON."""
    from hoprag.stores.cassandra.catalog import LoadCatalog
    from hoprag.stores.cassandra.names import check_name

    keyspace = check_name(args.keyspace, what="keyspace")
    table = check_name(args.table, what="table") if args.table is not None else None
    session = open_session(args)
    try:
        rows = stats_rows(LoadCatalog(session, keyspace), table)
        if args.json:
            sys.stdout.write(safe_json(rows) + "\n")
        else:
            print_stats(rows, keyspace)
        return 0
    finally:
        session.cluster.shutdown()
