"""`CassandraConfig`: every option of a `CassandraStore`, checked once when it is made.

A bad option raises `InvalidInputError` naming the option, the bad value and what is allowed
(pydantic's `ValidationError` is translated; the allowed text is the field's description).
`CassandraOptions` is the same set of options as keyword arguments of `CassandraStore`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypedDict

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from hoprag.errors import InvalidInputError, invalid
from hoprag.stores.cassandra import guards
from hoprag.stores.cassandra.names import check_name
from hoprag.validation import MAX_DIMENSION, check_field

Mode = Literal["hoprag", "cassio"]
_BOOL = "True or False"


class CassandraConfig(BaseModel):
    """The options of a `CassandraStore` (immutable). Field descriptions say what each allows."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    keyspace: str = Field(description="a plain CQL name")
    table: str = Field(description="a plain CQL name")
    dimension: int | None = Field(
        None, ge=1, le=MAX_DIMENSION, description=f"an int in 1..{MAX_DIMENSION} or None"
    )
    """The embedding dimension; None: the existing table's, else the length of a probe text's
    embedding."""
    replication_factor: int = Field(1, ge=1, le=10, description="an int in 1..10")
    """Used only when the keyspace has to be created (SimpleStrategy)."""
    max_in_flight: int = Field(128, ge=1, le=32768, description="an int in 1..32768")
    """Most queries the store has in flight at once, one bound shared by every traversal,
    event loop and thread using the store."""
    mode: Mode = Field("hoprag", description="'hoprag' or 'cassio'")
    """"hoprag" (hoprag's own table) or "cassio" (a LangChain/cassio table)."""
    list_fields: tuple[str, ...] = Field((), description="field names (mode='cassio' only)")
    """cassio mode: metadata fields whose lists were shredded by langchain-graph-retriever's
    `ShreddingTransformer` (graph-retriever's `nested_metadata_fields`)."""
    fields: tuple[tuple[str, str], ...] = Field(
        (),
        description="a mapping of plain field names to 'number', 'date' or 'entity' "
        "(mode='hoprag' only)",
    )
    """Declared fields (`fields.py`): typed columns for range filters on number and date
    fields, the values catalogue for `aresolve` on entity fields. Kept with the table, so a
    store opened later without `fields=` knows them; declaring new fields on an existing
    table takes the migration (`CassandraStore.adeclare_fields`, `hoprag fields declare`)."""
    lexical: bool = Field(False, description=_BOOL)
    """Keep a lexical (BM25) index beside the table for lexical starts (`lexicon.py`): a new
    or empty table gets it; a table that has it keeps it, whether later stores ask or not
    (mode='hoprag' only)."""
    holder_counts: bool = Field(False, description=_BOOL)
    """Keep, per metadata value, how many documents hold it (`holders.py`, `aholders`): a new
    or empty table gets the counts; a table that has them keeps them, whether later stores ask
    or not (mode='hoprag' only)."""
    create_schema: bool = Field(True, description=_BOOL)
    """Create the table and its indexes when missing; with False a missing table raises
    `InvalidInputError` naming `table`."""
    create_keyspace: bool = Field(True, description=_BOOL)
    """Create the keyspace when missing (with `create_schema`)."""
    request_timeout: float | None = Field(
        None, gt=0, description="a number of seconds > 0, or None"
    )
    """Per-request timeout in seconds (None: the session's)."""
    write_consistency: str | None = Field(
        None, description=f"one of {', '.join(guards.CONSISTENCY_LEVELS)}, or None"
    )
    """Consistency level of writes (None: the session's, LOCAL_ONE). Vector searches always
    run at ONE (Cassandra forces it): a traversal that must survive a node's death with
    replication reads complete data only where every replica got every write ("ALL")."""
    fast_vectors: bool = Field(True, description=_BOOL)
    """Decode and encode vectors with numpy and read the store's own vector columns as raw
    bytes (`vectors.py`; identical results)."""
    wait_indexes: bool = Field(True, description=_BOOL)
    """After creating the schema, wait until its SAI indexes are queryable."""
    ann_overquery: int = Field(
        1, ge=1, le=guards.MAX_OVERQUERY, description=f"an int in 1..{guards.MAX_OVERQUERY}"
    )
    """Every vector search asks Cassandra for `k * ann_overquery` rows (at most 1000) and keeps
    the `k` best. 1 asks for `k`, as graph-retriever and LangChain do; 2 buys recall at small
    k on freshly loaded tables (docs/cassandra.md)."""
    candidate_pool: int = Field(
        0, ge=0, le=guards.MAX_K, description=f"an int in 0..{guards.MAX_K} (0: no pool)"
    )
    """Each traversal also reads the `candidate_pool` documents most similar to the query (ids,
    scores and tokens) beside its start search, and answers from them every edge whose value
    at least `adjacent_k` of them hold, instead of a filtered vector search, which Cassandra
    5.0 pays in proportion to the documents sharing the value (`pool.py`). 0: no pool. On
    `bench_scale`'s power-law corpus a pool of 1000 made 1M-document traversals from depth 2
    up to a quarter faster (half, right after a load) and 10k ones 2-5x slower
    (docs/benchmarks.md): worth trying where some values are shared by a percent or more of
    many documents."""

    hub_holders: int = Field(
        guards.DEFAULT_HUB_HOLDERS, ge=0, description="an int >= 0 (0: no hubs)"
    )
    """On a table that keeps holder counts (`holder_counts`), each traversal reads its edges'
    holders and plans each edge (`plans.py`): an edge whose value at least `hub_holders`
    documents hold is answered from a candidate pool read for the run, one no document holds
    is not read, one of few holders is read whole (`read_holders`), the others are searched;
    the results are the filtered searches' either way. 0 (the default,
    `guards.DEFAULT_HUB_HOLDERS`): no hub plans."""

    read_holders: int = Field(
        guards.DEFAULT_READ_HOLDERS, ge=0, le=guards.MAX_READ_HOLDERS,
        description=f"an int in 0..{guards.MAX_READ_HOLDERS} (0: no edge is read whole)",
    )  # fmt: skip
    """On a table that keeps holder counts, an edge whose value at most `read_holders`
    documents hold is answered by reading every holder (an SAI equality read, no vector
    search) and keeping the `k` most similar (`plans.py`): the filtered search's answer, for
    less node CPU. Planned before `hub_holders`. Default 32 (`guards.DEFAULT_READ_HOLDERS`);
    0 reads no edge whole and, with `hub_holders` 0, plans nothing and reads no counts."""

    astra: bool = Field(False, description=_BOOL)
    """Hold the store to Astra DB Serverless's rules (`astra.py`; on in
    `CassandraStore.from_astra`): writes at LOCAL_QUORUM unless `write_consistency` names
    another level Astra accepts (ONE, ANY and LOCAL_ONE are refused), the store's own session
    at that level, and a schema that would take the database past Astra's table or SAI index
    limits refused before anything is created."""

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _translate(exc) from None

    @model_validator(mode="before")
    @classmethod
    def _astra_writes(cls, data: Any) -> Any:
        """In Astra mode, writes default to the level Astra wants (`astra.WRITE_CONSISTENCY`)."""
        if isinstance(data, dict) and data.get("astra") is True:
            if data.get("write_consistency") is None:
                from hoprag.stores.cassandra.astra import WRITE_CONSISTENCY

                return {**data, "write_consistency": WRITE_CONSISTENCY}
        return data

    @field_validator("keyspace", "table", mode="before")
    @classmethod
    def _plain_name(cls, value: Any, info: Any) -> str:
        """Keyspace and table are plain CQL names, kept in lower case."""
        return check_name(value, what=str(info.field_name))

    @field_validator("write_consistency", mode="before")
    @classmethod
    def _consistency(cls, value: Any) -> str | None:
        """A consistency level name, upper case."""
        return guards.check_consistency(value)

    @field_validator("list_fields", mode="before")
    @classmethod
    def _fields(cls, value: Any) -> tuple[str, ...]:
        """Any collection of field names (not one string), as a tuple."""
        if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
            raise invalid("list_fields", value, "a collection of field names")
        return tuple(check_field(f, what="a list_fields entry") for f in value)

    @field_validator("fields", mode="before")
    @classmethod
    def _declared(cls, value: Any) -> tuple[tuple[str, str], ...]:
        """A declaration of field kinds (`fields.check_declaration`), kept as (field, kind)
        pairs so that the config stays hashable; `field_kinds` gives the mapping."""
        from hoprag.stores.cassandra.fields import check_declaration

        if isinstance(value, tuple) and all(isinstance(p, tuple) and len(p) == 2 for p in value):
            value = dict(value)
        return tuple(check_declaration(value).items())

    @property
    def field_kinds(self) -> dict[str, str]:
        """The declared fields as a mapping of field name to kind."""
        return dict(self.fields)

    @model_validator(mode="after")
    def _list_fields_need_cassio(self) -> CassandraConfig:
        """Shredded list fields exist only in cassio tables; declared fields only in hoprag
        tables."""
        if self.list_fields and self.mode != "cassio":
            raise invalid("list_fields", list(self.list_fields), "empty unless mode='cassio'")
        if self.fields and self.mode != "hoprag":
            raise invalid(
                "fields", self.field_kinds, "empty unless mode='hoprag'",
                hint="declared fields (typed columns, the values catalogue) need hoprag's "
                "own table layout",
            )  # fmt: skip
        if self.lexical and self.mode != "hoprag":
            hint = "the lexical index is kept in hoprag's own table layout"
            raise invalid("lexical", True, "False unless mode='hoprag'", hint=hint)
        if self.holder_counts and self.mode != "hoprag":
            hint = "holder counts are kept from hoprag's own table's tokens"
            raise invalid("holder_counts", True, "False unless mode='hoprag'", hint=hint)
        return self

    @model_validator(mode="after")
    def _astra_accepts_the_writes(self) -> CassandraConfig:
        """In Astra mode, a write consistency Astra refuses is refused here."""
        from hoprag.stores.cassandra.astra import REFUSED_WRITE_CONSISTENCY

        if self.astra and self.write_consistency in REFUSED_WRITE_CONSISTENCY:
            raise invalid(
                "write_consistency", self.write_consistency,
                "a level Astra DB accepts for writes (not ONE, ANY or LOCAL_ONE) when astra=True",
                hint="Astra DB Serverless refuses writes at ONE, ANY and LOCAL_ONE; LOCAL_QUORUM "
                "is its default",
            )  # fmt: skip
        return self


