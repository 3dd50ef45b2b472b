"""`hoprag link`: edges from plain text for a JSONL file (see `hoprag.text.linking`).

`hoprag link --path IN.jsonl --out OUT.jsonl` writes every record of IN again with one more
field, `mentions` by default: the ids of the other records whose titles its text mentions.
`hoprag load jsonl --path OUT.jsonl` then loads it, and the edges `("mentions", "$id")` and
`("$id", "mentions")` follow those mentions; `--phrases FIELD` also adds the capitalised names
a record shares with a few others (`hoprag.text.phrases`), followed by `(FIELD, FIELD)`.
Everything is checked before any text is read, and OUT is written whole or not at all. `hoprag
link --table T` links a table already loaded instead, in place
(`hoprag.stores.cassandra.link_table`)."""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

RESERVED = ("id", "title", "text", "abstract", "date", "metadata")
"""JSONL fields the links may not replace."""


def add_link_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    """Register `hoprag link` on the command line's subparsers (`common`: the connection
    options, used with --table)."""
    lk = sub.add_parser(
        "link",
        parents=[common],
        help="add a field of title mentions to a JSONL file or a loaded table (edges from text)",
        description=__doc__.split("\n\n")[1].replace("\n", " "),
    )
    lk.add_argument("--path", help="the JSONL file to read")
    lk.add_argument("--out", help="the JSONL file to write (not --path)")
    lk.add_argument("--table", help="instead of --path and --out: link this loaded table in place")
    lk.add_argument("--field", default="mentions", help="the field of ids (default mentions)")
    lk.add_argument(
        "--aliases",
        help="a JSON file {id: [alias, ...]}: more names a record is mentioned by",
    )
    lk.add_argument("--min-chars", type=int, default=4, help="shortest title matched (4)")
    lk.add_argument(
        "--max-shared", type=int, default=3, help="most records one title may link to (3)"
    )
    lk.add_argument(
        "--max-share",
        type=float,
        default=0.05,
        help="skip a title mentioned by more than this share of the records (0.05)",
    )
    lk.add_argument(
        "--keep-qualifiers",
        action="store_true",
        help="match 'Ed Wood (film)' only in full, not also as 'Ed Wood'",
    )
    lk.add_argument(
        "--phrases",
        metavar="FIELD",
        help="also add FIELD: the capitalised names each record shares with a few others "
        "(hoprag.text.phrases; follow them with the edge FIELD:FIELD)",
    )
    lk.add_argument(
        "--phrase-docs",
        type=int,
        default=3,
        help="with --phrases: keep a name held by at most this many records (3)",
    )
    lk.add_argument(
        "--overwrite",
        action="store_true",
        help="with --table: replace --field (and --phrases) where documents already hold it",
    )
    lk.add_argument("--json", dest="report", help="also write the report as JSON to this file")
    lk.set_defaults(func=cmd_link)


def check_link_args(args: argparse.Namespace) -> dict[str, list[str]] | None:
    """The checks of `hoprag link` that need no text read; returns the aliases."""
    from hoprag.cli.common import CliError

    if args.table is not None:
        if args.path is not None or args.out is not None:
            raise CliError("--table links a loaded table in place: give it without --path "
                           "and --out", 2)  # fmt: skip
    elif args.overwrite:
        raise CliError("--overwrite applies to --table (--out is a new file)", 2)
    elif args.path is None or args.out is None:
        raise CliError("give --path and --out (a JSONL file), or --table (a loaded table)", 2)
    else:
        _check_files(args)
    if args.report and not Path(args.report).parent.is_dir():
        raise CliError(f"--json {args.report}: the directory does not exist", 2)
    if args.report:
        inputs = [("--path", args.path), ("--out", args.out), ("--aliases", args.aliases)]
        check_not_input("--json", args.report, inputs)
    _check_fields(args)
    from hoprag.text import check_link_options

    check_link_options(field=args.field, min_chars=args.min_chars, max_shared=args.max_shared,
                       max_share=args.max_share)  # fmt: skip
    return _read_aliases(args.aliases) if args.aliases else None


def _check_files(args: argparse.Namespace) -> None:
    """--path is a file, --out a new file in an existing directory."""
    from hoprag.cli.common import CliError

    src, out = Path(args.path), Path(args.out)
    if not src.is_file():
        raise CliError(f"--path {args.path} is not a file (hoprag link reads one)", 2)
    if out.resolve() == src.resolve():
        raise CliError("--out must not be --path: the file read is not overwritten", 2)
    if not out.parent.is_dir():
        raise CliError(f"--out {args.out}: the directory {out.parent} does not exist", 2)


def _check_fields(args: argparse.Namespace) -> None:
    """--field and --phrases name new fields; --phrase-docs is at least 2."""
    from hoprag.cli.common import CliError

    if not args.field or args.field.startswith("$") or args.field in RESERVED:
        raise CliError(
            f"--field must be a new field name, not {args.field!r} (not one of "
            f"{', '.join(RESERVED)}, not starting with '$')",
            2,
        )
    if args.phrases is not None:
        bad = not args.phrases or args.phrases.startswith("$") or args.phrases in RESERVED
        if bad or args.phrases == args.field:
            raise CliError(
                f"--phrases must be a new field name other than --field, not {args.phrases!r}", 2
            )
        if args.phrase_docs < 2:
            raise CliError(f"--phrase-docs must be at least 2, got {args.phrase_docs}", 2)


