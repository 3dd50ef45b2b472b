"""`hoprag ask`: the films search tool from the command line."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from hoprag.cli.common import CliError, make_embedding, open_session, warm_up
from hoprag.cli.options import access_filter_arg, add_access_filter_argument
from hoprag.cli.query import check_html_path, open_query_store
from hoprag.errors import InvalidInputError
from hoprag.termsafe import safe, safe_json

# --- ask --------------------------------------------------------------------------------------

ASK_FOLLOW_UP = 3
"""The exit status of `hoprag ask` when it asks back (an ambiguous or unknown name)."""


def _ask_flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def add_ask_arguments(a: argparse.ArgumentParser) -> None:
    """`hoprag ask`'s flags: one per parameter of the films tool (its description as help),
    the table and the output options."""
    from hoprag.tools import Limit, Range, film_parameters

    a.add_argument("--table", default="films", help="a table loaded by `hoprag load films`")
    for p in film_parameters():
        kind = p.kind if isinstance(p, Range) else int if isinstance(p, Limit) else str
        desc = getattr(p, "description", "")
        a.add_argument(
            _ask_flag(p.name), dest=f"tool_{p.name}", metavar=p.name.upper(), type=kind, help=desc
        )
    a.add_argument("--embedding", help="override the table's embedding (minilm, hash[:DIM])")
    a.add_argument("--json", action="store_true", help="print the answer as JSON")
    a.add_argument("--explain", action="store_true", help="print the statements and stats")
    a.add_argument("--html", metavar="FILE", help="also write the results as one HTML page")
    add_access_filter_argument(a)
    a.set_defaults(ann_overquery=1)


def check_ask_args(args: argparse.Namespace) -> dict[str, Any]:
    """The tool arguments of `hoprag ask`, checked as the tool checks them (names, enums,
    ranges, one scope), before anything connects."""
    from hoprag.stores.cassandra.names import check_name
    from hoprag.tools import film_parameters
    from hoprag.tools.films import FILM_ORDER_FIELD
    from hoprag.tools.schema import build_args_model
    from hoprag.tools.tool import check_call

    args.keyspace = check_name(args.keyspace, what="keyspace")
    args.table = check_name(args.table, what="table")
    if args.json and args.explain:
        raise CliError("--explain applies to the text output, not --json (the JSON holds the "
                       "statements and stats)", 2)  # fmt: skip
    if args.html is not None:
        check_html_path(args.html)
    params = film_parameters()
    given = {p.name: getattr(args, f"tool_{p.name}") for p in params}
    given = {k: v for k, v in given.items() if v is not None}
    try:
        model = build_args_model("film_search", "films", params)
        check_call(model, params, given, order_field=FILM_ORDER_FIELD, noun="films")
    except InvalidInputError as exc:  # name the flag, not the parameter
        raise CliError(f"{_ask_flag(exc.argument or '')}: {exc}", 2) from None
    args.access = access_filter_arg(args.access_filter)
    return given


def _short(value: Any) -> Any:
    """A statement's parameter for the text output: long lists of numbers (vectors) cut."""
    if isinstance(value, list) and len(value) > 8 and all(isinstance(v, float) for v in value):
        return f"<vector of {len(value)}>"
    if isinstance(value, list):
        return [_short(v) for v in value]
    return value


def print_ask_answer(answer: Any, explain: bool) -> None:
    """The results as a numbered table of the tool's year and title fields (or the follow-up
    question), then with `explain` the statements with their parameters and the search's
    stats."""
    from hoprag.tools.answer import field_of

    if answer.follow_up is not None:
        print(safe(answer.follow_up.question))
    elif not answer.nodes:
        print(safe(answer.text))
    else:
        title_field, year_field = answer.title_field, answer.year_field
        print(f"{'#':>3}  {'id':<12} {safe(year_field):>4}  {'score':>6}  {safe(title_field)}")
        for i, n in enumerate(answer.nodes, 1):
            year, title = field_of(n, year_field), field_of(n, title_field)
            score = n.similarity_score
            shown = "\u2013" if math.isnan(score) else f"{score:.3f}"  # a listing scores nothing
            print(f"{i:>3}  {safe(n.id):<12} {safe('' if year is None else year):>4}  "
                  f"{shown:>6}  {safe('' if title is None else title)}")  # fmt: skip
    if not explain:
        return
    print()
    for s in answer.statements:
        params = s.parameters if s.operation != "cql" else _short(s.parameters)
        print(f"{s.operation:<8} {safe(s.text)}")
        print(f"{'':<8} {safe(json.dumps(params, ensure_ascii=False))}")
    if answer.stats is not None:
        print()
        print(answer.stats.explain())


def cmd_ask(args: argparse.Namespace) -> int:
    """`hoprag ask`: check the tool arguments, connect, load the embedding model (saying so on
    stderr), run the films tool, print; exit 3 with the follow-up question when a name needs
    one."""
    from hoprag.tools import film_search_tool

    given = check_ask_args(args)  # before connecting
    embedding = make_embedding(args.embedding) if args.embedding else None
    session = open_session(args)
    try:
        store = open_query_store(args, session, embedding)
        if args.access is not None:
            store = store.restricted(args.access)
        warm_up(store.embedding)
        answer = film_search_tool(store).run(**given)
        if args.json:
            sys.stdout.write(safe_json(answer.to_dict()) + "\n")
        else:
            print_ask_answer(answer, args.explain)
        if args.html is not None and not answer.is_follow_up:
            title = f"hoprag ask on {args.keyspace}.{args.table}"
            Path(args.html).write_text(answer.html(title=title), encoding="utf-8")
            print(f"wrote {safe(args.html)} ({len(answer.nodes)} nodes)", file=sys.stderr)
        return ASK_FOLLOW_UP if answer.is_follow_up else 0
    finally:
        session.cluster.shutdown()
