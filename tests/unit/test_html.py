"""The picture of a traversal (`hoprag.picture`) without a browser: every stored text escaped,
the same page for the same input, the bound on drawn nodes, boxes, edges and their labels,
and `hoprag query --html` refusing a file it cannot write before connecting."""

from __future__ import annotations

import base64
import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hoprag import IdEdge, MetadataEdge, Node, TraversalResult
from hoprag.cli import main
from hoprag.documents import Path as Path_
from hoprag.errors import InvalidInputError
from hoprag.picture import CONTENT_CHARS, MAX_NODES, render_html, write_html
from hoprag.termsafe import safe
from pictures import HOSTILE_CONTENT, HOSTILE_TITLE, Page, chromium, film_traversal


def _node(
    nid: str,
    path: tuple[str, ...] = (),
    edges: tuple[Any, ...] = (),
    *,
    score: float = 0.5,
    metadata: dict[str, Any] | None = None,
    content: str = "",
    extra: dict[str, Any] | None = None,
) -> Node:
    nodes = (*path, nid)
    return Node(
        id=nid,
        content=content or f"content of {nid}",
        depth=len(nodes) - 1,
        similarity_score=score,
        embedding=None,
        metadata=metadata or {},
        incoming_edges=frozenset(),
        outgoing_edges=frozenset(),
        path=Path_(nodes, edges),
        extra_metadata=extra or {},
    )


def test_hostile_ids_titles_metadata_and_content_stay_text() -> None:
    result = film_traversal()
    hostile_id = "x\"><script>alert('id')</script>"
    evil = _node(hostile_id, ("graduate",), (MetadataEdge("cast", "</text><b>x</b>"),),
                 metadata={"title": "<i>t</i>", "'quote": "a&b"})  # fmt: skip
    page = render_html([*result, evil], title="</title><script>x</script>", query="q</p><b>")
    parsed = Page(page)
    tags = [t for t, _ in parsed.tags]
    assert tags.count("script") == 2  # the data block and the page's own script
    assert "b" not in tags and "img" not in tags and "i" not in tags
    assert not [a for _, a in parsed.tags for k in a if k.startswith("on")]
    text = "".join(parsed.text)
    assert "</title><script>x</script>" in text and "q</p><b>" in text
    assert 'Who\'s <b>Afraid</b> "of" & <img' in text  # the title on its box
    assert "cast=</text><b>x</b>" in text
    # The details keep the exact text, controls made visible.
    items = {d["id"]: d for d in parsed.data()["items"]}
    assert items["woolf"]["content"] == HOSTILE_CONTENT.replace("\x1b", "\\x1b")
    assert items["woolf"]["label"] == HOSTILE_TITLE
    assert items[hostile_id]["metadata"] == [["'quote", "a&b"], ["title", "<i>t</i>"]]
    assert "\x1b" not in page


_PAGE_TAGS = {"html", "head", "meta", "title", "style", "body", "header", "h1", "p", "span",
              "main", "div", "svg", "text", "g", "rect", "path", "aside", "script"}  # fmt: skip

_hostile = st.text(alphabet=st.sampled_from("<>&\"'/=!- \n\x00\x1b\u2028\ud800abscript"))


@settings(max_examples=60, deadline=None)
@given(nid=_hostile.filter(bool), content=_hostile, value=_hostile, title=_hostile)
def test_any_text_anywhere_stays_text(nid: str, content: str, value: str, title: str) -> None:
    node = _node(nid, metadata={"title": value, value or "k": value}, content=content or "c")
    root = _node(value or "r")
    child = _node(f"{nid}-child", (nid,), (IdEdge(value),))
    page = render_html([node, root, child], title=title, query=value)
    page.encode("utf-8")  # no lone surrogate left: the page can be written
    parsed = Page(page)
    assert {t for t, _ in parsed.tags} <= _PAGE_TAGS
    assert [t for t, _ in parsed.tags].count("script") == 2
    assert not [k for _, a in parsed.tags for k in a if k.startswith("on")]
    item = parsed.data()["items"][0]
    assert item["id"] == safe(nid)
    assert item["content"] == "\n".join(safe(line) for line in (content or "c").split("\n"))


