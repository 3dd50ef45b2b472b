"""The options of the framework retrievers (`hoprag.integrations.langchain`,
`hoprag.integrations.llamaindex`), checked and combined in one place so that both accept the
same options and refuse the same mistakes with the same `InvalidInputError`. Neither framework
is imported here."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from hoprag.edges import parse_edges
from hoprag.errors import InvalidInputError, invalid
from hoprag.filters import Filter
from hoprag.stores.base import Store
from hoprag.strategies import Eager, Strategy

CALL_OPTIONS = ("edges", "filter", "initial_root_ids", "k", "strategy")
"""The options a retriever takes per call (LangChain's `invoke`, LlamaIndex's `with_options`);
each overrides the configured one."""


def check_edges(value: Any) -> Any:
    """`value` unchanged if it parses as edge specs or an edge function."""
    try:
        parse_edges(value)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"edges: {exc}", argument="edges", value=value, allowed="edge specs or an edge function"
        ) from exc
    return value


def check_store(value: Any) -> Store:
    """`value` if it is a hoprag `Store`; the error names the protocol methods it lacks."""
    if not isinstance(value, Store):
        missing = [m for m in ("aprepare", "aadd") if not hasattr(value, m)]
        raise InvalidInputError(
            f"store must be a hoprag Store (MemoryStore, CassandraStore, ...); "
            f"{type(value).__name__} lacks {', '.join(missing) or 'the Store protocol'}",
            argument="store",
            value=value,
            allowed="a hoprag Store",
        )
    return value


def check_k(value: Any) -> int | None:
    """The number of documents to return: an int >= 1, or None (the strategy's `select_k`)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise invalid("k", value, "an int >= 1 (documents to return)")
    return value


def check_strategy(value: Any) -> Strategy:
    """`value` if it is a hoprag `Strategy` instance."""
    if not isinstance(value, Strategy):
        raise invalid("strategy", value, "a hoprag Strategy (Eager, Mmr, Scored, Beam)")
    return value


def check_option_names(
    given: Collection[str], allowed: Sequence[str], *, owner: str, per_call: bool = False
) -> None:
    """Refuse option names outside `allowed`, naming them and listing the allowed ones."""
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        where = "allowed per call" if per_call else "allowed"
        raise InvalidInputError(
            f"unknown {owner} option(s): {', '.join(unknown)}; {where}: {', '.join(allowed)}",
            argument=", ".join(unknown),
            allowed=", ".join(allowed),
        )


@dataclasses.dataclass(frozen=True)
class RetrieverOptions:
    """A retriever's traversal options. `k`, when set, becomes the strategy's `select_k`: the
    traversal admits at most `k` documents and stops there."""

    store: Store
    edges: Any
    strategy: Strategy = dataclasses.field(default_factory=Eager)
    filter: Filter | None = None
    initial_root_ids: Sequence[str] = ()
    k: int | None = None

    @classmethod
    def checked(cls, options: Mapping[str, Any], *, owner: str) -> RetrieverOptions:
        """Options from a retriever's constructor arguments, each checked (the unknown ones
        and bad values are an `InvalidInputError` naming them)."""
        fields = [f.name for f in dataclasses.fields(cls)]
        check_option_names(options, sorted(fields), owner=owner)
        check_store(options.get("store"))
        check_edges(options.get("edges"))
        if "strategy" in options:
            check_strategy(options["strategy"])
        check_k(options.get("k"))
        return cls(**options)

    def override(self, options: Mapping[str, Any], *, owner: str) -> RetrieverOptions:
        """These options with a call's `options` in place of the configured ones, checked.
        A call's own `strategy` keeps its `select_k` unless the call also gives `k`."""
        check_option_names(options, CALL_OPTIONS, owner=owner, per_call=True)
        k = check_k(options.get("k"))
        if "strategy" in options:
            strategy = check_strategy(options["strategy"])
        else:
            strategy = self.strategy
            k = self.k if k is None else k
        edges = check_edges(options["edges"]) if "edges" in options else self.edges
        return dataclasses.replace(
            self,
            edges=edges,
            strategy=strategy,
            filter=options.get("filter", self.filter),
            initial_root_ids=options.get("initial_root_ids", self.initial_root_ids),
            k=k,
        )

    def traversal_arguments(self) -> dict[str, Any]:
        """The keyword arguments of `atraverse` / `traverse` these options stand for."""
        strategy = self.strategy
        if self.k is not None:
            strategy = dataclasses.replace(strategy, select_k=self.k)
        return {
            "store": self.store,
            "edges": self.edges,
            "strategy": strategy,
            "filter": self.filter,
            "initial_root_ids": self.initial_root_ids,
        }
