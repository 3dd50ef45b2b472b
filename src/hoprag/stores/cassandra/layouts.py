"""Table layouts a `CassandraStore` can read and write: the query texts, the bound values of
metadata conditions, and the decoding of rows into Documents.

* `HopragLayout` — hoprag's own table (cql/documents.cql): `id, content, embedding, metadata`
  (JSON text, types round-trip) and `tokens set<text>` with one SAI index. A metadata equality
  (edge or `$eq` filter condition) is `tokens CONTAINS ?` bound to `tokens.token(field,
  value)`; `$ne`, `$nin` and `$exists` are decided after the read on the decoded metadata by
  the shared evaluator (`hoprag.filters.matches`); ranges are refused until the field can be
  declared as a typed column.
* `CassioLayout` — the table LangChain's `Cassandra` vector store writes through cassio's
  `MetadataVectorCassandraTable`: `row_id, body_blob, vector, attributes_blob,
  metadata_s map<text,text>` with SAI on `vector` and on `ENTRIES(metadata_s)`. A condition is
  `metadata_s[?] = ?`: for a scalar field bound to (field, cassio's string form of the value);
  for a field listed in `list_fields` (lists shredded by langchain-graph-retriever's
  `ShreddingTransformer`) bound to (`field→json.dumps(value)`, `"§"`). Only equality can be
  asked of it (`$eq`, `$in`, `$or` of them): cassio keeps every value as a string.

Every value is a bound parameter; only the validated keyspace/table names are interpolated.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from hoprag.documents import Document
from hoprag.edges import FrozenDict, nested_get
from hoprag.errors import InvalidInputError, invalid
from hoprag.filters import CompiledFilter, Condition
from hoprag.filters import matches as filter_matches
from hoprag.stores.base import Hit
from hoprag.stores.cassandra import fields as fl
from hoprag.stores.cassandra import lexicon, schema, vectors
from hoprag.stores.cassandra import tokens as tok

if TYPE_CHECKING:
    from hoprag.stores.cassandra.config import CassandraConfig

SHRED_DELIMITER = "→"  # U+2192, langchain-graph-retriever's ShreddingTransformer default
SHRED_VALUE = "§"  # U+00A7, its static value
SHREDDED_KEYS = "__shredded_keys"

Bound = tuple[Any, ...]
"""The bound values of one `Layout.condition_clause`."""

Clause = tuple[str, Bound]
"""One WHERE clause of a query, with its bind markers, and the values bound to them."""


def metadata_json(metadata: Mapping[str, Any]) -> str:
    """The metadata as compact JSON (checked by `validation.check_json` beforehand)."""
    return json.dumps(metadata, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _doc(doc_id: str, content: str | None, metadata: dict[str, Any], emb: Any) -> Document:
    doc = Document(doc_id, content or "", metadata)
    if emb is not None:
        # Decoded from a float32 column (finite, right dimension): skip the per-element
        # re-validation Document.__post_init__ would do.
        doc.embedding = emb
    return doc


class RowHit(Hit):
    """A Hit over one result row, decoded into its Document on first access to `document`.
    The id and score are known at once; a hop's rows that the coordinator drops unread (most
    of them when a strategy needs few new nodes) are never decoded."""

    __slots__ = ("_doc", "_id", "_layout", "_row", "_vector")
    _doc: Document | None
    _id: str
    _layout: Layout
    _row: Sequence[Any] | None
    _vector: NDArray[np.float64] | None

    def __init__(
        self, row: Sequence[Any], layout: Layout, vector: Any, score: float | None
    ) -> None:
        _set = object.__setattr__
        _set(self, "_id", row[0])
        _set(self, "_row", row)
        _set(self, "_layout", layout)
        _set(self, "_vector", vector)
        _set(self, "_doc", None)
        _set(self, "score", score)

    @property
    def document(self) -> Document:
        """The row's Document, decoded on first access."""
        doc = self._doc
        if doc is None:
            row = self._row
            assert row is not None
            vec = self._vector
            emb = None if vec is None else vectors.VectorList(vec.tolist(), vec)
            doc = _doc(row[0], row[1], self._layout.decode_metadata(row), emb)
            object.__setattr__(self, "_doc", doc)
            object.__setattr__(self, "_row", None)
            object.__setattr__(self, "_vector", None)
        return doc

    @property
    def id(self) -> str:
        """The document's id, without decoding the row."""
        return self._id

    def __reduce__(self) -> tuple[Any, ...]:
        return (Hit, (self.document, self.score))  # pickles as the plain Hit it stands for

    def __eq__(self, other: object) -> bool:
        """Equal to any Hit (plain or lazy) with an equal document and score."""
        if isinstance(other, Hit):
            return (self.document, self.score) == (other.document, other.score)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # like Hit: its Document is mutable


