"""Edges from plain text (`hoprag.text.linking`): titles found in other documents' text on word
boundaries, the longest of overlapping titles, shared and qualified titles, titles too short or
too common skipped with the reason, punctuation and non-ASCII names, and the links followed by
a traversal as ordinary metadata."""

from __future__ import annotations

import random
import unicodedata

import pytest

from hoprag import Document, Eager, traverse
from hoprag.embeddings import HashEmbedding
from hoprag.errors import InvalidInputError
from hoprag.stores import MemoryStore
from hoprag.text import TitleLinker, link_documents, normalisation, normalise


def doc(i: str, title: str, text: str) -> Document:
    return Document(i, text, {"title": title})


def test_titles_are_found_case_insensitively_on_word_boundaries_only() -> None:
    linker = TitleLinker([("a", "Arts"), ("b", "Paris"), ("c", "Saint-Denis")])
    assert linker.links("Modern ARTS in paris; SAINT-DENIS too") == ["a", "b", "c"]
    assert linker.links("starts partisan Parisian Denis Paris2") == []
    assert linker.links("arts.") == ["a"] and linker.links("(Paris)") == ["b"]


def test_of_overlapping_titles_the_longest_wins() -> None:
    linker = TitleLinker([("ny", "New York"), ("nyc", "New York City"), ("york", "York"),
                          ("city", "City Hall")])  # fmt: skip
    assert linker.mentions("From New York City Hall to York") == ["new york city", "york"]
    # A longer match that is not word-bounded does not hide a shorter one that is.
    assert linker.links("the New Yorkers of New York") == ["ny"]


def test_links_are_in_order_of_first_mention_once_each_and_never_to_the_document_itself() -> None:
    linker = TitleLinker([("x", "Xanadu"), ("y", "Yonder")])
    assert linker.links("Yonder, Xanadu, yonder and Xanadu") == ["y", "x"]
    assert linker.links("Xanadu mentions Yonder", exclude="x") == ["y"]


def test_whitespace_and_unicode_forms_do_not_hide_a_title() -> None:
    linker = TitleLinker([("z", "Zoë Kravitz"), ("m", "Málaga CF"), ("k", "東京タワー")])
    decomposed = "Zoe\u0308   kravitz"  # e + combining diaeresis, three spaces
    assert linker.links(f"{decomposed} at MÁLAGA\ncf near 東京タワー.") == ["z", "m", "k"]
    assert linker.links("Zoe Kravitz") == []  # a different name
    assert normalise("  A\u00a0B\tC ") == "a b c"


def test_a_shared_title_links_to_every_holder_up_to_max_shared_then_is_skipped() -> None:
    shared = [("m1", "Mercury"), ("m2", "Mercury"), ("m3", "Mercury")]
    assert TitleLinker(shared, max_shared=3).links("Mercury rises") == ["m1", "m2", "m3"]
    narrow = TitleLinker(shared, max_shared=2)
    assert narrow.links("Mercury rises") == []
    assert narrow.report.skipped["ambiguous"] == 1
    assert narrow.report.examples["ambiguous"] == ["mercury"]


def test_a_qualified_title_is_found_without_its_qualifier_unless_another_holds_that_title() -> None:
    linker = TitleLinker([("film", "Ed Wood (film)"), ("man", "Ed Wood"),
                          ("song", "Blue Moon (song)")])  # fmt: skip
    assert linker.links("Ed Wood directed it") == ["man"]
    assert linker.links("the film Ed Wood (film) and Blue Moon") == ["film", "song"]
    plain = TitleLinker([("song", "Blue Moon (song)")], strip_qualifiers=False)
    assert plain.links("Blue Moon") == []


def test_aliases_a_user_gives_link_like_titles_but_never_over_an_exact_title() -> None:
    linker = TitleLinker([("ibm", "International Business Machines"), ("blue", "Big Blue")],
                         aliases={"ibm": ["IBM", "Big Blue"]})  # fmt: skip
    assert linker.links("IBM, also Big Blue") == ["ibm", "blue"]
    with pytest.raises(InvalidInputError, match="aliases of document 'ibm' must be a list"):
        TitleLinker([("ibm", "IBM Corp")], aliases={"ibm": "IBM"})


def test_short_and_numeric_titles_are_skipped_with_the_reason() -> None:
    linker = TitleLinker([("a", "It"), ("b", "1999"), ("c", "U-2"), ("d", "Abba")])
    assert linker.links("It was 1999, U-2 and Abba") == ["d"]
    assert linker.report.skipped == {"short": 3, "common": 0, "ambiguous": 0}
    assert TitleLinker([("a", "It")], min_chars=2).links("it") == ["a"]


