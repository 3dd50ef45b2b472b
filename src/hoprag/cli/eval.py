"""`hoprag eval`: retrieval quality on multi-hop QA data (see `hoprag.evaluation`).

`hoprag eval --dataset 2wiki --data DIR --json OUT` reads the data set's files in DIR, runs the
methods (all by default) over its questions on a MemoryStore and prints recall@5 and recall@10
with 95% intervals, milliseconds per query, results per query and recall per question type;
OUT gets the same figures as JSON, with the ids each question got. `--store cassandra` runs
them on a CassandraStore (lexical index kept) in `--keyspace`, table `eval_<dataset>_<digest
of the corpus and embedding>`: loaded on the first run (recorded in the keyspace's load
catalogue when complete), reused by the next. The files looked for in DIR: for `2wiki`,
`2wiki*corpus*.json` and `2wiki*question*.json`; for `musique` and `hotpotqa`, every
`musique*.json[l]` or `hotpotqa*.json[l]` (their corpus is the union of the files'
paragraphs); for `jsonl` (your own), `passages.jsonl` and `questions.jsonl`. `--edges
FROM:TO,...` adds the method `edges` (the recipe's traversal over your edges); `--recipe` names
the recipe `recommended` runs. Everything is checked before the corpus is embedded."""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
from pathlib import Path
from typing import Any

DATASETS = ("2wiki", "musique", "hotpotqa", "jsonl")


def add_eval_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    """Register `hoprag eval` on the command line's subparsers (`common`: the connection
    options, used with --store cassandra)."""
    from hoprag.evaluation.methods import DEFAULT_METHODS, METHODS
    from hoprag.recipes import MULTIHOP, RECIPES

    ev = sub.add_parser("eval", parents=[common],
                        help="retrieval quality on multi-hop QA data (recall@5, @10)")  # fmt: skip
    ev.add_argument("--dataset", required=True, choices=DATASETS)
    ev.add_argument("--data", required=True, metavar="DIR", help="the directory of its files")
    ev.add_argument("--questions", type=int, help="run this many questions, drawn with --seed")
    ev.add_argument("--seed", type=int, default=0, help="the draw of --questions (default 0)")
    ev.add_argument("--question-ids", metavar="FILE", help="run the questions whose ids FILE "
                    "lists (one per line, or a JSON list)")  # fmt: skip
    ev.add_argument("--store", default="memory", choices=["memory", "cassandra"],
                    help="where the corpus is held (default memory; cassandra: in "
                    "--keyspace)")  # fmt: skip
    ev.add_argument("--ann-overquery", type=int, default=1,
                    help="with --store cassandra: ask for N x k rows per vector search and keep "
                    "the best k (default 1)")  # fmt: skip
    ev.add_argument("--embedding", default="minilm", help="minilm (default) or hash[:DIM]")
    ev.add_argument("--methods",
                    help=f"comma-separated, of {', '.join(METHODS)} (default: "
                    f"{', '.join(DEFAULT_METHODS)}, and edges with --edges)")  # fmt: skip
    ev.add_argument("--recipe", choices=sorted(RECIPES), default=MULTIHOP.name,
                    help="the recipe the recommended method runs (default multihop)")  # fmt: skip
    ev.add_argument("--edges", metavar="FROM:TO,...",
                    help="your edges, e.g. refs:$id: the method edges runs the recipe's "
                    "traversal over them instead of the recipe's edges")  # fmt: skip
    ev.add_argument("--json", required=True, metavar="OUT", help="write the figures here")
    ev.set_defaults(func=cmd_eval)


def data_files(dataset: str, data: Path) -> list[Path]:
    """The data set's files in `data` (corpus first for 2wiki), or CliError naming what was
    looked for."""
    from hoprag.cli.common import CliError

    if not data.is_dir():
        raise CliError(f"--data {data} is not a directory", 2)
    if dataset == "jsonl":
        own = [data / "passages.jsonl", data / "questions.jsonl"]
        missing = [p.name for p in own if not p.is_file()]
        if missing:
            raise CliError(f"--data {data} has no {' or '.join(missing)} (jsonl needs both: "
                           "docs/quality.md, 'Your own questions')", 2)  # fmt: skip
        return own
    if dataset == "2wiki":
        wanted = ["2wiki*corpus*.json", "2wiki*question*.json"]
        found = [sorted(data.glob(p)) for p in wanted]
        if not all(found):
            raise CliError(f"--data {data} has no {' or '.join(wanted)} (2wiki needs both)", 2)
        return [found[0][0], found[1][0]]
    files = sorted(p for p in data.glob(f"{dataset}*.json*") if p.suffix in (".json", ".jsonl"))
    if not files:
        raise CliError(f"--data {data} has no {dataset}*.json or {dataset}*.jsonl file", 2)
    return files