def _cosines(query: Sequence[float], m: NDArray[np.float64]) -> list[float]:
    """Cosine of each row of the float64 matrix `m` with `query` (0 for a zero vector). Each
    row's dot product is its own reduction, so a document's score does not depend on the other
    rows of its page (a BLAS matrix-vector product can differ in the last bit with them)."""
    q = vectors.as_array(query)
    norms = np.linalg.norm(m, axis=1) * float(np.linalg.norm(q))
    dots = np.einsum("ij,j->i", m, q)
    safe = np.where(norms == 0.0, 1.0, norms)
    out: list[float] = np.where(norms == 0.0, 0.0, dots / safe).tolist()
    return out


class Layout:
    """Query texts and row decoding for one table (see the module docstring)."""

    id_col: str
    vector_col: str
    condition_clause: str
    """One WHERE clause for one metadata condition, with its bind markers."""

    def __init__(self, keyspace: str, table: str) -> None:
        self.keyspace = keyspace
        self.table = table
        self.fq = f"{keyspace}.{table}"
        self.fields: fl.FieldSet = fl.FieldSet()
        """The table's declared fields (set by the store at set-up and by a migration)."""
        self.lexical = False
        """Whether the table keeps the lexical index (`lexicon.py`; set by the store at set-up:
        a new table gets it with `lexical=True`, one that has it is always written with it)."""
        self.holders: str | None = None
        """The table key of its holder counts when the table keeps them (`holders.py`; set by
        the store at set-up, as `lexical` is), else None."""

    # --- declared fields (range filters, values catalogue) ---------------------------------
    def declared(self, field: str, op: str) -> fl.DeclaredField:
        """The declared typed field a range `op` on `field` reads, or InvalidInputError naming
        the fix (the migration command) when it is not declared or not migrated yet."""
        if op not in fl.RANGE_OPERATORS:
            raise invalid("op", op, f"one of {', '.join(fl.RANGE_OPERATORS)}")
        decl = self.fields.get(field)
        if decl is None or decl.column is None:
            what = "an entity field" if decl is not None else "not a declared number or date field"
            fix = fl.declare_command(self.keyspace, self.table, {field: "number"})
            raise InvalidInputError(
                f"a range on {field!r} needs a typed column, and {field!r} is {what} of "
                f"{self.fq}: declare it with `{fix}` "
                f"(or 'date'), or `await store.adeclare_fields({{{field!r}: 'number'}})`",
                argument=f"filter[{field!r}]",
                value=op,
                allowed="a range on a declared number or date field",
            )
        if not decl.ready:
            fix = fl.declare_command(self.keyspace, self.table, {field: decl.kind})
            raise InvalidInputError(
                f"the declaration of {field!r} on {self.fq} did not complete (its column is not "
                f"backfilled and indexed yet): run `{fix}` "
                "again to finish it",
                argument=f"filter[{field!r}]",
                value=op,
                allowed="a range on a declared field whose migration completed",
            )
        return decl

    def range_clause(self, field: str, op: str) -> str:
        """The WHERE clause of a range `op` (gt, gte, lt, lte, eq) on a declared number or
        date field, with one bind marker, e.g. `n_year >= ?`."""
        decl = self.declared(field, op)
        return f"{decl.column} {fl.RANGE_OPERATORS[op]} ?"

    def range_value(self, field: str, op: str, value: Any) -> Any:
        """A range bound converted to the column's type: an exact Decimal for a number field
        (an int or float, not a bool), microseconds since the epoch for a date field (an ISO
        date string); InvalidInputError naming the field and operator otherwise."""
        decl = self.declared(field, op)
        out = fl.column_value(decl.kind, value)
        if out is None:
            allowed = "a number (int or float, not a bool)"
            if decl.kind == "date":
                allowed = "an ISO date string ('YYYY-MM-DD' or 'YYYY-MM-DDTHH:MM:SS[Z]')"
            raise invalid(f"filter[{field!r}] ${op}", value, allowed)
        return out

    def list_valued_in(self, docs: Sequence[Document]) -> set[str]:
        """The declared typed fields in which one of `docs` holds a list."""
        return {
            d.field
            for d in self.fields.typed()
            if any(isinstance(nested_get(doc.metadata, d.field), list) for doc in docs)
        }

    def entity_entries(self, metadata: Any) -> set[tuple[str, str]]:
        """(field, value) of every string a document holds in a declared entity field."""
        return fl.entity_entries(self.fields.entities(), metadata)

    def list_marker(self, field: str) -> str:
        """The `tokens` entry of documents whose declared typed `field` holds a list (their
        typed column is null): read them with `tokens CONTAINS ?` and check after the read."""
        return fl.list_marker(field)

    # --- to be provided by each layout -----------------------------------------------------
    def base_columns(self) -> list[str]:
        """The columns every read selects: id and content first, then the metadata's."""
        raise NotImplementedError

    def conditions(self, field: str, value: Any) -> list[Bound]:
        """The bound values of the `condition_clause`s (ANDed) that express `field` equal to /
        containing `value`."""
        raise NotImplementedError

    def clauses(self, field: str, value: Any) -> list[Clause]:
        """The clauses (ANDed) that express `field` equal to / containing `value`."""
        return [(self.condition_clause, b) for b in self.conditions(field, value)]

    def pushed(self, condition: Condition) -> list[list[Clause]] | None:
        """How the node answers `condition`: alternatives (any may hold), each a list of
        clauses (all must hold); None when it is checked after the read (the default for
        anything but an equality)."""
        if condition.op == "$eq":
            return [self.clauses(condition.field, condition.value)]
        return None

    def bind(self, conditions: Sequence[Condition]) -> list[tuple[Clause, ...]]:
        """The clauses the node answers for one branch of a filter, as alternatives (each
        clause once within one; usually there is exactly one). Conditions with no clauses are
        checked after the read."""
        alternatives: list[list[Clause]] = [[]]
        for c in conditions:
            options = self.pushed(c)
            if options is not None:
                alternatives = [a + o for a in alternatives for o in options]
        return [tuple(dict.fromkeys(a)) for a in alternatives]

    def create_statements(self, dimension: int) -> list[str]:
        """The statements that create the table and its indexes when missing."""
        raise NotImplementedError

    def index_names(self) -> list[str]:
        """The names of the SAI indexes `create_statements` makes."""
        raise NotImplementedError

    def decode_metadata(self, row: Sequence[Any]) -> dict[str, Any]:
        """A row's metadata as the document had it."""
        raise NotImplementedError

    def check_filter(self, compiled: CompiledFilter) -> None:
        """Raise `InvalidInputError` for a condition this table cannot answer exactly."""
        raise NotImplementedError

    def matches(
        self, row: Sequence[Any], compiled: CompiledFilter, bound: Sequence[tuple[Clause, ...]]
    ) -> bool:
        """Client-side check of the filter on a row (`compiled`, whose branches' pushed
        conditions are the clauses `bound`)."""
        raise NotImplementedError

    def filter_columns(self) -> list[str]:
        """Extra columns `matches` needs."""
        raise NotImplementedError

    def insert_query(self) -> str:
        """The INSERT of one document (bind markers for `insert_values`)."""
        raise NotImplementedError

    def insert_values(self, doc: Document, embedding: list[float]) -> tuple[Any, ...]:
        """The bound values of `insert_query` for a checked document and embedding."""
        raise NotImplementedError

    def metadata_query(self) -> str:
        """The UPDATE of a row's metadata alone (hoprag's table)."""
        raise NotImplementedError

    def metadata_values(self, doc: Document) -> tuple[Any, ...]:
        """The bound values of `metadata_query`."""
        raise NotImplementedError

    # --- shared query building -------------------------------------------------------------
    def ann_query(self, clauses: Sequence[str], include_embeddings: bool) -> str:
        """`SELECT ... [WHERE clause AND ...] ORDER BY vec ANN OF ? LIMIT ?`. Bound values:
        (query vector for the score unless embeddings are read, *the clauses' values, query
        vector, k)."""
        cols = self.base_columns()
        if include_embeddings:
            cols.append(self.vector_col)
        else:
            cols.append(f"similarity_cosine({self.vector_col}, ?)")
        where = ""
        if clauses:
            where = " WHERE " + " AND ".join(clauses)
        return (
            f"SELECT {', '.join(cols)} FROM {self.fq}{where} "
            f"ORDER BY {self.vector_col} ANN OF ? LIMIT ?"
        )

    def pool_query(self, clauses: Sequence[str]) -> str | None:
        """`SELECT id, tokens, similarity ... ORDER BY vec ANN OF ? LIMIT ?` for a candidate
        pool (`pool.py`), or None when the table has no tokens column to match edges on.
        Bound values: (query vector, *the clauses' values, query vector, limit)."""
        return None

    def get_query(self, include_embeddings: bool, with_score: bool, with_filter: bool) -> str:
        """`SELECT ... WHERE pk IN ?` (one list bind marker). Bound values: ([query vector for
        the score], ids)."""
        cols = self.base_columns()
        if include_embeddings:
            cols.append(self.vector_col)
        elif with_score:
            cols.append(f"similarity_cosine({self.vector_col}, ?)")
        if with_filter:
            cols.extend(self.filter_columns())
        return f"SELECT {', '.join(cols)} FROM {self.fq} WHERE {self.id_col} IN ?"

    def hits(
        self,
        rows: Sequence[Sequence[Any]],
        *,
        include_embeddings: bool,
        query: Sequence[float] | None,
    ) -> list[Hit]:
        """Rows -> Hits (`RowHit`s: each document is decoded when first used). With
        embeddings read, the score is computed here in float64 from the vector; otherwise it
        is Cassandra's `similarity_cosine` ((1 + cos) / 2) converted back to plain cosine
        (2s - 1)."""
        nb = len(self.base_columns())
        scores: list[float | None] = [None] * len(rows)
        embs: list[Any] = [None] * len(rows)
        if include_embeddings:
            with_vec = [i for i, row in enumerate(rows) if row[nb] is not None]
            if with_vec:
                # Raw bytes from `vectors.raw_result_vectors` (or the driver's lists): one
                # matrix for the page; each document's embedding is made from its row.
                m = vectors.as_matrix([rows[i][nb] for i in with_vec])
                m.setflags(write=False)  # its rows are shared by the page's embeddings
                for i, row in zip(with_vec, m, strict=True):
                    embs[i] = row
                if query is not None:
                    for i, c in zip(with_vec, _cosines(query, m), strict=True):
                        scores[i] = c
        elif query is not None:
            scores = [None if row[nb] is None else 2.0 * float(row[nb]) - 1.0 for row in rows]
        return [
            RowHit(row, self, emb, score)
            for row, emb, score in zip(rows, embs, scores, strict=True)
        ]