def test_link_documents_writes_ids_and_reports_degree_and_common_titles() -> None:
    rng = random.Random(3)
    docs = [doc("water", "Water", "Water is wet.")]
    for i in range(300):
        docs.append(doc(f"d{i}", f"Topic {i:03d}",
                        f"water and more water; see Topic {rng.randrange(300):03d}."))  # fmt: skip
    linked, report = link_documents(docs, max_share=0.5, common_after=200)
    assert report.documents == 301 and report.skipped["common"] == 1
    assert report.examples["common"] == ["water"]
    by_id = {d.id: d for d in linked}
    assert "water" not in {i for d in linked for i in d.metadata["mentions"]}
    for d in linked[1:]:
        cited = d.content.rsplit("Topic ", 1)[1].rstrip(".")
        want = [] if f"d{int(cited)}" == d.id else [f"d{int(cited)}"]
        assert d.metadata["mentions"] == want
        assert d.metadata["title"] == by_id[d.id].metadata["title"]
    assert report.links == sum(len(d.metadata["mentions"]) for d in linked)
    assert report.linked == sum(bool(d.metadata["mentions"]) for d in linked)
    assert report.mean_out_degree == pytest.approx(report.links / 301)
    assert "documents linked" in report.summary() and "1 common" in report.summary()
    # The originals are untouched.
    assert "mentions" not in docs[1].metadata


def test_below_common_after_documents_no_title_is_common() -> None:
    docs = [doc(f"d{i}", f"Name{i}", "Shared Title everywhere") for i in range(10)]
    docs.append(doc("s", "Shared Title", "itself"))
    linked, report = link_documents(docs, max_share=0.1, common_after=200)
    assert report.skipped["common"] == 0
    assert all(d.metadata["mentions"] == ["s"] for d in linked[:10])


def test_documents_without_a_title_field_are_known_by_their_id() -> None:
    docs = [Document("Alan Turing", "worked at Bletchley Park"),
            Document("Bletchley Park", "where Alan Turing worked")]  # fmt: skip
    linked, _ = link_documents(docs)
    assert [d.metadata["mentions"] for d in linked] == [["Bletchley Park"], ["Alan Turing"]]


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"field": "$id"}, "field must be a metadata field name"),
        ({"field": ""}, "field must be a metadata field name"),
        ({"max_share": 0}, "max_share must be a fraction in (0, 1]"),
        ({"max_share": True}, "max_share must be a fraction"),
        ({"min_chars": 0}, "min_chars must be an int of at least 1"),
        ({"max_shared": 0}, "max_shared must be an int of at least 1"),
        ({"field": "title"}, "field must be a field other than title_field 'title', got 'title'"),
        ({"field": "name", "title_field": "name"}, "field other than title_field 'name'"),
        ({"title_field": ""}, "title_field must be a metadata field name"),
    ],
)
def test_bad_linking_options_are_invalid_input_naming_them(kwargs: dict, says: str) -> None:
    with pytest.raises(InvalidInputError) as e:
        link_documents([doc("a", "Alpha", "text")], **kwargs)
    assert says in str(e.value)


def test_a_traversal_follows_the_links_from_text_both_ways() -> None:
    docs = [
        doc("q", "Quokka", "The quokka lives on Rottnest Island."),
        doc("r", "Rottnest Island", "An island off Perth."),
        doc("p", "Perth", "A city in Western Australia."),
        doc("x", "Unrelated", "Nothing here."),
    ]
    linked, _ = link_documents(docs)
    store = MemoryStore(HashEmbedding(16))
    store.add(linked)
    forward = traverse("The quokka lives on Rottnest Island.", store=store,
                       edges=[("mentions", "$id")], initial_root_ids=("q",),
                       strategy=Eager(select_k=10, start_k=0, max_depth=2))  # fmt: skip
    assert {(n.id, n.depth) for n in forward} == {("q", 0), ("r", 1), ("p", 2)}
    back = traverse("x", store=store, edges=[("$id", "mentions")], initial_root_ids=("p",),
                    strategy=Eager(select_k=10, start_k=0, max_depth=2))  # fmt: skip
    assert {(n.id, n.depth) for n in back} == {("p", 0), ("r", 1), ("q", 2)}


def test_linking_into_the_title_field_is_refused_and_leaves_the_titles() -> None:
    docs = [doc("a", "Alpha", "see Beta"), doc("b", "Beta", "see Alpha")]
    with pytest.raises(InvalidInputError) as e:
        link_documents(docs, field="title")
    assert e.value.argument == "field" and "would replace the titles" in str(e.value)
    assert [d.metadata["title"] for d in docs] == ["Alpha", "Beta"]


def test_normalise_reads_each_character_once_whatever_the_number_of_distinct_symbols(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Mapping separators took one pass over the text per distinct symbol (1 MB of symbols:
    seconds, under MemoryStore's write lock); one lookup per character keeps it linear."""
    table = normalisation._separators()
    lookups = 0

    class Counting(dict[int, int]):
        def __getitem__(self, key: int) -> int:
            nonlocal lookups
            lookups += 1
            return super().__getitem__(key)

    monkeypatch.setattr(normalisation, "_separators", lambda: Counting(table))
    symbols = [chr(c) for c in range(0x2190, 0x2400)]  # arrows, mathematical, technical: So/Sm
    text = "".join(symbols) * 20 + " Ada Lovelace"
    assert normalise(text) == "ada lovelace"
    # One lookup per character of the NFKC form (a few symbols expand: "∬" is "∫∫"), not
    # one pass per each of the 624 distinct symbols.
    assert lookups <= len(unicodedata.normalize("NFKC", text))
