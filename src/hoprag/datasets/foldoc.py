"""FOLDOC, the Free On-line Dictionary of Computing, from Debian's `dict-foldoc` package.

The package installs a dictd database: `/usr/share/dictd/foldoc.dict.dz` (the articles, a
gzip-compatible dictzip file) and `foldoc.index` (one line per headword: the headword, then the
article's byte offset and length in dictd's base-64 digits). An article starts with its
headword line(s) (the first is the title, the rest are aliases), then a blank line, then the
indented body. In the body `{like this}` marks a cross-reference to another headword,
`{label (url)}` a hyperlink, `<programming>` (or `1. <tool, networking>`) the subject tags of an
article or of one of its senses, and a closing `(YYYY-MM-DD)` the date it was last updated.

Each article becomes one `Document`:

- `id`: the headword slug (NFKC, lower case, runs of white space as `_`); when several articles
  share a slug (FOLDOC has e.g. "Actor" the language and "actor" the object), the one whose
  headword is already lower case (else the first in the file) keeps it and the others get
  `~2`, `~3`, ... in file order;
- `content`: the title, a blank line and the body with braces, tags and the date removed and
  each paragraph on one line;
- `metadata`: `title`, `aliases` (other headwords), `keywords` (subject tags), `links` (ids of
  the articles it cross-references, in order, without duplicates or itself), `date`
  (ISO string, when the article has one) and `source` = "foldoc".

Cross-references are resolved by exact headword, then case-insensitively, then by dropping a
plural ending ("{operating systems}" -> "operating system"); the rest are dropped and counted
in `FoldocStats`. Edges: `("links", "$id")` (an article to those it cites), `("$id", "links")`
(to those citing it), `("keywords", "keywords")`.
"""

from __future__ import annotations

import gzip
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from hoprag.datasets.errors import DatasetNotInstalledError
from hoprag.documents import Document

DEFAULT_DIR = Path("/usr/share/dictd")
INSTALL_HINT = "apt-get install dict-foldoc  (or: scripts/setup, which installs it)"

_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_B64_VALUE = {c: i for i, c in enumerate(_B64)}
_BRACE = re.compile(r"\{([^{}]*)\}")
_HYPERLINK = re.compile(
    r"^(?P<label>.*?)\s*\((?P<url>[^()\s]*(?:://|\.html?|/|@|mailto:)[^()\s]*)\)$"
)
# A subject tag opens a paragraph (or a numbered sense); "<rule> ::=" is BNF, not a tag.
_TAG = re.compile(r"^(?P<num>\d+\.\s*)?<(?P<tags>[A-Za-z][A-Za-z0-9 ,/&'-]*)>(?!\s*::=)\s*")
_DATE = re.compile(r"\s*\((?P<date>\d{4}-\d{2}-\d{2})\)\s*$")
_WS = re.compile(r"\s+")


@dataclass(slots=True)
class FoldocStats:
    """What parsing found: `articles`; `headwords` (index entries, aliases included);
    `references` (braced cross-references, hyperlinks excluded), of which `resolved`,
    `resolved_plural` (resolved only after dropping a plural ending), `unresolved`
    (dropped) and `self_references` (dropped too); `hyperlinks` (braced links to URLs);
    `links` (distinct citing -> cited pairs kept in `links`); `renamed_duplicates` (articles
    whose slug was taken and got a `~N` suffix); `dated` and `tagged` articles."""

    articles: int = 0
    headwords: int = 0
    references: int = 0
    resolved: int = 0
    resolved_plural: int = 0
    unresolved: int = 0
    self_references: int = 0
    hyperlinks: int = 0
    links: int = 0
    renamed_duplicates: int = 0
    dated: int = 0
    tagged: int = 0


@dataclass(slots=True)
class FoldocData:
    """A parsed FOLDOC: the documents in file order, the counts, and how often each
    unresolvable cross-reference text occurred."""

    documents: list[Document]
    stats: FoldocStats
    unresolved: Counter[str] = field(default_factory=Counter)


@dataclass(slots=True)
class _Article:
    headwords: list[str]
    body: str
    index_keys: list[str]
    slug: str = ""
    id: str = ""


def _b64(text: str) -> int:
    n = 0
    for ch in text:
        n = n * 64 + _B64_VALUE[ch]
    return n


def _collapse(text: str) -> str:
    return " ".join(text.split())


