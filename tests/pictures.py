"""For the tests of the picture of a traversal (`hoprag.picture`): a small films graph with
directors and cast as edges and one film whose title, content and metadata try to break out of
the page; a parser that reads a page as a browser does; headless Chromium to render one (its
DOM after the scripts ran, or a screenshot's pixels)."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import tempfile
import zlib
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hoprag import Document, Eager, TraversalResult, traverse
from hoprag.embeddings import HashEmbedding
from hoprag.stores import MemoryStore

HOSTILE_CONTENT = (
    "Who's Afraid of Virginia Woolf? </script><script>document.documentElement"
    ".setAttribute('data-pwned','1')</script> \" ' & <b>bold</b> \x1b[31mred"
)
HOSTILE_TITLE = 'Who\'s <b>Afraid</b> "of" & <img src=x onerror=alert(1)>'
EDGES = [("director", "director"), ("cast", "cast")]


def film_documents() -> list[Document]:
    """Six films: three by Mike Nichols, three more reached through their cast."""
    films = [
        ("graduate", "The Graduate", "Mike Nichols", ["Dustin Hoffman", "Anne Bancroft"]),
        ("woolf", HOSTILE_TITLE, "Mike Nichols", ["Elizabeth Taylor", "<svg onload=alert(2)>"]),
        ("carnal", "Carnal Knowledge", "Mike Nichols", ["Jack Nicholson", "Ann-Margret"]),
        ("tootsie", "Tootsie", "Sydney Pollack", ["Dustin Hoffman"]),
        ("rain", "Rain Man", "Barry Levinson", ["Dustin Hoffman", "Tom Cruise"]),
        ("chinatown", "Chinatown", "Roman Polanski", ["Jack Nicholson"]),
    ]
    return [
        Document(
            fid,
            HOSTILE_CONTENT if fid == "woolf" else f"{title}, directed by {director}.",
            {"title": title, "director": director, "cast": cast},
        )
        for fid, title, director, cast in films
    ]


def film_traversal() -> TraversalResult:
    """An eager traversal from The Graduate and Chinatown over director and cast."""
    store = MemoryStore(HashEmbedding(16))
    store.add(film_documents())
    return traverse(
        "The Graduate",
        store=store,
        edges=EDGES,
        strategy=Eager(select_k=10, start_k=1, max_depth=2),
        initial_root_ids=["graduate", "chinatown"],
    )


class Page(HTMLParser):
    """The elements, attributes and text of a page as a browser's parser sees them."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self._in: str | None = None
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in = tag if tag in ("script", "style") else None
        if tag == "script":
            self.scripts.append("")
        if tag == "style":
            self.styles.append("")

    def handle_endtag(self, tag: str) -> None:
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "script":
            self.scripts[-1] += data
        elif self._in == "style":
            self.styles[-1] += data
        else:
            self.text.append(data)

    def with_class(self, cls: str, tag: str = "g") -> list[dict[str, str | None]]:
        return [a for t, a in self.tags if t == tag and cls in (a.get("class") or "").split()]

    def data(self) -> dict[str, Any]:
        (block,) = [
            s for (t, a), s in zip(self.script_tags(), self.scripts, strict=True) if a.get("id")
        ]
        out: dict[str, Any] = json.loads(block)
        return out

    def script_tags(self) -> list[tuple[str, dict[str, str | None]]]:
        """The `<script>` elements' attributes, in order (as `scripts` holds their text)."""
        return [(t, a) for t, a in self.tags if t == "script"]


# --- headless Chromium ----------------------------------------------------------------------------


def chromium() -> str:
    """The Chromium executable; the test fails, naming the set-up step, when there is none."""
    exe = shutil.which("chromium")
    if exe is None:
        pytest.fail(
            "the HTML picture tests need Chromium on PATH (Debian's `chromium` package); run "
            "`scripts/setup test`, which installs it",
            pytrace=False,
        )
    return exe


def _run_chromium(page: Path, *flags: str, fragment: str = "") -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory(prefix="hoprag-chromium-") as profile:
        url = page.resolve().as_uri() + fragment
        cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--disable-extensions", "--disable-background-networking",
               f"--user-data-dir={profile}", *flags, url]  # fmt: skip
        r = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]
    return r


def rendered_dom(page: Path, fragment: str = "") -> str:
    """The page's DOM as Chromium has it after the page's scripts ran (`--dump-dom`)."""
    return _run_chromium(page, "--dump-dom", fragment=fragment).stdout


def screenshot(page: Path, width: int, height: int) -> np.ndarray:
    """Chromium's screenshot of the page at `width` x `height` CSS pixels (scale 1), as an
    array of RGB pixels."""
    with tempfile.TemporaryDirectory(prefix="hoprag-shot-") as where:
        png = Path(where) / "shot.png"
        _run_chromium(page, f"--screenshot={png}", f"--window-size={width},{height}",
                      "--force-device-scale-factor=1", "--hide-scrollbars")  # fmt: skip
        return png_rgb(png.read_bytes())


def png_rgb(data: bytes) -> np.ndarray:
    """The RGB pixels of an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, head = 8, bytearray(), None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            head = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
    assert head is not None
    width, height, bits, colour, _, _, interlace = head
    assert bits == 8 and colour in (2, 6) and interlace == 0, head
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(bytes(idat))
    stride = width * bpp
    rows = np.zeros((height, stride), dtype=np.uint8)
    prev = np.zeros(stride, dtype=np.int64)
    for y in range(height):
        start = y * (stride + 1)
        kind_ = raw[start]
        line = np.frombuffer(raw, np.uint8, stride, start + 1).astype(np.int64)
        if kind_ == 0:
            cur = line
        elif kind_ == 1:
            cur = np.cumsum(line.reshape(width, bpp), axis=0).reshape(-1) % 256
        elif kind_ == 2:
            cur = (line + prev) % 256
        else:
            cur = _unfilter_slow(kind_, line.tolist(), prev.tolist(), bpp)
        rows[y] = cur
        prev = np.asarray(cur, dtype=np.int64)
    return rows.reshape(height, width, bpp)[:, :, :3]


def _unfilter_slow(kind: int, line: list[int], prev: list[int], bpp: int) -> np.ndarray:
    """PNG's Average (3) and Paeth (4) filters, byte by byte (each needs the byte before)."""
    out = [0] * len(line)
    for i, x in enumerate(line):
        a = out[i - bpp] if i >= bpp else 0
        b = prev[i]
        if kind == 3:
            out[i] = (x + (a + b) // 2) % 256
            continue
        c = prev[i - bpp] if i >= bpp else 0
        p = a + b - c
        pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
        pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
        out[i] = (x + pred) % 256
    return np.asarray(out, dtype=np.int64)


def regions_of(image: np.ndarray, colour: str) -> list[tuple[int, int]]:
    """The width and height of each connected region of pixels of exactly `colour`
    (`#rrggbb`) in `image`, largest first: a box's fill is one region around its text."""
    rgb = np.asarray([int(colour[i : i + 2], 16) for i in (1, 3, 5)], dtype=np.uint8)
    mask = np.all(image == rgb, axis=2)
    left = {(int(y), int(x)) for y, x in zip(*np.nonzero(mask), strict=True)}
    sizes = []
    while left:
        todo = [left.pop()]
        ys, xs = [], []
        while todo:
            y, x = todo.pop()
            ys.append(y)
            xs.append(x)
            for step in ((y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)):
                if step in left:
                    left.remove(step)
                    todo.append(step)
        sizes.append((max(xs) - min(xs) + 1, max(ys) - min(ys) + 1))
    return sorted(sizes, key=lambda s: s[0] * s[1], reverse=True)
