"""Edges from plain text for a table already loaded (`hoprag link --table`): every document is
read page by page (`CassandraStore.adocuments`), linked in memory as a file is
(`hoprag.text.linking.link_documents`, optionally `hoprag.text.phrases.link_phrases`), and the
documents whose metadata changed get it replaced in place (`CassandraStore.aupdate_metadata`:
content, embedding and lexical terms untouched, tokens and declared fields follow).

A field the table's documents already hold is refused, naming it and how many hold it,
unless `overwrite` is given: linking would replace what they hold. Linking reads only titles
and content, which it does not change, so the same table gives the same links: an
interrupted run, run again with `overwrite`, finds the documents it updated already holding
their links and writes only the rest. A writer changing the table meanwhile can have its
metadata replaced by what this read: link a table while nothing else writes to it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hoprag.documents import Document
from hoprag.errors import invalid
from hoprag.text import LinkReport, check_link_options, link_documents, link_phrases


@dataclass(frozen=True)
class TableLinks:
    """What `alink_table` did: the linking report, documents read, documents updated (their
    metadata changed), and with phrases the documents holding at least one."""

    report: LinkReport
    documents: int
    updated: int
    phrased: int | None = None


async def alink_table(
    store: Any,
    *,
    field: str = "mentions",
    aliases: Mapping[str, Iterable[str]] | None = None,
    strip_qualifiers: bool = True,
    min_chars: int = 4,
    max_shared: int = 3,
    max_share: float = 0.05,
    phrases: str | None = None,
    phrase_docs: int = 3,
    overwrite: bool = False,
    read: Callable[[int], None] | None = None,
    written: Callable[[int, int], None] | None = None,
) -> TableLinks:
    """Link every document of the CassandraStore's table (see the module docstring): `field`
    gets the ids of the documents whose titles its text mentions (`link_documents`' options),
    `phrases` (when given) the rare names it shares (`link_phrases`). `read(n)` is called as
    pages arrive, `written(done, total)` as updates complete. Options are checked before
    anything is read; InvalidInputError names `field` (or `phrases`) when a document of the
    table already holds it and `overwrite` is false, before anything is written."""
    check_link_options(field=field, min_chars=min_chars, max_shared=max_shared,
                       max_share=max_share)  # fmt: skip
    if phrases is not None:
        link_phrases([], field=phrases, max_documents=phrase_docs)  # checks the options
    docs: list[Document] = []
    async for page in store.adocuments():
        docs.extend(page)
        if read is not None:
            read(len(docs))
    if not overwrite:
        _refuse_held(docs, {"field": field, "phrases": phrases})
    linked, report = link_documents(docs, field=field, aliases=aliases,
                                    strip_qualifiers=strip_qualifiers, min_chars=min_chars,
                                    max_shared=max_shared, max_share=max_share)  # fmt: skip
    phrased = None
    if phrases is not None:
        linked = link_phrases(linked, field=phrases, max_documents=phrase_docs)
        phrased = sum(bool(d.metadata[phrases]) for d in linked)
    changed = [new for old, new in zip(docs, linked, strict=True) if new.metadata != old.metadata]
    await store.aupdate_metadata(changed, progress=written)
    return TableLinks(report, len(docs), len(changed), phrased)


def _refuse_held(docs: list[Document], fields: Mapping[str, str | None]) -> None:
    """Raise InvalidInputError naming the first of `fields` (argument -> field name; None is
    skipped) that a document of `docs` already holds, with how many hold it."""
    for argument, name in fields.items():
        if name is None:
            continue
        held = sum(name in d.metadata for d in docs)
        if held:
            raise invalid(argument, name, "a field no document of the table holds",
                          hint=f"{held} of {len(docs)} documents hold {name!r}; give "
                          "overwrite=True (hoprag link --overwrite) to replace it")  # fmt: skip