def _question_ids(path: str) -> list[str]:
    from hoprag.cli.common import CliError

    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"--question-ids {path} cannot be read ({exc})", 2) from None
    try:
        ids = json.loads(text)
    except json.JSONDecodeError:
        ids = [line.strip() for line in text.splitlines() if line.strip()]
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        raise CliError(f"--question-ids {path} must list question ids (strings)", 2)
    return ids


def _methods_asked(args: argparse.Namespace) -> list[str]:
    """--methods (with `edges` exactly when --edges is given), else the default methods and
    `edges` with --edges; --edges parsed into `args.edges`."""
    from hoprag.cli.common import CliError
    from hoprag.cli.options import parse_edges_arg
    from hoprag.evaluation.methods import DEFAULT_METHODS

    if args.edges is not None:
        args.edges = parse_edges_arg(args.edges)
    if args.methods is None:
        return [*DEFAULT_METHODS, *(["edges"] if args.edges is not None else [])]
    names = [m.strip() for m in args.methods.split(",")]
    if "edges" in names and args.edges is None:
        raise CliError("--methods edges needs --edges FROM:TO,... (the edges it follows)", 2)
    if args.edges is not None and "edges" not in names:
        raise CliError("--edges is followed by the method edges: add it to --methods", 2)
    return names


def check_own_edges(args: argparse.Namespace, docs: list[Any]) -> None:
    """Refuse --edges naming a field none of the corpus's passages holds, naming the fields
    they hold (before anything is embedded)."""
    from hoprag.cli.common import CliError
    from hoprag.edges import describe_unheld, unheld_fields

    if args.edges is None:
        return
    held = set().union(*(d.metadata for d in docs))
    unheld = unheld_fields(args.edges, held)
    if unheld:
        said = describe_unheld(unheld, held, f"the {len(docs)} passages")
        raise CliError(f"--edges: {said}", 2)


def check_eval_args(args: argparse.Namespace) -> tuple[list[Path], list[str], list[str] | None]:
    """Everything `hoprag eval` can check before reading the data: files, methods, counts,
    the output's directory."""
    from hoprag.cli.common import CliError
    from hoprag.evaluation.run import check_methods

    methods = check_methods(_methods_asked(args))
    from hoprag.stores.cassandra.guards import MAX_OVERQUERY

    if args.ann_overquery != 1 and args.store != "cassandra":
        raise CliError("--ann-overquery applies to --store cassandra", 2)
    if not 1 <= args.ann_overquery <= MAX_OVERQUERY:
        raise CliError(f"--ann-overquery must be 1..{MAX_OVERQUERY}, got {args.ann_overquery}", 2)
    if args.store == "cassandra":
        from hoprag.stores.cassandra.names import check_name

        args.keyspace = check_name(args.keyspace, what="keyspace")
    if args.questions is not None and args.questions < 1:
        raise CliError(f"--questions must be >= 1, got {args.questions}", 2)
    if args.questions is not None and args.question_ids:
        raise CliError("give --questions or --question-ids, not both", 2)
    if not Path(args.json).parent.is_dir():
        raise CliError(f"--json {args.json}: the directory does not exist", 2)
    ids = _question_ids(args.question_ids) if args.question_ids else None
    files = data_files(args.dataset, Path(args.data))
    from hoprag.cli.link import check_not_input

    inputs = [("--question-ids", args.question_ids), *(("the data file", f) for f in files)]
    check_not_input("--json", args.json, inputs)
    return files, methods, ids


def load_set(dataset: str, files: list[Path]) -> Any:
    from hoprag.evaluation import load_2wiki, load_hotpotqa, load_jsonl_set, load_musique

    if dataset == "jsonl":
        return load_jsonl_set(files[0], files[1])
    if dataset == "2wiki":
        return load_2wiki(files[0], files[1])
    return load_musique(files) if dataset == "musique" else load_hotpotqa(files)