def headword_slug(headword: str) -> str:
    """The id stem of a headword: NFKC-normalised, lower case, white space runs as `_`."""
    return _WS.sub("_", unicodedata.normalize("NFKC", headword).strip().lower())


def _files(path: str | Path | None) -> tuple[Path, Path]:
    base = Path(path) if path is not None else DEFAULT_DIR
    named_file = base.name.endswith((".dict.dz", ".dict", ".index"))
    # A missing directory (no package installed) is still a directory: name the files in it.
    if base.is_dir() or (not base.exists() and not named_file):
        index = base / "foldoc.index"
        data = base / "foldoc.dict.dz"
        if not data.exists() and (base / "foldoc.dict").exists():
            data = base / "foldoc.dict"
    else:
        stem = base.name
        for suffix in (".dict.dz", ".dict", ".index"):
            if stem.endswith(suffix):
                stem = stem[: -len(suffix)]
                break
        index = base.with_name(stem + ".index")
        data = base.with_name(stem + ".dict.dz")
        if base.name.endswith(".dict") or not data.exists():
            data = base.with_name(stem + ".dict")
    missing = [str(p) for p in (index, data) if not p.exists()]
    if missing:
        raise DatasetNotInstalledError(
            f"FOLDOC data not found ({', '.join(missing)} missing); install it with: {INSTALL_HINT}"
        )
    return index, data


