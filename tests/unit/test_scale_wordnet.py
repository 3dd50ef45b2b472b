"""scripts/scale_wordnet.py on data files the test writes in WordNet's line format: lemmas
become keywords (lower case, an adjective's marker dropped, satellites counted as
adjectives), hypernym and instance-hypernym pointers become links and nothing else does,
license lines are skipped, a malformed line is refused naming it, and the corpus's queries,
anchors and probes come from the data, the same for the same seed."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"

LICENSE_LINE = "  1 This software and database is being provided to you, the LICENSEE\n"
NOUNS = [
    "00001740 03 n 01 entity 0 003 ~ 00001930 n 0000 ~ 00002137 n 0000 ~ 00002452 n 0000 "
    "| that which is perceived or known or inferred to have its own distinct existence  ",
    "00001930 03 n 01 physical_entity 0 002 @ 00001740 n 0000 ~ 00002452 n 0000 "
    "| an entity that has physical existence  ",
    "00002137 03 n 02 abstraction 0 Abstract_Entity 0 002 @ 00001740 n 0000 "
    "+ 00692329 v 0101 | a general concept formed by extracting common features  ",
    "00002452 03 n 02 thing 0 entity 1 002 @i 00001930 n 0000 @ 00001740 n 0000 "
    '| a separate and self-contained entity; "a thing of beauty"  ',
]
VERBS = [
    "00001740 29 v 02 breathe 0 entity 0 002 @ 00002325 v 0000 ~ 00002325 v 0000 "
    "02 + 02 00 + 08 00 | draw air into, and expel out of, the lungs  ",
    "00002325 29 v 01 respire 1 000 01 + 02 00 | undergo respiration  ",
]
ADJS = [
    "00002730 00 a 01 acroscopic 0 001 ! 00002843 a 0101 | facing the apex  ",
    "00002843 00 s 01 long(a) 0 001 & 00002730 a 0000 | of great length  ",
]


@pytest.fixture(scope="module")
def wn() -> ModuleType:
    sys.path.insert(0, str(SCRIPTS))
    try:
        import scale_wordnet
    finally:
        sys.path.remove(str(SCRIPTS))
    return scale_wordnet


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    for name, lines in (("noun", NOUNS), ("verb", VERBS), ("adj", ADJS), ("adv", [])):
        text = LICENSE_LINE + "".join(line + "\n" for line in lines)
        (tmp_path / f"data.{name}").write_text(text, encoding="utf-8")
    return tmp_path


def test_lemmas_become_keywords_and_only_hypernyms_become_links(
    wn: ModuleType, folder: Path
) -> None:
    synsets = {s.id: s for s in wn.read_synsets(folder)}
    assert len(synsets) == len(NOUNS) + len(VERBS) + len(ADJS)  # the license line skipped
    thing = synsets["wn-n00002452"]
    assert thing.lemmas == ("thing", "entity")
    assert thing.hypernyms == ("wn-n00001930", "wn-n00001740")  # @i and @, in order
    assert thing.definition == "a separate and self-contained entity"  # examples dropped
    assert synsets["wn-n00001740"].hypernyms == ()  # hyponym pointers are not links
    assert synsets["wn-n00002137"].lemmas == ("abstraction", "abstract_entity")
    assert synsets["wn-v00001740"].hypernyms == ("wn-v00002325",)  # a verb's frames skipped
    assert synsets["wn-a00002843"].lemmas == ("long",)  # satellite: an adjective, marker gone
    assert synsets["wn-a00002843"].hypernyms == ()
    doc = thing.document()
    assert doc.id == "wn-n00002452" and doc.content.startswith("thing, entity: a separate")
    assert doc.metadata == {"keywords": ["thing", "entity"],
                            "links": ["wn-n00001930", "wn-n00001740"], "n": 452}  # fmt: skip


@pytest.mark.parametrize(
    "line",
    ["00001740 03 n 02 entity 0 | too few fields", "00001740 03 n zz entity 0 000 | bad count",
     "00001740 03 n 01 entity 0 002 @ 00001930 n 0000 | fewer pointers than counted"],
)  # fmt: skip
def test_a_malformed_line_is_refused_naming_it(wn: ModuleType, line: str) -> None:
    with pytest.raises(ValueError, match=r"not a WordNet data line.*00001740"):
        wn.parse_line(line)


def test_queries_anchors_and_probes_come_from_the_data_and_the_seed(
    wn: ModuleType, folder: Path
) -> None:
    synsets = wn.read_synsets(folder)
    corpus = wn.WordNetCorpus(synsets, seed=30)
    again = wn.WordNetCorpus(wn.read_synsets(folder), seed=30)
    assert corpus.size == 8 and corpus.label == "WordNet 0k"
    assert corpus.holders["entity"] == 3  # entity, thing and the verb share the lemma
    assert corpus.ranked_keywords()[0] == "entity"
    assert corpus.queries(2) == again.queries(2)
    nouns_with_hypernyms = {"wn-n00001930", "wn-n00002137", "wn-n00002452"}
    assert set(corpus.queries(3)) == {s.definition for s in synsets if s.id in nouns_with_hypernyms}
    assert set(corpus.anchors(0, 2)) <= nouns_with_hypernyms and len(corpus.anchors(0, 2)) == 2
    assert corpus.anchors(1, 2) == again.anchors(1, 2)
    # bench_scale asks for a query's anchors by its index alone: all three nouns here (fewer
    # than the four it takes by default)
    assert sorted(corpus.anchors(0)) == sorted(nouns_with_hypernyms)
    values = corpus.probe_values()
    assert values["common"] == "entity" and values["most_cited"] == "wn-n00001740"
    assert (corpus.keywords_max, corpus.links_max) == (2, 2)
    assert corpus.recall_keywords()[0] == "entity" and len(corpus.get_ids()) == 4
    assert [d.id for d in corpus.documents()] == [s.id for s in synsets]
