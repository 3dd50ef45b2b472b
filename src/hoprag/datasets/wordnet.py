"""WordNet 3.0 from Debian's `wordnet-base` package (`/usr/share/wordnet/data.*`, `index.*`).

One `Document` per synset (117,659 of them):

- `id`: `"<pos>:<offset>"` where pos is the data file's letter (`n`, `v`, `a`, `r`; adjective
  satellites live in `data.adj`, so they are `a:` too) and offset the synset's 8-digit byte
  offset, e.g. `"n:02084071"` (dog);
- `content`: the lemmas (underscores as spaces), a colon, and the gloss (definition and
  examples);
- `metadata`: `name` (the familiar `lemma.pos.NN` form, e.g. `"dog.n.01"`, from the sense
  order of `index.*`), `lemmas`, `pos` (`n`, `v`, `a`, `s` for a satellite, `r`), `lexname`
  (the lexicographer file, e.g. `"noun.animal"`), `source` = "wordnet", and one list of
  synset ids per pointer type the synset has (a field is absent when empty): `hypernyms`,
  `instance_hypernyms`, `hyponyms`, `instance_hyponyms`, `member_holonyms`,
  `substance_holonyms`, `part_holonyms`, `member_meronyms`, `substance_meronyms`,
  `part_meronyms`, `antonyms`, `similar_to`, `also_see`, `attributes`, `derivations`,
  `pertainyms`, `participle_of`, `entailments`, `causes`, `verb_groups`, `domain_topics`,
  `topic_members`, `domain_regions`, `region_members`, `domain_usages`, `usage_members`.

Lexical pointers (between two words of two synsets, e.g. antonyms) are kept at synset level.
Edges: `("hypernyms", "$id")` climbs, `("$id", "hypernyms")` descends, likewise for every
pointer field; `("lexname", "lexname")` joins synsets of the same lexicographer file.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from hoprag.datasets.errors import DatasetNotInstalledError
from hoprag.documents import Document

DEFAULT_DIR = Path("/usr/share/wordnet")
INSTALL_HINT = "apt-get install wordnet-base  (or: scripts/setup, which installs it)"

#: Data files in the order they are read, with the id prefix of their synsets.
FILES = (("noun", "n"), ("verb", "v"), ("adj", "a"), ("adv", "r"))

#: WordNet pointer symbols and the metadata field each becomes.
POINTER_FIELDS: dict[str, str] = {
    "!": "antonyms",
    "@": "hypernyms",
    "@i": "instance_hypernyms",
    "~": "hyponyms",
    "~i": "instance_hyponyms",
    "#m": "member_holonyms",
    "#s": "substance_holonyms",
    "#p": "part_holonyms",
    "%m": "member_meronyms",
    "%s": "substance_meronyms",
    "%p": "part_meronyms",
    "=": "attributes",
    "+": "derivations",
    ";c": "domain_topics",
    "-c": "topic_members",
    ";r": "domain_regions",
    "-r": "region_members",
    ";u": "domain_usages",
    "-u": "usage_members",
    "*": "entailments",
    ">": "causes",
    "^": "also_see",
    "$": "verb_groups",
    "&": "similar_to",
    "<": "participle_of",
    "\\": "pertainyms",
}

#: The lexicographer files, by number (WordNet's lexnames(5WN)).
LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute "
    "noun.body noun.cognition noun.communication noun.event noun.feeling noun.food noun.group "
    "noun.location noun.motive noun.object noun.person noun.phenomenon noun.plant "
    "noun.possession noun.process noun.quantity noun.relation noun.shape noun.state "
    "noun.substance noun.time verb.body verb.change verb.cognition verb.communication "
    "verb.competition verb.consumption verb.contact verb.creation verb.emotion verb.motion "
    "verb.perception verb.possession verb.social verb.stative verb.weather adj.ppl"
).split()

_FILE_OF_POS = {"n": "n", "v": "v", "a": "a", "s": "a", "r": "r"}


def synset_id(pos: str, offset: str | int) -> str:
    """The document id of the synset at `offset` in the data file of `pos` (`s` counts as
    `a`), e.g. `synset_id("n", 2084071) == "n:02084071"`."""
    return f"{_FILE_OF_POS[pos]}:{int(offset):08d}"


def _check(base: Path) -> None:
    files = [base / f"{kind}.{name}" for name, _ in FILES for kind in ("data", "index")]
    missing = [str(f) for f in files if not f.exists()]
    if missing:
        raise DatasetNotInstalledError(
            f"WordNet data not found ({', '.join(missing)} missing); install it with: "
            f"{INSTALL_HINT}"
        )


def _sense_numbers(base: Path) -> dict[str, str]:
    """`"lemma|synset id"` -> the two-digit sense number of that synset among the lemma's
    senses in `index.*` (the NN of `lemma.pos.NN`)."""
    senses: dict[str, str] = {}
    for name, prefix in FILES:
        with open(base / f"index.{name}", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("  "):
                    continue  # licence header
                parts = line.split()
                lemma, p_cnt = parts[0], int(parts[3])
                offsets = parts[4 + p_cnt + 2 :]
                for n, off in enumerate(offsets, 1):
                    senses[f"{lemma}|{prefix}:{off}"] = f"{n:02d}"
    return senses


def _strip_marker(word: str) -> str:
    # Adjectives may carry a syntactic marker: "galore(ip)", "elect(p)".
    if word.endswith(")") and "(" in word:
        return word[: word.index("(")]
    return word


def _parse(line: str, prefix: str, senses: dict[str, str]) -> Document:
    data, _, gloss = line.partition(" | ")
    parts = data.split()
    offset, lex_filenum, ss_type = parts[0], int(parts[1]), parts[2]
    w_cnt = int(parts[3], 16)
    words = [_strip_marker(parts[4 + 2 * i]) for i in range(w_cnt)]
    pos = 4 + 2 * w_cnt
    p_cnt = int(parts[pos])
    pos += 1
    sid = f"{prefix}:{offset}"
    pointers: dict[str, list[str]] = {}
    for i in range(pos, pos + 4 * p_cnt, 4):
        field = POINTER_FIELDS.get(parts[i])
        if field is None:
            raise ValueError(f"WordNet synset {sid}: unknown pointer symbol {parts[i]!r}")
        # Offsets in the data files are already 8 digits.
        tid = _FILE_OF_POS[parts[i + 2]] + ":" + parts[i + 1]
        values = pointers.setdefault(field, [])
        if tid not in values:
            values.append(tid)
    lemmas = [w.replace("_", " ") for w in words]
    sense = senses.get(f"{words[0].lower()}|{sid}", "01")
    head: dict[str, object] = {
        "name": f"{words[0].lower()}.{ss_type}.{sense}",
        "lemmas": lemmas,
        "pos": ss_type,
        "lexname": LEXNAMES[lex_filenum] if lex_filenum < len(LEXNAMES) else str(lex_filenum),
        "source": "wordnet",
    }
    content = f"{', '.join(lemmas)}: {gloss.strip()}"
    return Document(id=sid, content=content, metadata=head | pointers)


def load_wordnet(*, limit: int | None = None, path: str | Path | None = None) -> Iterator[Document]:
    """Yield WordNet synsets as Documents, nouns first, then verbs, adjectives and adverbs,
    each file in offset order; at most `limit` of them. `path` is the directory holding
    `data.*` and `index.*` (default `/usr/share/wordnet`). Pointer fields name synsets that
    may lie beyond the limit. Raises `DatasetNotInstalledError` at once when the files are
    missing."""
    base = Path(path) if path is not None else DEFAULT_DIR
    _check(base)
    return _synsets(base, limit)


def _synsets(base: Path, limit: int | None) -> Iterator[Document]:
    if limit is not None and limit <= 0:
        return
    senses = _sense_numbers(base)
    count = 0
    for name, prefix in FILES:
        with open(base / f"data.{name}", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("  "):
                    continue  # licence header
                yield _parse(line.rstrip("\n"), prefix, senses)
                count += 1
                if limit is not None and count >= limit:
                    return