def _read_articles(index: Path, data: Path) -> tuple[list[_Article], int]:
    opener = gzip.open if data.name.endswith(".dz") else open
    with opener(data, "rb") as fh:
        raw = fh.read()
    spans: dict[tuple[int, int], list[str]] = {}
    headwords = 0
    with open(index, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3:
                raise ValueError(f"{index}:{lineno}: expected 3 tab-separated fields")
            key, b64_offset, b64_length = parts
            if key.startswith("00-database") or key.startswith("00database"):
                continue  # dictfmt's own header entries, not articles
            spans.setdefault((_b64(b64_offset), _b64(b64_length)), []).append(key)
            headwords += 1
    articles = []
    for (offset, length), keys in sorted(spans.items()):
        text = raw[offset : offset + length].decode("utf-8")
        head, _, body = text.partition("\n\n")
        names = [_collapse(h) for h in head.split("\n") if h.strip()]
        if not names:
            continue
        articles.append(_Article(headwords=names, body=body, index_keys=keys))
    return articles, headwords


def _assign_ids(articles: list[_Article]) -> int:
    groups: dict[str, list[_Article]] = {}
    for art in articles:
        art.slug = headword_slug(art.headwords[0])
        groups.setdefault(art.slug, []).append(art)
    renamed = 0
    for slug, group in groups.items():
        # The article whose headword is already lower case keeps the plain slug.
        ranked = sorted(group, key=lambda a: a.headwords[0] != a.headwords[0].lower())
        for n, art in enumerate(ranked, 1):
            art.id = slug if n == 1 else f"{slug}~{n}"
            renamed += n > 1
    taken = {a.id for a in articles}
    if len(taken) != len(articles):  # a "~N" form that was also a real headword: extremely rare
        seen: set[str] = set()
        for art in articles:
            while art.id in seen:
                art.id += "~"
            seen.add(art.id)
    return renamed


def _plural_stems(key: str) -> list[str]:
    out = []
    if key.endswith("ies") and len(key) > 4:
        out.append(key[:-3] + "y")
    if key.endswith("es") and len(key) > 3:
        out.append(key[:-2])
    if key.endswith("s") and len(key) > 2:
        out.append(key[:-1])
    if key.endswith("'s"):
        out.append(key[:-2])
    return out


class _Resolver:
    def __init__(self, articles: list[_Article]) -> None:
        self.exact: dict[str, str] = {}
        self.folded: dict[str, str] = {}
        # Plain-slug articles first, so a case-insensitive match prefers them.
        ordered = sorted(articles, key=lambda a: "~" in a.id)
        for art in ordered:
            for name in art.headwords:
                self.exact.setdefault(name, art.id)
                self.folded.setdefault(name.casefold(), art.id)
        for art in ordered:
            for key in art.index_keys:
                self.folded.setdefault(_collapse(key).casefold(), art.id)

    def resolve(self, ref: str) -> tuple[str | None, bool]:
        """The id `ref` names and whether only a plural stem matched."""
        if ref in self.exact:
            return self.exact[ref], False
        folded = ref.casefold()
        if folded in self.folded:
            return self.folded[folded], False
        for stem in _plural_stems(folded):
            if stem in self.folded:
                return self.folded[stem], True
        return None, False


def _brace_text(match: re.Match[str]) -> str:
    inner = _collapse(match.group(1))
    link = _HYPERLINK.match(inner)
    if link:
        return link.group("label") or link.group("url")
    return inner


def _split_date(paragraphs: list[str]) -> str | None:
    """Remove the trailing "(YYYY-MM-DD)" date from the last paragraph and return it."""
    if not paragraphs:
        return None
    m = _DATE.search(paragraphs[-1])
    if not m:
        return None
    paragraphs[-1] = paragraphs[-1][: m.start()].strip()
    if not paragraphs[-1]:
        paragraphs.pop()
    return m.group("date")


def _split_tags(paragraphs: list[str]) -> tuple[list[str], list[str]]:
    """The subject tags ("<language>") as keywords, and the paragraphs without them."""
    keywords: list[str] = []
    cleaned = []
    for para in paragraphs:
        m = _TAG.match(para)
        if m:
            for tag in m.group("tags").split(","):
                tag = _collapse(tag).lower()
                if tag and tag not in keywords:
                    keywords.append(tag)
            para = (m.group("num") or "") + para[m.end() :]
        cleaned.append(_BRACE.sub(_brace_text, para).strip())
    return keywords, cleaned


def _links(
    art: _Article, resolver: _Resolver, stats: FoldocStats, unresolved: Counter[str]
) -> list[str]:
    """The ids of the articles the braces in `art` refer to, each once, counted in `stats`."""
    links: list[str] = []
    for m in _BRACE.finditer(art.body):
        ref = _collapse(m.group(1))
        if not ref:
            continue
        if _HYPERLINK.match(ref):
            stats.hyperlinks += 1
            continue
        stats.references += 1
        target, plural = resolver.resolve(ref)
        if target is None:
            stats.unresolved += 1
            unresolved[ref] += 1
        elif target == art.id:
            stats.self_references += 1
        else:
            stats.resolved += 1
            stats.resolved_plural += plural
            if target not in links:
                links.append(target)
    return links


def _build(
    art: _Article, resolver: _Resolver, stats: FoldocStats, unresolved: Counter[str]
) -> Document:
    """The Document of one article: text, date, subject tags and resolved cross-references."""
    paragraphs = [_collapse(p) for p in re.split(r"\n[ \t]*\n", art.body)]
    paragraphs = [p for p in paragraphs if p]
    date = _split_date(paragraphs)
    keywords, cleaned = _split_tags(paragraphs)
    links = _links(art, resolver, stats, unresolved)
    stats.links += len(links)
    stats.dated += date is not None
    stats.tagged += bool(keywords)
    title = art.headwords[0]
    metadata: dict[str, object] = {
        "title": title,
        "aliases": art.headwords[1:],
        "keywords": keywords,
        "links": links,
        "source": "foldoc",
    }
    if date is not None:
        metadata["date"] = date
    body = "\n".join(p for p in cleaned if p)
    return Document(id=art.id, content=f"{title}\n\n{body}".strip(), metadata=metadata)


def read_foldoc(path: str | Path | None = None, *, limit: int | None = None) -> FoldocData:
    """Parse the FOLDOC database (by default from `/usr/share/dictd`; `path` may be a
    directory holding `foldoc.index` and `foldoc.dict[.dz]`, or one of those files) and
    return its documents in file order with counts. Every headword is read so that
    cross-references resolve to any article, but only the first `limit` articles are built
    (and counted in the reference, link, date and tag counts). Raises
    `DatasetNotInstalledError` when the files are missing."""
    index, data = _files(path)
    articles, headwords = _read_articles(index, data)
    stats = FoldocStats(articles=len(articles), headwords=headwords)
    stats.renamed_duplicates = _assign_ids(articles)
    resolver = _Resolver(articles)
    unresolved: Counter[str] = Counter()
    chosen = articles if limit is None else articles[: max(limit, 0)]
    documents = [_build(a, resolver, stats, unresolved) for a in chosen]
    return FoldocData(documents=documents, stats=stats, unresolved=unresolved)


def load_foldoc(*, limit: int | None = None, path: str | Path | None = None) -> Iterator[Document]:
    """FOLDOC articles as Documents in file order, at most `limit` of them (see `read_foldoc`:
    cross-references resolve to every article, including those past the limit). Raises
    `DatasetNotInstalledError` at once when the files are missing."""
    return iter(read_foldoc(path, limit=limit).documents)