class HopragLayout(Layout):
    """hoprag's own table: JSON metadata plus the indexed `tokens` set."""

    id_col = "id"
    vector_col = "embedding"
    condition_clause = "tokens CONTAINS ?"

    def base_columns(self) -> list[str]:
        return ["id", "content", "metadata"]

    def conditions(self, field: str, value: Any) -> list[Bound]:
        return [(tok.token(field, value),)]

    def create_statements(self, dimension: int) -> list[str]:
        return schema.table_statements(self.keyspace, self.table, dimension, lexical=self.lexical)

    def pool_query(self, clauses: Sequence[str]) -> str | None:
        where = " WHERE " + " AND ".join(clauses) if clauses else ""
        return (
            f"SELECT id, tokens, similarity_cosine(embedding, ?) FROM {self.fq}{where} "
            "ORDER BY embedding ANN OF ? LIMIT ?"
        )

    def index_names(self) -> list[str]:
        return schema.index_names(self.table)

    def decode_metadata(self, row: Sequence[Any]) -> dict[str, Any]:
        raw = row[2]
        return json.loads(raw) if raw else {}

    def filter_columns(self) -> list[str]:
        return []  # the metadata is among the base columns

    def check_filter(self, compiled: CompiledFilter) -> None:
        """A range needs a declared number or date field whose migration completed
        (`declared` names the fix otherwise); it is never answered by a scan."""
        for c in compiled.conditions:
            if not c.is_range:
                continue
            try:
                self.declared(c.field, c.op[1:])
            except InvalidInputError as exc:  # name the place in the filter, as the compiler does
                raise InvalidInputError(
                    str(exc), argument=c.where or exc.argument, value=c.value, allowed=exc.allowed
                ) from None

    def pushed(self, condition: Condition) -> list[list[Clause]] | None:
        """Equalities through `tokens`; a range through the field's typed column (`n_<field> >=
        ?`). Documents whose field holds a list have a null column and the field's list
        marker in `tokens`: when the field ever held a list, the range has a second
        alternative, the marker, and those documents are checked after the read."""
        if not condition.is_range:
            return super().pushed(condition)
        op = condition.op[1:]
        decl = self.declared(condition.field, op)
        typed: list[Clause] = [
            (
                self.range_clause(condition.field, op),
                (self.range_value(condition.field, op, condition.value),),
            )
        ]
        if not decl.list_valued:
            return [typed]
        return [typed, [(self.condition_clause, (self.list_marker(condition.field),))]]

    def matches(
        self, row: Sequence[Any], compiled: CompiledFilter, bound: Sequence[tuple[Clause, ...]]
    ) -> bool:
        """The shared evaluator on the row's decoded metadata."""
        return filter_matches(compiled, self.decode_metadata(row))

    def insert_query(self) -> str:
        """The INSERT of a document, with the declared typed columns this store writes."""
        typed = [d.column for d in self.fields.typed() if d.column is not None]
        lexical = ["lexicon", "lexicon_length"] if self.lexical else []
        cols = ["id", "content", "embedding", "metadata", "tokens", *lexical, *typed]
        marks = ", ".join("?" * len(cols))
        return f"INSERT INTO {self.fq} ({', '.join(cols)}) VALUES ({marks})"

    def insert_values(self, doc: Document, embedding: list[float]) -> tuple[Any, ...]:
        """The INSERT's values: the content's terms when the table keeps the lexical index,
        the metadata's tokens and typed columns (`_indexed`)."""
        tokens, typed = self._indexed(doc.metadata)
        lexical: tuple[Any, ...] = ()
        if self.lexical:
            terms = lexicon.terms_of(doc.content)
            lexical = (terms, sum(terms.values()))
        row = (doc.id, doc.content, embedding, metadata_json(doc.metadata), tokens)
        return (*row, *lexical, *typed)

    def metadata_query(self) -> str:
        """The UPDATE that replaces a row's metadata, its tokens and its declared typed
        columns, leaving content, embedding and lexicon as they are."""
        typed = [f"{d.column} = ?" for d in self.fields.typed() if d.column is not None]
        sets = ", ".join(["metadata = ?", "tokens = ?", *typed])
        return f"UPDATE {self.fq} SET {sets} WHERE id = ?"

    def metadata_values(self, doc: Document) -> tuple[Any, ...]:
        """The bound values of `metadata_query` for a checked document."""
        tokens, typed = self._indexed(doc.metadata)
        return (metadata_json(doc.metadata), tokens, *typed, doc.id)

    def _indexed(self, metadata: Mapping[str, Any]) -> tuple[set[str], list[Any]]:
        """The `tokens` of the metadata and the values of the declared typed columns: null
        unless the field holds a number (an ISO date); a list in a typed field adds its
        marker token instead."""
        tokens = tok.metadata_tokens(metadata)
        typed: list[Any] = []
        for decl in self.fields.typed():
            value, is_list = fl.typed_value(decl, metadata)
            if is_list:
                tokens.add(fl.list_marker(decl.field))
            typed.append(value)
        return tokens, typed