def _read_aliases(path: str) -> dict[str, list[str]]:
    """The aliases file: a JSON object mapping ids to lists of strings."""
    from hoprag.cli.common import CliError

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CliError(f"--aliases {path} does not exist", 2) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CliError(f"--aliases {path} is not a JSON file: {exc}", 2) from None
    ok = isinstance(data, dict) and all(
        isinstance(v, list) and all(isinstance(a, str) for a in v) for v in data.values()
    )
    if not ok:
        raise CliError(f"--aliases {path} must hold a JSON object {{id: [alias, ...]}}", 2)
    return {str(k): list(v) for k, v in data.items()}


def cmd_link(args: argparse.Namespace) -> int:
    """`hoprag link`: check, read and validate the file, link, write OUT whole, report."""
    from hoprag.cli.common import Progress
    from hoprag.datasets.jsonl import jsonl_records, record_to_document
    from hoprag.text import link_documents

    aliases = check_link_args(args)
    if args.table is not None:
        return link_table(args, aliases)
    records = list(jsonl_records(args.path))
    docs = [record_to_document(r) for r in records]
    progress = Progress(len(docs), label="link")
    linked, report = link_documents(
        docs,
        field=args.field,
        aliases=aliases,
        strip_qualifiers=not args.keep_qualifiers,
        min_chars=args.min_chars,
        max_shared=args.max_shared,
        max_share=args.max_share,
        progress=progress.update,
    )
    progress.close()
    fields = [args.field]
    if args.phrases is not None:
        from hoprag.text import link_phrases

        linked = link_phrases(linked, field=args.phrases, max_documents=args.phrase_docs)
        fields.append(args.phrases)
    replaced = sum(any(f in r for f in fields) for r in records)
    for record, doc in zip(records, linked, strict=True):
        for f in fields:
            record[f] = doc.metadata[f]
    write_whole(Path(args.out), (json.dumps(r, ensure_ascii=False) for r in records))
    print(f"wrote {len(records)} records to {args.out}: {report.summary()}")
    phrased = 0
    if args.phrases is not None:
        phrased = sum(bool(d.metadata[args.phrases]) for d in linked)
        print(f"{phrased} of {len(linked)} records share a name in {args.phrases!r}")
    if replaced:
        print(f"{' and '.join(map(repr, fields))} replaced what {replaced} records held",
              file=sys.stderr)  # fmt: skip
    if args.report:
        figures = {**report.as_dict(), "field": args.field, "replaced": replaced}
        if args.phrases is not None:
            figures |= {"phrases_field": args.phrases, "phrased": phrased}
        write_whole(Path(args.report), [json.dumps(figures, indent=2)])
    return 0


def link_table(args: argparse.Namespace, aliases: dict[str, list[str]] | None) -> int:
    """`hoprag link --table`: read the table, link, update the changed documents, report."""
    from hoprag.cli.common import Progress, open_session
    from hoprag.embeddings import HashEmbedding
    from hoprag.stores.cassandra.link_table import alink_table
    from hoprag.stores.cassandra.names import check_name
    from hoprag.stores.cassandra.store import CassandraStore
    from hoprag.sync import run_sync

    keyspace = check_name(args.keyspace, what="keyspace")
    table = check_name(args.table, what="table")
    session = open_session(args)
    try:
        # Nothing is embedded: the store only reads and updates metadata, never vectors.
        store = CassandraStore(HashEmbedding(8), keyspace=keyspace, table=table,
                               session=session, create_schema=False)  # fmt: skip
        reading = Progress(None, label=f"read {keyspace}.{table}")
        writing: list[Progress] = []

        def written(done: int, total: int) -> None:
            if not writing:
                writing.append(Progress(total, label="update"))
            writing[0].update(done)

        run = functools.partial(alink_table, store, field=args.field, aliases=aliases,
                                strip_qualifiers=not args.keep_qualifiers,
                                min_chars=args.min_chars, max_shared=args.max_shared,
                                max_share=args.max_share, phrases=args.phrases,
                                phrase_docs=args.phrase_docs, overwrite=args.overwrite,
                                read=reading.update,
                                written=written)  # fmt: skip
        done = run_sync(run)
        reading.close()
        for bar in writing:
            bar.close()
    finally:
        session.cluster.shutdown()
    print(f"linked {keyspace}.{table}: {done.report.summary()}; updated {done.updated} of "
          f"{done.documents} documents")  # fmt: skip
    if done.phrased is not None:
        print(f"{done.phrased} of {done.documents} documents share a name in {args.phrases!r}")
    if args.report:
        figures = {**done.report.as_dict(), "field": args.field, "updated": done.updated,
                   "documents": done.documents}  # fmt: skip
        if done.phrased is not None:
            figures |= {"phrases_field": args.phrases, "phrased": done.phrased}
        write_whole(Path(args.report), [json.dumps(figures, indent=2)])
    return 0


def check_not_input(flag: str, out: str, inputs: Iterable[tuple[str, str | Path | None]]) -> None:
    """Raise CliError (exit 2) when the output path `out`, given as `flag`, is the same file
    as one of `inputs` ((what it is, path); None is skipped): the same path once resolved
    (symbolic links and relative paths followed), or, both existing, the same file on disk
    (a hard link). Writing the output there would replace that file."""
    from hoprag.cli.common import CliError

    for name, path in inputs:
        if path is not None and _same_file(Path(out), Path(path)):
            raise CliError(f"{flag} {out} is the same file as {name} {path}: give another "
                           f"file to {flag}", 2)  # fmt: skip


def _same_file(a: Path, b: Path) -> bool:
    if a.resolve() == b.resolve():
        return True
    return a.exists() and b.exists() and os.path.samefile(a, b)


def write_whole(path: Path, lines: Any) -> None:
    """Write `lines` to `path` through a temporary file in the same directory, renamed into
    place at the end: a reader never sees half a file, and a failure leaves none."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for line in lines:
                fh.write(line + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
