"""`hoprag fields declare` and `hoprag fields list`: a table's declared fields."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hoprag.cli.common import CliError, Progress, clip, open_session
from hoprag.termsafe import safe, safe_json

if TYPE_CHECKING:
    pass

# --- fields -----------------------------------------------------------------------------------


def parse_field_kinds(items: Sequence[str]) -> dict[str, str]:
    """`FIELD=KIND` arguments as a checked declaration (KIND: number, date or entity)."""
    from hoprag.stores.cassandra.fields import check_declaration

    if not items:
        raise CliError("hoprag fields declare needs FIELD=KIND arguments, e.g. year=number", 2)
    out: dict[str, str] = {}
    for item in items:
        field, sep, kind = item.partition("=")
        if not sep:
            raise CliError(
                f"{clip(safe(item))}: expected FIELD=KIND with KIND number, date or entity", 2
            )
        out[field] = kind
    return check_declaration(out)


def open_fields_store(args: argparse.Namespace, session: Any) -> Any:
    """The CassandraStore of an existing --table (no schema is created)."""
    from hoprag.stores.cassandra.names import check_name
    from hoprag.stores.cassandra.store import CassandraStore

    return CassandraStore(
        None,
        keyspace=check_name(args.keyspace, what="keyspace"),
        table=check_name(args.table, what="table"),
        session=session,
        create_schema=False,
    )


def cmd_fields_declare(args: argparse.Namespace) -> int:
    """`hoprag fields declare`: declare fields on an existing table, backfilling them."""
    from hoprag.stores.cassandra.catalog import LoadCatalog

    kinds = parse_field_kinds(args.pairs)
    if args.concurrency < 1:
        raise CliError(f"--concurrency must be >= 1, got {args.concurrency}", 2)
    session = open_session(args)
    try:
        store = open_fields_store(args, session)
        entry = LoadCatalog(session, store.keyspace).get(store.table)
        progress = Progress(entry.written if entry else None, label=f"backfill {store.table}")
        start = time.monotonic()
        declared = store.declare_fields(
            kinds,
            progress=progress.update,
            concurrency=args.concurrency,
            timeout=args.timeout,
        )
        progress.close()
        shown = ", ".join(f"{f}={k}" for f, k in declared.items())
        print(f"{store.keyspace}.{store.table} declares {shown} "
              f"({time.monotonic() - start:.1f}s)")  # fmt: skip
        return 0
    finally:
        session.cluster.shutdown()


def cmd_fields_list(args: argparse.Namespace) -> int:
    """`hoprag fields list`: the declared fields of a table."""
    session = open_session(args)
    try:
        store = open_fields_store(args, session)
        rows = [
            {"field": d.field, "kind": d.kind, "column": d.column,
             "state": "ready" if d.ready else "incomplete", "list_valued": d.list_valued}
            for d in store.fields.values()
        ]  # fmt: skip
        if args.json:
            sys.stdout.write(safe_json(rows) + "\n")
            return 0
        if not rows:
            print(f"{store.keyspace}.{store.table} declares no fields")
            return 0
        print(f"{'field':<24} {'kind':<7} {'column':<26} {'state':<10} list-valued")
        for r in rows:
            print(f"{safe(r['field']):<24} {r['kind']:<7} {r['column'] or '-':<26} "
                  f"{r['state']:<10} {'yes' if r['list_valued'] else 'no'}")  # fmt: skip
        return 0
    finally:
        session.cluster.shutdown()