def cassio_string(value: Any) -> str:
    """cassio 0.1.10's string form of an indexed metadata value (`_coerce_string`): str as is,
    bool -> "true"/"false", int -> JSON of the float ("1.0"), float -> JSON, None -> "null",
    anything else -> str(value)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        return json.dumps(float(value))
    if isinstance(value, float):
        return json.dumps(value)
    return str(value)


def _thaw(value: Any) -> Any:
    if isinstance(value, FrozenDict):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


class CassioLayout(Layout):
    """A LangChain `Cassandra` / cassio `MetadataVectorCassandraTable` table (`row_id,
    body_blob, vector, attributes_blob, metadata_s`).

    Metadata comes back as LangChain reads it: `attributes_blob` JSON merged with
    `metadata_s`, whose values cassio stored as strings (an int 1 as "1.0", True as "true").
    Lists shredded by langchain-graph-retriever's `ShreddingTransformer` (`field→json` keys
    with value "§" and a `__shredded_keys` entry) are restored into lists, as
    `ShreddingTransformer.restore_documents` does. Edges and filters on the `list_fields`
    query the shredded keys (`metadata_s['field→"v"'] = '§'`); other fields query
    `metadata_s[field] = cassio's string of the value`. Rows are written in the same format,
    shredding every list."""

    id_col = "row_id"
    vector_col = "vector"
    condition_clause = "metadata_s[?] = ?"

    def __init__(self, keyspace: str, table: str, list_fields: Collection[str] = ()) -> None:
        super().__init__(keyspace, table)
        self.list_fields = frozenset(list_fields)

    def base_columns(self) -> list[str]:
        return ["row_id", "body_blob", "attributes_blob", "metadata_s"]

    def shredded_key(self, field: str, value: Any) -> str:
        """langchain-graph-retriever's `ShreddingTransformer.shredded_key`."""
        return f"{field}{SHRED_DELIMITER}{json.dumps(_thaw(value))}"

    def conditions(self, field: str, value: Any) -> list[Bound]:
        """A shredded list field: one `metadata_s[field→json(v)] = '§'` per element (a list
        value means "contains all of them": shredding keeps no whole-list form). Any other
        field: `metadata_s[field] = cassio's string of the value` (for a list that is its
        Python repr, which is what cassio stored for an unshredded list)."""
        if field in self.list_fields:
            values = value if isinstance(value, list | tuple) else [value]
            return [(self.shredded_key(field, v), SHRED_VALUE) for v in values]
        return [(field, cassio_string(_thaw(value)))]

    def decode_metadata(self, row: Sequence[Any]) -> dict[str, Any]:
        """cassio's merge (`attributes_blob` JSON, then `metadata_s`) followed by
        `ShreddingTransformer.restore_documents` for the keys named in `__shredded_keys`."""
        attrs = json.loads(row[2]) if row[2] else {}
        md: dict[str, Any] = {**attrs, **(row[3] or {})}
        shredded_raw = md.pop(SHREDDED_KEYS, None)
        if not shredded_raw:
            return md
        shredded = set(json.loads(shredded_raw))
        out: dict[str, Any] = {}
        for key, value in md.items():
            base, sep, encoded = key.partition(SHRED_DELIMITER)
            if sep and base in shredded and value == SHRED_VALUE:
                out.setdefault(base, []).append(json.loads(encoded))
            else:
                out[key] = value
        return out

    def filter_columns(self) -> list[str]:
        return []  # metadata_s is already among the base columns

    def create_statements(self, dimension: int) -> list[str]:
        return cassio_table_statements(self.keyspace, self.table, dimension)

    def index_names(self) -> list[str]:
        return cassio_index_names(self.table)

    def check_filter(self, compiled: CompiledFilter) -> None:
        """Only equality: cassio keeps metadata values as strings in `metadata_s`."""
        for c in compiled.conditions:
            if c.op != "$eq":
                raise invalid(
                    c.where or f"filter[{c.field!r}][{c.op!r}]",
                    c.value,
                    "an equality (a plain value, $eq, $in, or $or / $and of them) on a "
                    "cassio-mode table",
                    hint="cassio keeps metadata as strings in metadata_s, which can only be "
                    "matched for equality; $ne, $nin and $exists work on hoprag's own table "
                    "(mode='hoprag')",
                )

    def matches(
        self, row: Sequence[Any], compiled: CompiledFilter, bound: Sequence[tuple[Clause, ...]]
    ) -> bool:
        """Some branch's equalities hold in the row's `metadata_s` (cassio's strings)."""
        entries: Mapping[str, str] = row[3] or {}
        return any(all(entries.get(key) == value for _, (key, value) in b) for b in bound)

    def insert_query(self) -> str:
        return (
            f"INSERT INTO {self.fq} (row_id, body_blob, vector, attributes_blob, metadata_s) "
            "VALUES (?, ?, ?, ?, ?)"
        )

    def insert_values(self, doc: Document, embedding: list[float]) -> tuple[Any, ...]:
        """The row LangChain's `Cassandra.add_documents` would write for the document after
        langchain-graph-retriever's `ShreddingTransformer()` (every list shredded)."""
        entries: dict[str, str] = {}
        shredded: list[str] = []
        for key, value in doc.metadata.items():
            if isinstance(value, list | tuple):
                shredded.append(key)
                for item in value:
                    entries[f"{key}{SHRED_DELIMITER}{json.dumps(item)}"] = SHRED_VALUE
            else:
                entries[key] = cassio_string(value)
        if shredded:
            entries[SHREDDED_KEYS] = json.dumps(shredded)
        return (doc.id, doc.content, embedding, None, entries)