def cmd_eval(args: argparse.Namespace) -> int:
    """`hoprag eval`: check, read, sample, load the embedding model (saying so on stderr),
    embed and run, print the table, write the JSON."""
    from hoprag.cli.common import Progress, make_embedding, warm_up
    from hoprag.evaluation.methods import passage_documents
    from hoprag.evaluation.run import aevaluate, sample_questions
    from hoprag.recipes import recipe
    from hoprag.sync import run_sync

    files, methods, ids = check_eval_args(args)
    evalset = load_set(args.dataset, files)
    asked = sample_questions(evalset.questions, count=args.questions, seed=args.seed, ids=ids)
    corpus = passage_documents(evalset.passages)
    check_own_edges(args, corpus[0])
    embedding = make_embedding(args.embedding)
    print(f"{args.dataset}: {len(evalset.passages)} passages, {len(asked)} questions"
          + dropped_note(evalset.dropped))  # fmt: skip
    warm_up(embedding)  # before any progress bar: their rates exclude the model's load
    store = cassandra_store(args, corpus[0], embedding) if args.store == "cassandra" else None
    try:
        progress = Progress(len(asked), label="eval", unit="questions")
        run = functools.partial(aevaluate, evalset, methods=methods, embedding=embedding,
                                questions=asked, progress=progress.update, store=store,
                                corpus=corpus, recipe=recipe(args.recipe),
                                edges=args.edges)  # fmt: skip
        figures = run_sync(run)
        progress.close()
    finally:
        if store is not None:
            store.close()
            store.session.cluster.shutdown()
    figures["store"] = args.store
    if args.store == "cassandra":
        figures["ann_overquery"] = args.ann_overquery
    figures["embedding"] = args.embedding
    print_figures(figures)
    from hoprag.cli.link import write_whole

    write_whole(Path(args.json), [json.dumps(figures, indent=2)])
    return 0


def dropped_note(dropped: dict[str, int]) -> str:
    """ " (N dropped: n1 reason1, n2 reason2)" for the reasons that dropped a question, or ""."""
    reasons = ", ".join(f"{n} {reason}" for reason, n in dropped.items() if n)
    return f" ({sum(dropped.values())} dropped: {reasons})" if reasons else ""


def eval_table(dataset: str, docs: list[Any], embedding: str) -> str:
    """The table name of a corpus in Cassandra: the data set and a digest of every passage
    and the embedding spec, so that another sample or model never reads a stale table."""
    digest = hashlib.sha256(embedding.encode())
    for d in docs:
        digest.update(json.dumps([d.id, d.content, d.metadata], sort_keys=True).encode())
    return f"eval_{dataset}_{digest.hexdigest()[:12]}"


def cassandra_store(args: argparse.Namespace, docs: list[Any], embedding: Any) -> Any:
    """A CassandraStore (lexical index kept) holding the corpus: loaded with a progress bar
    unless the keyspace's load catalogue says an earlier run completed it."""
    from hoprag.cli.common import Progress, embedding_dimension, open_session
    from hoprag.stores.cassandra.catalog import CatalogEntry, LoadCatalog
    from hoprag.stores.cassandra.store import CassandraStore

    keyspace = args.keyspace
    table = eval_table(args.dataset, docs, args.embedding)
    session = open_session(args)
    catalog = LoadCatalog(session, keyspace)
    catalog.create()
    prior = catalog.get(table)
    dimension = embedding_dimension(embedding)
    store = CassandraStore(embedding, keyspace=keyspace, table=table, session=session,
                           dimension=dimension, lexical=True,
                           ann_overquery=args.ann_overquery)  # fmt: skip
    if prior is not None and prior.complete and prior.written == len(docs):
        print(f"the corpus is in {keyspace}.{table} (loaded by an earlier run)")
        return store
    print(f"embedding and loading {len(docs)} passages into {keyspace}.{table}", flush=True)
    progress = Progress(len(docs), label=f"load {args.dataset}")
    store.add(docs, progress=lambda done, _total: progress.update(done))
    progress.close()
    source = json.dumps({"eval": args.dataset, "passages": len(docs)})
    catalog.put(CatalogEntry(table, source, args.embedding, dimension, len(docs), True))
    print(f"loaded {len(docs)} passages into {keyspace}.{table}")
    return store


def print_figures(figures: dict[str, Any]) -> None:
    """The methods side by side: recalls with intervals, time, results; then by type."""
    print(f"{'method':<12} {'recall@5':>8} {'95% CI':>13} {'recall@10':>9} {'ms/q':>7} "
          f"{'results':>7}")  # fmt: skip
    for name, m in figures["methods"].items():
        lo, hi = m["ci95@5"]
        print(
            f"{name:<12} {m['recall@5']:8.3f} {f'{lo:.3f}-{hi:.3f}':>13} "
            f"{m['recall@10']:9.3f} {m['ms_per_query']:7.2f} {m['results_per_query']:7.1f}"
        )
    print(f"(embedding a question: {figures['embedding_ms_per_query']:.1f} ms, not counted)")
    types = sorted({t for m in figures["methods"].values() for t in m["by_type"]})
    print("recall@5 by type: " + "; ".join(
        f"{t} " + ", ".join(f"{n} {m['by_type'][t]['recall@5']:.3f}"
                            for n, m in figures["methods"].items() if t in m["by_type"])
        for t in types))  # fmt: skip