class CassandraOptions(TypedDict, total=False):
    """`CassandraConfig`'s fields other than keyspace and table, as keyword arguments."""

    dimension: int | None
    replication_factor: int
    max_in_flight: int
    mode: Mode
    list_fields: Iterable[str]
    fields: Mapping[str, str]
    lexical: bool
    holder_counts: bool
    create_schema: bool
    create_keyspace: bool
    request_timeout: float | None
    write_consistency: str | None
    fast_vectors: bool
    wait_indexes: bool
    ann_overquery: int
    candidate_pool: int
    hub_holders: int
    read_holders: int
    astra: bool


def _translate(exc: ValidationError) -> InvalidInputError:
    """The `InvalidInputError` for the first problem pydantic found."""
    first = exc.errors()[0]
    cause = first.get("ctx", {}).get("error")
    if isinstance(cause, InvalidInputError):
        return cause
    loc = first.get("loc", ())
    name = str(loc[0]) if loc else "CassandraConfig"
    fields = CassandraConfig.model_fields
    if name not in fields:
        known = ", ".join(fields)
        return InvalidInputError(
            f"unknown option {name!r}; the options are {known}",
            argument=name,
            value=first.get("input"),
            allowed=known,
        )
    return invalid(name, first.get("input"), fields[name].description or "a valid value")