def cassio_table_statements(keyspace: str, table: str, dimension: int) -> list[str]:
    """CREATE statements for an empty cassio-layout table (the same columns and SAI indexes
    as cassio 0.1.10's `MetadataVectorCassandraTable` with a TEXT row_id)."""
    fq = f"{keyspace}.{table}"
    sai = "'org.apache.cassandra.index.sai.StorageAttachedIndex'"
    return [
        f"CREATE TABLE IF NOT EXISTS {fq} (row_id text PRIMARY KEY, body_blob text, "
        f"vector vector<float, {int(dimension)}>, attributes_blob text, "
        "metadata_s map<text, text>)",
        f"CREATE CUSTOM INDEX IF NOT EXISTS idx_vector_{table} ON {fq} (vector) USING {sai}",
        f"CREATE CUSTOM INDEX IF NOT EXISTS eidx_metadata_s_{table} ON {fq} "
        f"(ENTRIES(metadata_s)) USING {sai}",
    ]


def cassio_index_names(table: str) -> list[str]:
    """The SAI index names cassio gives a table."""
    return [f"idx_vector_{table}", f"eidx_metadata_s_{table}"]


def layout_for(config: CassandraConfig) -> Layout:
    """The layout of the table `config` names, by its mode."""
    if config.mode == "cassio":
        return CassioLayout(config.keyspace, config.table, config.list_fields)
    return HopragLayout(config.keyspace, config.table)
