"""The query options that need parsing: `--edges`, `--filter` and the strategy flags."""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hoprag.cli.common import CliError, clip
from hoprag.errors import InvalidInputError
from hoprag.recipes import recipe
from hoprag.strategies import STRATEGIES, Strategy, strategy_by_name
from hoprag.validation import check_field

if TYPE_CHECKING:
    from hoprag.filters import CompiledFilter

# --- parsing ----------------------------------------------------------------------------------

ACCESS_FILTER_HELP = (
    'serve only the documents passing this filter, given as JSON (e.g. \'{"tenant": "acme"}\'): '
    "the store is a view that no tool argument can reach outside (hoprag.stores.views)"
)


def add_access_filter_argument(parser: argparse.ArgumentParser) -> None:
    """The `--access-filter JSON` flag of the commands that serve a tool."""
    parser.add_argument("--access-filter", metavar="JSON", help=ACCESS_FILTER_HELP)


def access_filter_arg(raw: str | None) -> CompiledFilter | None:
    """`--access-filter`'s JSON checked and compiled as a store view's access filter (exit 2
    naming the flag when it is not JSON or not a non-empty filter), or None when not given."""
    from hoprag.stores.views import compile_access

    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise CliError(f"--access-filter {clip(raw)} is not JSON ({exc})", 2) from None
    try:
        return compile_access(value)
    except InvalidInputError as exc:
        raise CliError(f"--access-filter: {exc}", 2) from None


def parse_edges_arg(text: str) -> list[tuple[str, str]]:
    """`keywords:keywords,links:$id` -> [("keywords", "keywords"), ("links", "$id")]: each item
    exactly one FROM:TO pair of field names (or `$id`), checked as `hoprag.edges.parse_edges`
    and the stores check them."""
    from hoprag.edges import ID_FIELD, parse_edges

    specs = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        sides = [side.strip() for side in part.split(":")]
        if len(sides) != 2 or not all(sides):
            raise CliError(f"--edges item {clip(part)} is not FROM:TO (e.g. keywords:keywords)", 2)
        try:
            for side in sides:
                if side != ID_FIELD:
                    check_field(side, what="an --edges field")
            parse_edges([(sides[0], sides[1])])
        except InvalidInputError as exc:
            raise CliError(f"--edges item {clip(part)}: {exc}", 2) from None
        specs.append((sides[0], sides[1]))
    if not specs:
        raise CliError("--edges names no edge; e.g. --edges keywords:keywords,links:$id", 2)
    return specs