def test_the_script_and_style_are_allowed_by_their_hashes_and_nothing_else_loads() -> None:
    page = render_html(film_traversal())
    parsed = Page(page)
    (csp,) = [a["content"] for t, a in parsed.tags if t == "meta" and "content" in a
              and a.get("http-equiv") == "Content-Security-Policy"]  # fmt: skip
    assert csp is not None and "default-src 'none'" in csp

    def sha(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    code = [s for (t, a), s in zip(parsed.script_tags(), parsed.scripts, strict=True) if not a]
    assert f"script-src {sha(code[0])};" in csp
    assert f"style-src {sha(parsed.styles[0])};" in csp
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", page)


def test_same_input_gives_the_same_page_in_every_process(tmp_path: Path) -> None:
    page = render_html(film_traversal(), query="The Graduate")
    assert page == render_html(film_traversal(), query="The Graduate")
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); from pictures import film_traversal;"
        "from hoprag.picture import render_html;"
        "sys.stdout.write(render_html(film_traversal(), query='The Graduate'))"
    )
    tests = str(Path(__file__).resolve().parents[1])
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", script, tests], capture_output=True,
                             check=True, env=env, timeout=120)  # fmt: skip
        assert out.stdout.decode("utf-8") == page


def test_boxes_start_nodes_edges_and_labels_are_drawn() -> None:
    result = film_traversal()
    parsed = Page(render_html(result))
    assert len(parsed.with_class("node")) == len(result)
    starts = [n for n in result if n.depth == 0]
    assert len(parsed.with_class("start")) == len(starts) == 2
    edges = parsed.with_class("edge")
    assert len(edges) == sum(1 for n in result if n.depth > 0)
    labels = [t for t in parsed.text if t in ("director=Mike Nichols", "cast=Dustin Hoffman")]
    assert labels.count("director=Mike Nichols") == 2 and labels.count("cast=Dustin Hoffman") == 2
    assert "The Graduate" in parsed.text and "Tootsie" in parsed.text


def test_a_column_per_depth_ordered_by_the_strategy_score() -> None:
    root = _node("r", score=0.1, extra={"_score": 1.0})
    kids = [
        _node(f"k{i}", ("r",), (MetadataEdge("tag", f"t{i}"),), score=0.9, extra={"_score": s})
        for i, s in enumerate([0.2, 0.9, 0.5])
    ]
    deep = _node("d", ("r", "k1"), (MetadataEdge("tag", "t1"), IdEdge("d")), extra={"_score": 0})
    parsed = Page(render_html([root, *kids, deep]))
    place = {}
    for attrs in parsed.with_class("node"):
        x, y = map(int, re.findall(r"\d+", attrs["transform"] or ""))
        place[parsed.data()["items"][int(attrs["data-i"] or -1)]["id"]] = (x, y)
    assert place["r"][0] < place["k0"][0] == place["k1"][0] == place["k2"][0] < place["d"][0]
    assert place["k1"][1] < place["k2"][1] < place["k0"][1]  # by _score, best first
    assert "$id=d" in parsed.text
    assert "depth 2 (1)" in parsed.text


def test_nodes_only_on_a_path_are_dashed_boxes_with_the_edges_through_them() -> None:
    # Beam can admit a node whose path runs through nodes it did not admit.
    edges = (MetadataEdge("director", "Mike Nichols"), MetadataEdge("cast", "Jack Nicholson"))
    node = _node("chinatown", ("graduate", "carnal"), edges)
    parsed = Page(render_html([_node("graduate"), node]))
    assert len(parsed.with_class("node")) == 2
    (via,) = parsed.with_class("via")
    items = parsed.data()["items"]
    assert items[int(via["data-i"] or -1)] == {
        "id": "carnal", "label": "carnal", "depth": 1, "status": "on a path, not admitted",
    }  # fmt: skip
    pairs = {(e["data-from"], e["data-to"]) for e in parsed.with_class("edge")}
    ids = {d["id"]: str(i) for i, d in enumerate(items)}
    assert pairs == {(ids["graduate"], ids["carnal"]), (ids["carnal"], ids["chinatown"])}
    assert [p[2] for p in items[int(ids["chinatown"])]["path"]] == [0, int(ids["carnal"]), 1]


