"""The picture of a traversal rendered by a real headless Chromium: a box per admitted node
(start nodes marked, edge labels drawn) in the DOM after the page's script ran and in a
screenshot's pixels, hostile stored text shown as text, and `hoprag query --html` on Cassandra
writing a page beside its usual output."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from keyspaces import new_keyspace

from hoprag.picture import write_html
from pictures import (
    HOSTILE_CONTENT,
    HOSTILE_TITLE,
    Page,
    film_traversal,
    regions_of,
    rendered_dom,
    screenshot,
)
from shared_data import write_articles_jsonl

START_FILL = "#ffd36b"
NODE_FILL = "#dbe9ff"
BOX = (230, 26)
"""A box's width and height in pixels."""


def test_the_browser_has_a_box_per_node_start_nodes_marked_and_edge_labels(
    tmp_path: Path,
) -> None:
    result = film_traversal()
    page = write_html(result, tmp_path / "films.html", query="The Graduate")
    dom = Page(rendered_dom(page))
    html_attrs = next(a for t, a in dom.tags if t == "html")
    assert html_attrs.get("data-hoprag-boxes") == str(len(result))  # the page's script ran
    assert len(dom.with_class("node")) == len(result)
    assert len(dom.with_class("start")) == sum(1 for n in result if n.depth == 0) == 2
    text = dom.text
    assert text.count("director=Mike Nichols") == 2 and text.count("cast=Dustin Hoffman") == 2
    assert len(dom.with_class("edge")) == 4


def test_the_screenshot_shows_every_box_in_its_colour(tmp_path: Path) -> None:
    result = film_traversal()
    page = write_html(result, tmp_path / "films.html")
    image = screenshot(page, 1400, 700)
    starts = sum(1 for n in result if n.depth == 0)
    # Each box's fill, inside its stroke, is one region of its colour about the size of the box;
    # the only other region of each colour is the legend's small swatch.
    for colour, count in ((START_FILL, starts), (NODE_FILL, len(result) - starts)):
        regions = regions_of(image, colour)
        boxes = [(w, h) for w, h in regions if w > BOX[0] // 2]
        assert len(boxes) == count, regions
        assert all(BOX[0] - 6 <= w <= BOX[0] and BOX[1] - 6 <= h <= BOX[1] for w, h in boxes)
        assert all(w <= 20 and h <= 20 for w, h in regions if (w, h) not in boxes), regions


def test_hostile_stored_text_is_shown_as_text_by_the_browser(tmp_path: Path) -> None:
    result = film_traversal()
    page = write_html(result, tmp_path / "films.html", title="</title><b>t</b>")
    woolf = next(i for i, n in enumerate(result) if n.id == "woolf")
    raw = rendered_dom(page, fragment=f"#node={woolf}")  # the script shows that node's details
    dom = Page(raw)
    tags = [t for t, _ in dom.tags]
    assert tags.count("script") == 2 and "b" not in tags and "img" not in tags
    assert "data-pwned" not in next(a for t, a in dom.tags if t == "html")
    assert not [k for _, a in dom.tags for k in a if k.startswith("on")]
    # The details panel, filled by the page's script, holds the content and title as text.
    panel = raw[raw.index('<aside id="details">') : raw.index("</aside>")]
    shown = Page(panel)
    assert HOSTILE_CONTENT.replace("\x1b", "\\x1b") in shown.text
    assert HOSTILE_TITLE in shown.text
    assert "along director=Mike Nichols to woolf" in shown.text
    assert "</title><b>t</b>" in dom.text
    # The selected box and the edge of its path are highlighted; the rest is dimmed.
    (selected,) = dom.with_class("sel")
    assert selected["data-i"] == str(woolf) and "hl" in (selected["class"] or "")
    graduate = str(next(i for i, n in enumerate(result) if n.id == "graduate"))
    (edge,) = [e for e in dom.with_class("edge") if "hl" in (e["class"] or "").split()]
    assert (edge["data-from"], edge["data-to"]) == (graduate, str(woolf))
    assert "dim" in (next(a for t, a in dom.tags if t == "svg")["class"] or "")
    # Its label, too wide for the box at 28 characters, was cut further once measured.
    box = raw[raw.index(f'data-i="{woolf}"') :]
    label = html.unescape(re.findall(r'class="label"[^>]*>([^<]*)</text>', box)[0])
    assert label.endswith("…") and len(label) < 28, label


def _hoprag(contact: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hoprag.cli", *args, "--contact-points", contact],
        capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip


def test_query_html_writes_a_page_of_the_traversal_beside_its_json(
    tmp_path: Path, cassandra_contact_points: str, cassandra_session: Any
) -> None:
    keyspace = new_keyspace(cassandra_session)
    data = tmp_path / "arts.jsonl"
    ids = write_articles_jsonl(data, 60)
    load = _hoprag(cassandra_contact_points, "load", "jsonl", "--path", str(data), "--table",
                   "arts", "--embedding", "hash:32", "--keyspace", keyspace)  # fmt: skip
    assert load.returncode == 0, load.stderr
    out = tmp_path / "query.html"
    query = ("query", "article 5 on topic 5", "--table", "arts", "--keyspace", keyspace,
             "--edges", "references:$id,keywords:keywords", "--select-k", "12",
             "--max-depth", "2", "--html", str(out))  # fmt: skip
    r = _hoprag(cassandra_contact_points, *query, "--json")
    assert r.returncode == 0, r.stderr
    nodes = json.loads(r.stdout)["nodes"]  # stdout is the JSON alone
    assert len(nodes) == 12 and set(n["id"] for n in nodes) <= set(ids)
    assert f"wrote {out} (12 nodes)" in r.stderr
    dom = Page(rendered_dom(out))
    assert len(dom.with_class("node")) == 12
    assert len(dom.with_class("start")) == sum(1 for n in nodes if n["depth"] == 0)
    items = dom.data()["items"]
    assert [d["id"] for d in items[:12]] == [n["id"] for n in nodes]
    followed = {s["via"] for n in nodes for s in n["steps"]}
    assert followed and followed <= set(dom.text)
    assert "query: article 5 on topic 5" in dom.text
    assert re.search(r"\d+ rounds, \d+ store queries", " ".join(dom.text))
    # With the text table too; a missing directory is refused before connecting.
    table = _hoprag(cassandra_contact_points, *query)
    assert table.returncode == 0 and table.stdout.startswith("id "), table.stderr
    missing = _hoprag("127.0.0.254:1", *query[:-1], str(tmp_path / "nope" / "q.html"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr
