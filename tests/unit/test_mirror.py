"""`hoprag.stores.mirror` on MemoryStore: a store mirrored from an edited source holds exactly
the source, only what changed is embedded and written, the report counts each kind, and a
source that is refused or fails part-way deletes nothing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hoprag import Document
from hoprag.embeddings import HashEmbedding
from hoprag.errors import InvalidInputError
from hoprag.stores import MemoryStore
from hoprag.stores.mirror import MirrorReport, amirror, document_digest, mirror


class CountingEmbedding:
    """HashEmbedding(8) that remembers which texts it embedded."""

    def __init__(self) -> None:
        self.inner = HashEmbedding(8)
        self.texts: list[str] = []

    def __call__(self, text: str) -> list[float]:
        self.texts.append(text)
        return self.inner(text)


SOURCE = [Document(f"d{i}", f"text {i}", {"n": i, "tags": ["a", "b"]}) for i in range(6)]


def _edited() -> list[Document]:
    """SOURCE without d1, with d2's text and d3's metadata changed, and a new d9."""
    docs = [d for d in SOURCE if d.id != "d1"]
    docs[1] = Document("d2", "text 2, revised", dict(SOURCE[2].metadata))
    docs[2] = Document("d3", "text 3", {"n": 3, "tags": ["a", "c"]})
    return [*docs, Document("d9", "text 9", {"n": 9})]


async def _held(store: MemoryStore) -> dict[str, tuple[str, dict[str, object]]]:
    return {d.id: (d.content, d.metadata) async for page in store.adocuments() for d in page}


async def test_an_edited_source_is_mirrored_exactly_and_only_changes_are_embedded() -> None:
    model = CountingEmbedding()
    store = MemoryStore(embedding=model)
    first = await amirror(store, SOURCE)
    assert first == MirrorReport(added=6, updated=0, unchanged=0, deleted=0)

    model.texts.clear()
    edited = _edited()
    report = await amirror(store, iter(edited), batch=2)
    assert report == MirrorReport(added=1, updated=2, unchanged=3, deleted=1)
    assert report.summary() == "1 added, 2 updated, 3 unchanged, 1 deleted"
    assert (report.source, report.written) == (6, 3)
    assert sorted(model.texts) == ["text 2, revised", "text 3", "text 9"]
    assert await _held(store) == {d.id: (d.content, d.metadata) for d in edited}

    model.texts.clear()
    again = await amirror(store, edited)
    assert again == MirrorReport(added=0, updated=0, unchanged=6, deleted=0)
    assert model.texts == []


async def test_a_document_with_its_own_embedding_is_also_compared_by_vector() -> None:
    store = MemoryStore()
    docs = [Document("a", "x", {}, [1.0, 0.0]), Document("b", "y", {}, [0.0, 1.0])]
    await amirror(store, docs)
    moved = [Document("a", "x", {}, [1.0, 0.0]), Document("b", "y", {}, [0.5, 0.5])]
    assert await amirror(store, moved) == MirrorReport(0, 1, 1, 0)
    (hit,) = store.get(["b"])
    assert hit.document.embedding == [0.5, 0.5]


async def test_a_source_that_fails_part_way_deletes_nothing() -> None:
    store = MemoryStore(embedding=HashEmbedding(8))
    await amirror(store, SOURCE)

    def broken() -> Iterator[Document]:
        yield Document("new", "a new one")
        raise OSError("the source went away")

    with pytest.raises(OSError, match="went away"):
        await amirror(store, broken(), batch=1)
    assert set(await _held(store)) == {d.id for d in SOURCE} | {"new"}


async def test_an_id_given_twice_is_refused_naming_it_and_deletes_nothing() -> None:
    store = MemoryStore(embedding=HashEmbedding(8))
    await amirror(store, SOURCE)
    twice = [Document("z", "one"), Document("y", "two"), Document("z", "three")]
    with pytest.raises(InvalidInputError, match=r"documents\[2\]\.id must be an id not given") as e:
        await amirror(store, twice, batch=2)
    assert e.value.value == "z"
    assert len(await _held(store)) == len(SOURCE) + 2


async def test_an_empty_source_is_refused_and_deletes_nothing() -> None:
    store = MemoryStore(embedding=HashEmbedding(8))
    await amirror(store, SOURCE)
    with pytest.raises(InvalidInputError, match="would delete every document"):
        await amirror(store, [])
    assert len(store) == len(SOURCE)


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"documents": "not documents"}, "documents"),
        ({"documents": Document("a", "one")}, "documents"),
        ({"batch": 0}, "batch"),
        ({"batch": True}, "batch"),
        ({"progress": "loud"}, "progress"),
    ],
)
async def test_bad_arguments_name_the_argument_before_anything_is_read(
    kwargs: dict[str, object], argument: str
) -> None:
    store = MemoryStore(embedding=HashEmbedding(8))
    call: dict[str, object] = {"documents": SOURCE, **kwargs}
    with pytest.raises(InvalidInputError) as e:
        await amirror(store, **call)  # type: ignore[arg-type]
    assert e.value.argument == argument
    assert len(store) == 0


async def test_progress_reports_reading_comparing_and_deleting() -> None:
    store = MemoryStore(embedding=HashEmbedding(8))
    await amirror(store, SOURCE)
    seen: list[tuple[str, int]] = []
    await amirror(store, SOURCE[:4], batch=3, progress=lambda p, n: seen.append((p, n)))
    assert seen == [("read", 0), ("read", 6), ("compare", 0), ("compare", 3), ("compare", 4),
                    ("delete", 0), ("delete", 2)]  # fmt: skip


def test_the_sync_mirror_does_what_the_async_one_does() -> None:
    store = MemoryStore(embedding=HashEmbedding(8))
    assert mirror(store, SOURCE) == MirrorReport(6, 0, 0, 0)
    assert mirror(store, _edited()) == MirrorReport(1, 2, 3, 1)


def test_the_digest_follows_content_and_metadata_not_key_order() -> None:
    base = document_digest(Document("a", "text", {"x": 1, "y": [1, 2]}))
    assert len(base) == 16
    assert document_digest(Document("other id", "text", {"y": [1, 2], "x": 1})) == base
    for changed in (
        Document("a", "text.", {"x": 1, "y": [1, 2]}),
        Document("a", "text", {"x": 1.0, "y": [1, 2]}),
        Document("a", "text", {"x": 1, "y": [2, 1]}),
        Document("a", "text", {"x": 1, "y": [1, 2], "z": None}),
    ):
        assert document_digest(changed) != base, changed