def _filter_value(item: str, raw: str) -> Any:
    """The value of one `--filter` item: JSON when it parses as JSON, else the string."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw
    except (ValueError, RecursionError) as exc:  # e.g. an integer of 5,000 digits
        reason = "nested too deeply" if isinstance(exc, RecursionError) else "a number too long"
        raise CliError(f"--filter {clip(item)}: the value cannot be read ({reason})", 2) from None


def parse_filter_arg(items: Sequence[str]) -> dict[str, Any] | None:
    """`field=value` items; a value that parses as JSON (number, true, "quoted") is used as such,
    anything else as a string. A field given twice is refused (a document has one value
    there), and the filter is checked as every store checks it (`compile_filter`): NaN, an
    object or a nested list is an error here, before anything connects."""
    parsed = filter_arg(items)
    return None if parsed is None else parsed[0]


def filter_arg(items: Sequence[str]) -> tuple[dict[str, Any], CompiledFilter] | None:
    """`parse_filter_arg`'s filter and its compiled form (which a command hands to the library,
    so that the filter is checked once)."""
    from hoprag.filters import compile_filter

    if not items:
        return None
    out: dict[str, Any] = {}
    for item in items:
        field, sep, raw = item.partition("=")
        if not sep or not field:
            raise CliError(f"--filter {clip(item)} is not FIELD=VALUE", 2)
        if field in out:
            raise CliError(
                f"--filter names the field {clip(field)} twice; give each field once (a list "
                "field matches one value: filter on the value most specific to what you want)",
                2,
            )
        out[field] = _filter_value(item, raw)
    try:
        return out, compile_filter(out)
    except InvalidInputError as exc:
        raise CliError(f"--filter: {exc}", 2) from None


# Options that apply to one strategy only: (attribute, flag, strategy).
_STRATEGY_OPTIONS = (
    ("lambda_mult", "--lambda-mult", "mmr"),
    ("beam_width", "--beam-width", "beam"),
    ("decay", "--decay", "beam"),
    ("lexical_weight", "--lexical-weight", "beam"),
    ("edge_weight", "--edge-weight", "beam"),
    ("score_field", "--score-field", "scored"),
)


def strategy_name(args: argparse.Namespace) -> str:
    """The strategy asked for: --strategy, else beam with --recipe (a recipe is a beam), else
    eager; another strategy with --recipe is refused."""
    recipe = getattr(args, "recipe", None)
    chosen = args.strategy or ("beam" if recipe else "eager")
    if recipe and chosen != "beam":
        raise CliError(f"--recipe {recipe} is a beam traversal; --strategy {chosen} "
                       "cannot run it (drop --strategy)", 2)  # fmt: skip
    return chosen


def parse_edge_weights(items: Sequence[str] | None) -> dict[str, float] | None:
    """`--edge-weight FIELD=W` items as {field: weight}, or None when none is given."""
    if not items:
        return None
    out: dict[str, float] = {}
    for item in items:
        name, sep, raw = item.partition("=")
        try:
            weight = float(raw)
        except ValueError:
            weight = math.nan
        if not sep or not name or not math.isfinite(weight):
            raise CliError(f"--edge-weight {item!r}: expected FIELD=W with W a number", 2)
        out[name] = weight
    return out


def check_strategy_options(args: argparse.Namespace) -> None:
    """Refuse an option of another strategy (e.g. --lambda-mult with eager or beam) and a
    --start-k or --adjacent-k that Cassandra cannot answer (at most MAX_K rows per vector
    search), before anything connects."""
    from hoprag.stores.cassandra.guards import MAX_K

    for attr, flag, owner in _STRATEGY_OPTIONS:
        if getattr(args, attr, None) is not None and args.strategy != owner:
            raise CliError(f"{flag} applies to --strategy {owner}, not {args.strategy}", 2)
    for attr, flag in (("start_k", "--start-k"), ("adjacent_k", "--adjacent-k")):
        value = getattr(args, attr, None)
        if value is not None and value > MAX_K:
            raise CliError(
                f"{flag} must be at most {MAX_K} (Cassandra answers at most {MAX_K} rows per "
                f"vector search), got {value}",
                2,
            )


def make_strategy(args: argparse.Namespace) -> Strategy:
    """The strategy named by --strategy with the parameters given on the command line
    (`hoprag.strategies.strategy_by_name`). An option of another strategy (e.g. --lambda-mult
    with beam) is refused, not ignored."""
    args.strategy = strategy_name(args)
    check_strategy_options(args)
    params: dict[str, Any] = {
        k: v
        for k, v in {
            "select_k": args.select_k,
            "start_k": args.start_k,
            "adjacent_k": args.adjacent_k,
            "max_depth": args.max_depth,
            "lambda_mult": args.lambda_mult,
            "beam_width": args.beam_width,
            "lexical_k": getattr(args, "lexical_k", None),
            "decay": getattr(args, "decay", None),
            "lexical_weight": getattr(args, "lexical_weight", None),
            "edge_weights": parse_edge_weights(getattr(args, "edge_weight", None)),
        }.items()
        if v is not None
    }
    if args.score_field is not None:
        check_field(args.score_field, what="--score-field")  # named as the flag
    if args.strategy not in STRATEGIES:
        raise CliError(f"unknown --strategy {args.strategy!r}; use {', '.join(STRATEGIES)}", 2)
    try:
        if getattr(args, "recipe", None):
            return recipe(args.recipe).strategy(**params)
        return strategy_by_name(args.strategy, score_field=args.score_field, **params)
    except ValueError as exc:
        raise CliError(f"bad {args.strategy} parameters: {exc}", 2) from exc