def test_at_most_max_nodes_are_drawn_and_the_page_says_how_many_were_left_out() -> None:
    root = _node("root")
    many = [root] + [
        _node(f"n{i:04d}", ("root",), (MetadataEdge("k", i),)) for i in range(MAX_NODES + 99)
    ]
    parsed = Page(render_html(many))
    assert len(parsed.with_class("node")) == MAX_NODES
    text = " ".join(parsed.text)
    assert f"Showing the first {MAX_NODES} of {MAX_NODES + 100} nodes" in text
    assert "(100 left out)" in text
    small = Page(render_html(many, max_nodes=3))
    assert len(small.with_class("node")) == 3 and len(small.with_class("edge")) == 2
    assert not Page(render_html(many[:3])).with_class("note", "p")


def test_long_content_is_cut_and_the_page_says_so() -> None:
    long = _node("long", content="x" * (CONTENT_CHARS + 500))
    (item,) = Page(render_html([long])).data()["items"]
    assert item["content"] == "x" * CONTENT_CHARS and item["contentCut"] == CONTENT_CHARS + 500


def test_label_field_falls_back_to_the_id_and_reaches_nested_fields() -> None:
    a = _node("a", metadata={"title": "A title", "info": {"name": "nested"}})
    b = _node("b", metadata={"title": ""})
    assert {"A title", "b"} <= set(Page(render_html([a, b])).text)
    assert {"a", "b"} <= set(Page(render_html([a, b], label_field=None)).text)
    assert "nested" in Page(render_html([a], label_field="info.name")).text


def test_a_traversal_result_adds_its_rounds_and_queries_to_the_summary() -> None:
    result = film_traversal()
    text = " ".join(Page(render_html(result)).text)
    assert f"{result.stats.rounds} rounds, {result.stats.total_queries} store queries" in text
    assert "store queries" not in " ".join(Page(render_html(list(result))).text)


untyped: Any = render_html
"""`render_html` as a caller without type checking sees it (for the refused arguments)."""


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: untyped("abc"), "render_html result must be a TraversalResult"),
        (lambda: untyped([1]), "render_html result[0] must be a hoprag Node"),
        (lambda: untyped([], max_nodes=0), "max_nodes must be a positive int"),
        (lambda: untyped([], max_nodes=True), "max_nodes must be a positive int"),
        (lambda: untyped([], title=3), "title must be a string"),
        (lambda: untyped([], query=b"q"), "query must be a string or None"),
        (lambda: untyped([], label_field=1), "label_field must be a metadata field"),
    ],
)
def test_bad_arguments_are_refused_naming_them(call: Any, message: str) -> None:
    with pytest.raises(InvalidInputError, match=re.escape(message)):
        call()


def test_write_html_writes_utf8_and_refuses_a_missing_directory(tmp_path: Path) -> None:
    out = write_html(TraversalResult([_node("é")]), tmp_path / "p.html")
    assert out == tmp_path / "p.html" and "é" in out.read_text(encoding="utf-8")
    with pytest.raises(InvalidInputError, match="html path must be a file in an existing dir"):
        write_html([], tmp_path / "nope" / "p.html")
    with pytest.raises(InvalidInputError, match="not a directory"):
        write_html([], tmp_path)


@pytest.mark.parametrize(
    ("where", "message"),
    [("nope/out.html", "the directory"), (".", "is a directory; give a file name")],
)
def test_query_html_that_cannot_be_written_is_exit_2_before_connecting(
    tmp_path: Path, where: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["query", "q", "--table", "t", "--edges", "a:b", "--html", str(tmp_path / where),
                 "--contact-points", "127.0.0.254:1"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err, err
    assert not (tmp_path / "nope").exists()


def test_the_browser_tests_fail_naming_the_setup_step_when_chromium_is_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(pytest.fail.Exception, match=re.escape("run `scripts/setup test`")):
        chromium()
