"""A picture of a traversal: one self-contained HTML page that draws the admitted nodes and the
edges followed to them as a layered graph (one column per depth, start nodes marked, each edge
labelled with the edge that was followed, e.g. `director=Mike Nichols`).

The SVG is laid out here, in Python; a small inline script shows a node's details (content,
metadata, scores, path) on hover, focus or click and highlights its path. The page fetches
nothing (its Content-Security-Policy allows no network source and only its own script and
style, by hash), so it works offline. Every stored text (ids, labels, metadata, content) is
escaped for the context it lands in, and control characters show as visible escapes
(`hoprag.termsafe.safe`). The same input gives the same page, byte for byte."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hoprag.documents import Node
from hoprag.errors import invalid
from hoprag.stats import TraversalResult, TraversalStats
from hoprag.termsafe import safe

MAX_NODES = 500
"""The most admitted nodes a page draws (the first in the result's order); the page says how
many more were given. Nodes that are only on a drawn node's path are bounded the same way."""

CONTENT_CHARS = 2000
"""The most characters of a node's content the page holds (the page says when it is cut)."""

METADATA_VALUE_CHARS = 300
"""The most characters of one metadata value (as JSON) the page holds."""

_LABEL_CHARS = 28
_EDGE_LABEL_CHARS = 26
_TOOLTIP_CHARS = 280

# Layout, in pixels.
_NODE_W = 230
_NODE_H = 26
_GAP = 170
_ROW = 34
_PAD = 24
_TOP = 40

_SCORE_KEYS = (("_score", "score"), ("_path_score", "path score"), ("_mmr_score", "mmr score"))
"""Strategy scores in `extra_metadata`, in the order the one shown on a node is chosen
(`Scored`, `Beam`, `Mmr`); without any, the node shows its similarity to the query."""

_HIDDEN_EXTRA = frozenset({"_depth", "_similarity_score", "_path"})
"""`extra_metadata` entries the details leave out (shown otherwise: depth, similarity, path)."""


# --- text in every context ----------------------------------------------------------------------


def _line(value: Any, limit: int | None = None) -> str:
    """`value` as one line of visible text (controls escaped), cut to `limit` characters."""
    text = safe(value)
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def _multiline(text: str, limit: int) -> tuple[str, bool]:
    """`text` with its lines kept and every other control escaped, cut to `limit` characters;
    and whether it was cut."""
    cut = len(text) > limit
    text = text[:limit].replace("\r\n", "\n")
    return "\n".join(safe(part) for part in text.split("\n")), cut


def _x(text: str) -> str:
    """Escape `text` for HTML/SVG text and quoted attribute values."""
    return html.escape(text, quote=True)


def _script_json(value: Any) -> str:
    """`value` as JSON that cannot end or change the `<script>` element holding it: ASCII only,
    with `<`, `>` and `&` as \\u escapes (they mean the same inside JSON strings)."""
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _number(value: float) -> str:
    """A score as shown: three decimals, `-inf` / `inf`, or a dash for none (NaN: a listing
    without a query scores nothing)."""
    if math.isnan(value):
        return "\u2013"
    return f"{value:.3f}" if math.isfinite(value) else str(value)


def _describe(edge: Any) -> str:
    """An edge's short form (`director=Mike Nichols`, `$id=x`), or its repr."""
    describe = getattr(type(edge), "describe", None)
    return str(describe(edge)) if callable(describe) else repr(edge)


def _metadata_text(value: Any) -> str:
    """A metadata value as one line: a string as it is, anything else as JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=_json_default)
    except (TypeError, ValueError):
        return repr(value)


def _json_default(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, tuple | frozenset | set):
        return list(value)
    return str(value)


def _label_value(node: Node, label_field: str | None) -> str:
    """The node's `label_field` (a string or number; dotted names reach into nested objects),
    else its id."""
    if label_field:
        value: Any = node.metadata.get(label_field)
        if value is None and "." in label_field:
            value = node.metadata
            for part in label_field.split("."):
                value = value.get(part) if isinstance(value, Mapping) else None
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
    return node.id


def _float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _main_score(node: Node) -> tuple[str, float]:
    """The score a node shows and is ordered by in its column: the strategy's, else the
    similarity to the query."""
    for key, name in _SCORE_KEYS:
        value = _float(node.extra_metadata.get(key))
        if value is not None:
            return name, value
    return "similarity", float(node.similarity_score)


# --- the graph to draw ----------------------------------------------------------------------------


@dataclass(slots=True)
class _Item:
    """One drawn box: an admitted node, or a node only on a drawn node's path (`node` None)."""

    id: str
    depth: int
    node: Node | None
    rank: int  # position in the result (1-based); for a path-only node its first appearance
    admitted: bool
    x: int = 0
    y: int = 0


@dataclass(slots=True)
class _Graph:
    """The boxes, the edges between them (indices into `items` and the edge's label), and how
    many nodes were given, drawn, and left out of the paths."""

    items: list[_Item]
    edges: list[tuple[int, int, str]]
    given: int
    drawn: int
    path_only_left_out: int


def _check(result: Any, max_nodes: int) -> list[Node]:
    """The nodes of `result`, refusing anything but a sequence of Nodes and a bad bound."""
    if isinstance(result, str | bytes) or not isinstance(result, Sequence):
        raise invalid("render_html result", result, "a TraversalResult or a sequence of Nodes")
    nodes = list(result)
    for i, node in enumerate(nodes):
        if not isinstance(node, Node):
            raise invalid(f"render_html result[{i}]", node, "a hoprag Node")
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or max_nodes < 1:
        raise invalid("max_nodes", max_nodes, "a positive int")
    return nodes


def _build(nodes: list[Node], max_nodes: int) -> _Graph:
    """The boxes and edges: the first `max_nodes` nodes, the nodes on their paths that are not
    among them (at most `max_nodes`), and each step of their paths between two drawn boxes."""
    shown = nodes[:max_nodes]
    admitted = {n.id for n in nodes}
    items: list[_Item] = []
    index: dict[str, int] = {}
    for rank, node in enumerate(shown, 1):
        if node.id not in index:
            index[node.id] = len(items)
            items.append(_Item(node.id, int(node.depth), node, rank, True))
    path_only = 0
    left_out: set[str] = set()
    edges: list[tuple[int, int, str]] = []
    seen: set[tuple[int, int, str]] = set()
    for node in shown:
        ids, steps = node.path.nodes, node.path.edges
        for depth, nid in enumerate(ids):
            if nid not in index:
                if path_only >= max_nodes:
                    left_out.add(nid)
                    continue
                index[nid] = len(items)
                items.append(_Item(nid, depth, None, path_only + 1, nid in admitted))
                path_only += 1
        for a, edge, b in zip(ids[:-1], steps, ids[1:], strict=True):
            if a in index and b in index:
                key = (index[a], index[b], _describe(edge))
                if key not in seen:
                    seen.add(key)
                    edges.append(key)
    return _Graph(items, edges, len(nodes), len(shown), len(left_out))


def _layout(graph: _Graph) -> tuple[int, int, list[int]]:
    """Place the boxes: one column per depth, admitted nodes by score (best first, ties in the
    result's order), then path-only nodes; returns the width, height and column sizes."""
    depth_count = max((it.depth for it in graph.items), default=0) + 1
    columns: list[list[_Item]] = [[] for _ in range(depth_count)]
    for it in graph.items:
        columns[max(it.depth, 0)].append(it)

    def order(it: _Item) -> tuple[int, float, int]:
        if it.node is None:
            return (1, 0.0, it.rank)
        score = _main_score(it.node)[1]
        return (0, -score if math.isfinite(score) else math.inf, it.rank)

    for col, members in enumerate(columns):
        members.sort(key=order)
        for row, it in enumerate(members):
            it.x = _PAD + col * (_NODE_W + _GAP)
            it.y = _TOP + 20 + row * _ROW
    rows = max((len(c) for c in columns), default=0)
    width = 2 * _PAD + depth_count * _NODE_W + (depth_count - 1) * _GAP
    height = _TOP + 20 + max(rows, 1) * _ROW + _PAD
    return width, height, [len(c) for c in columns]


# --- markup -------------------------------------------------------------------------------------


def _details(it: _Item, index: dict[str, int], label_field: str | None) -> dict[str, Any]:
    """What the script shows for a box (all text already made visible-safe)."""
    if it.node is None:
        status = "admitted, beyond the nodes drawn" if it.admitted else "on a path, not admitted"
        return {"id": _line(it.id), "label": _line(it.id), "depth": it.depth, "status": status}
    node = it.node
    content, cut = _multiline(node.content, CONTENT_CHARS)
    scores = [["similarity", _number(float(node.similarity_score))]]
    for key in sorted(node.extra_metadata):
        value = _float(node.extra_metadata[key])
        if key not in _HIDDEN_EXTRA and value is not None:
            scores.append([_line(key.lstrip("_").replace("_", " ")), _number(value)])
    metadata = [
        [_line(k, 80), _line(_metadata_text(node.metadata[k]), METADATA_VALUE_CHARS)]
        for k in sorted(node.metadata, key=str)
    ]
    path = [
        [_line(nid), _line(_describe(e)) if e is not None else None, index.get(nid, -1)]
        for nid, e in zip(node.path.nodes, (None, *node.path.edges), strict=True)
    ]
    return {
        "id": _line(node.id),
        "label": _line(_label_value(node, label_field)),
        "depth": it.depth,
        "status": f"start node, result #{it.rank}" if it.depth == 0 else f"result #{it.rank}",
        "scores": scores,
        "path": path,
        "metadata": metadata,
        "content": content,
        "contentCut": len(node.content) if cut else 0,
    }


def _tooltip(it: _Item, label_field: str | None) -> str:
    if it.node is None:
        return f"{_line(it.id)} (depth {it.depth}; on a path, not among the drawn nodes)"
    name, score = _main_score(it.node)
    head = f"{_line(_label_value(it.node, label_field))} [{_line(it.id)}]"
    body, cut = _multiline(it.node.content, _TOOLTIP_CHARS)
    return f"{head}\ndepth {it.depth}, {name} {_number(score)}\n{body}{'…' if cut else ''}"


def _box(i: int, it: _Item, label_field: str | None) -> str:
    title = f"<title>{_x(_tooltip(it, label_field))}</title>"
    if it.node is None:
        cls = "via"
        label = _line(it.id, _LABEL_CHARS)
        score = ""
        room = _NODE_W - 20
    else:
        cls = "node start" if it.depth == 0 else "node"
        label = _line(_label_value(it.node, label_field), _LABEL_CHARS)
        room = _NODE_W - 70  # the score's place at the right
        score = (
            f'<text class="score" x="{_NODE_W - 8}" y="17" text-anchor="end">'
            f"{_x(_number(_main_score(it.node)[1]))}</text>"
        )
    return (
        f'<g class="{cls}" data-i="{i}" tabindex="0" '
        f'transform="translate({it.x},{it.y})">{title}'
        f'<rect width="{_NODE_W}" height="{_NODE_H}" rx="5"></rect>'
        f'<text class="label" x="10" y="17" data-room="{room}">{_x(label)}</text>{score}</g>'
    )


def _edge(a: _Item, b: _Item, ia: int, ib: int, label: str) -> str:
    x1, y1 = a.x + _NODE_W, a.y + _NODE_H // 2
    x2, y2 = b.x, b.y + _NODE_H // 2
    bend = max(abs(x2 - x1) // 2, 40)
    d = f"M{x1},{y1} C{x1 + bend},{y1} {x2 - bend},{y2} {x2},{y2}"
    # The label sits just before the box the edge enters, where the curve runs level: the
    # labels of the edges into one column are a row apart, as their boxes are.
    full = f"{_line(a.id)} → {_line(b.id)} along {_line(label)}"
    return (
        f'<g class="edge" data-from="{ia}" data-to="{ib}"><title>{_x(full)}</title>'
        f'<path d="{d}"></path><text class="elabel" x="{x2 - 6}" y="{y2 - 4}" text-anchor="end">'
        f"{_x(_line(label, _EDGE_LABEL_CHARS))}</text></g>"
    )


def _svg(graph: _Graph, label_field: str | None) -> str:
    width, height, sizes = _layout(graph)
    heads = []
    for col, size in enumerate(sizes):
        name = f"depth {col}" + (" · start" if col == 0 else "")
        heads.append(
            f'<text class="colhead" x="{_PAD + col * (_NODE_W + _GAP)}" y="{_TOP}">'
            f"{_x(name)} ({size})</text>"
        )
    edges = [_edge(graph.items[a], graph.items[b], a, b, label) for a, b, label in graph.edges]
    boxes = [_box(i, it, label_field) for i, it in enumerate(graph.items)]
    return (
        f'<svg id="graph" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="traversal graph">'
        + "".join(heads)
        + '<g class="edges">'
        + "".join(edges)
        + '</g><g class="boxes">'
        + "".join(boxes)
        + "</g></svg>"
    )


_CSS = """\
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d2330;background:#fff}
header{padding:12px 20px;border-bottom:1px solid #dde2ea}
h1{font-size:18px;margin:0 0 4px}
.meta{color:#4a5466;margin:2px 0}
.note{color:#8a4b00;font-weight:600}
.legend>span{display:inline-block;margin-right:14px}
.sw{display:inline-block;width:14px;height:10px;border:1px solid #44506a;margin-right:4px;
vertical-align:middle;border-radius:2px}
.sw.start{background:#ffd36b;border:2px solid #b06f00}.sw.node{background:#dbe9ff}
.sw.via{background:#fff;border:1px dashed #8b93a3}
main{display:flex;align-items:flex-start}
#canvas{overflow:auto;flex:1 1 auto}
#details{flex:0 0 360px;position:sticky;top:0;max-height:100vh;overflow:auto;padding:12px 16px;
border-left:1px solid #dde2ea;background:#f8f9fb;box-sizing:border-box}
#details h2{font-size:15px;margin:0 0 6px;word-break:break-word}
#details table{border-collapse:collapse;font-size:12px;width:100%}
#details td{border-top:1px solid #e4e7ee;padding:2px 4px;vertical-align:top;word-break:break-word}
#details pre{white-space:pre-wrap;word-break:break-word;font:12px/1.4 ui-monospace,monospace;
background:#fff;border:1px solid #e4e7ee;padding:6px;margin:4px 0}
#details .path li{font-size:12px;word-break:break-word}
.colhead{font:600 12px system-ui,sans-serif;fill:#4a5466}
.node rect{fill:#dbe9ff;stroke:#44506a;stroke-width:1}
.node.start rect{fill:#ffd36b;stroke:#b06f00;stroke-width:2}
.via rect{fill:#fff;stroke:#8b93a3;stroke-dasharray:4 3}
.node,.via{cursor:pointer;outline:none}
.label{font:12px system-ui,sans-serif;fill:#1d2330}
.via .label{fill:#5d6677;font-style:italic}
.score{font:11px ui-monospace,monospace;fill:#44506a}
.edge path{fill:none;stroke:#9aa3b5;stroke-width:1.2}
.elabel{font:10px system-ui,sans-serif;fill:#5d6677;paint-order:stroke;stroke:#fff;
stroke-width:3px}
.dim .edge,.dim .node,.dim .via{opacity:.25}
.dim .hl{opacity:1}
.edge.hl path{stroke:#d1495b;stroke-width:2.4}
.edge.hl .elabel{fill:#a3192c;font-weight:600}
.hl rect{stroke:#d1495b;stroke-width:2.5}
.sel rect{stroke:#a3192c;stroke-width:3.5}
"""

_JS = """\
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("hoprag-data").textContent);
  var svg = document.getElementById("graph");
  var panel = document.getElementById("details");
  var boxes = svg.querySelectorAll(".node,.via");
  var edges = svg.querySelectorAll(".edge");
  var pinned = -1;
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }
  function rows(pairs) {
    var t = el("table");
    pairs.forEach(function (p) {
      var tr = el("tr");
      tr.appendChild(el("td", p[0]));
      tr.appendChild(el("td", p[1]));
      t.appendChild(tr);
    });
    return t;
  }
  function show(i) {
    var d = data.items[i];
    panel.textContent = "";
    panel.appendChild(el("h2", d.label));
    panel.appendChild(el("div", "id: " + d.id, "meta"));
    panel.appendChild(el("div", "depth " + d.depth + " \\u00b7 " + d.status, "meta"));
    if (d.scores) panel.appendChild(rows(d.scores));
    if (d.path) {
      panel.appendChild(el("h3", "path"));
      var ol = el("ol", null, "path");
      d.path.forEach(function (p) {
        ol.appendChild(el("li", (p[1] === null ? "start: " : "along " + p[1] + " to ") + p[0]));
      });
      panel.appendChild(ol);
    }
    if (d.metadata && d.metadata.length) {
      panel.appendChild(el("h3", "metadata"));
      panel.appendChild(rows(d.metadata));
    }
    if (d.content !== undefined) {
      panel.appendChild(el("h3", "content"));
      panel.appendChild(el("pre", d.content, "content"));
      if (d.contentCut) {
        panel.appendChild(el("div", "(first " + data.contentChars + " of " + d.contentCut +
          " characters)", "meta"));
      }
    }
  }
  function highlight(i) {
    var on = {};
    var d = data.items[i];
    on[i] = true;
    var chain = d.path ? d.path.map(function (p) { return p[2]; }) : [i];
    chain.forEach(function (k) { if (k >= 0) on[k] = true; });
    var steps = {};
    for (var k = 1; k < chain.length; k++) steps[chain[k - 1] + ">" + chain[k]] = true;
    boxes.forEach(function (b) {
      var j = +b.getAttribute("data-i");
      b.classList.toggle("hl", !!on[j]);
      b.classList.toggle("sel", j === i);
    });
    edges.forEach(function (e) {
      var key = e.getAttribute("data-from") + ">" + e.getAttribute("data-to");
      e.classList.toggle("hl", !!steps[key]);
    });
    svg.classList.add("dim");
  }
  function select(i) { show(i); highlight(i); }
  function clear() {
    svg.classList.remove("dim");
    boxes.forEach(function (b) { b.classList.remove("hl", "sel"); });
    edges.forEach(function (e) { e.classList.remove("hl"); });
  }
  function boxOf(ev) {
    var t = ev.target;
    var b = t && t.closest ? t.closest(".node,.via") : null;
    return b ? +b.getAttribute("data-i") : -1;
  }
  svg.addEventListener("mouseover", function (ev) {
    var i = boxOf(ev);
    if (i >= 0 && pinned < 0) select(i);
  });
  svg.addEventListener("mouseleave", function () { if (pinned < 0) clear(); });
  svg.addEventListener("focusin", function (ev) { var i = boxOf(ev); if (i >= 0) select(i); });
  svg.addEventListener("click", function (ev) {
    var i = boxOf(ev);
    pinned = i === pinned ? -1 : i;
    if (i >= 0) select(i); else clear();
  });
  // Labels were cut to a number of characters; cut those still wider than their box.
  svg.querySelectorAll(".label").forEach(function (t) {
    var room = +t.getAttribute("data-room");
    var text = t.textContent;
    while (text.length > 1 && t.getComputedTextLength() > room) {
      text = text.slice(0, -1);
      t.textContent = text + "\u2026";
    }
  });
  var m = /^#node=(\\d+)$/.exec(location.hash);
  if (m && +m[1] < boxes.length) {
    pinned = +m[1];
    select(pinned);
    boxes[pinned].scrollIntoView({block: "nearest", inline: "nearest"});
  }
  document.documentElement.setAttribute("data-hoprag-boxes", String(boxes.length));
})();
"""


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _check_labels(title: Any, query: Any, label_field: Any) -> None:
    """Refuse a title, query or label field of the wrong type."""
    if not isinstance(title, str):
        raise invalid("title", title, "a string")
    if query is not None and not isinstance(query, str):
        raise invalid("query", query, "a string or None")
    if label_field is not None and not isinstance(label_field, str):
        raise invalid("label_field", label_field, "a metadata field name or None")


def _summary(graph: _Graph, stats: TraversalStats | None) -> str:
    """The page's one-line summary: nodes, starts, edges, depths, and the run's rounds."""
    depth = max((it.depth for it in graph.items if it.node is not None), default=0)
    starts = sum(1 for it in graph.items if it.node is not None and it.depth == 0)
    summary = (
        f"{graph.given} nodes admitted, {starts} start nodes, {len(graph.edges)} edges "
        f"followed, depth 0 to {depth}"
    )
    if stats is not None and stats.hops:
        plan = f"plan {stats.plan}, " if stats.plan else ""
        summary += f"; {plan}{stats.rounds} rounds, {stats.total_queries} store queries"
    return summary


def _notes(graph: _Graph) -> list[str]:
    """What the page says it left out."""
    notes = []
    if graph.drawn < graph.given:
        notes.append(
            f"Showing the first {graph.drawn} of {graph.given} nodes, in the result's order "
            f"({graph.given - graph.drawn} left out)."
        )
    if graph.path_only_left_out:
        notes.append(f"{graph.path_only_left_out} nodes on paths were left out.")
    return notes


def _header(
    graph: _Graph, stats: TraversalStats | None, title: str, query: str | None
) -> list[str]:
    """The page header's HTML parts: title, query, summary, notes and legend."""
    head = [f"<h1>{_x(_line(title, 200))}</h1>"]
    if query is not None:
        head.append(f'<p class="meta">query: {_x(_line(query, 500))}</p>')
    head.append(f'<p class="meta summary">{_x(_summary(graph, stats))}</p>')
    head += [f'<p class="note">{_x(n)}</p>' for n in _notes(graph)]
    head.append(
        '<p class="meta legend"><span><span class="sw start"></span>start node</span>'
        '<span><span class="sw node"></span>admitted node</span>'
        '<span><span class="sw via"></span>on a path only</span>'
        "<span>hover or click a box for its content and path</span></p>"
    )
    return head


def render_html(
    result: TraversalResult | Sequence[Node],
    *,
    title: str = "hoprag traversal",
    query: str | None = None,
    label_field: str | None = "title",
    max_nodes: int = MAX_NODES,
) -> str:
    """One self-contained HTML page drawing `result` (a `TraversalResult` or any list of
    Nodes): a column per depth, the first `max_nodes` nodes as boxes ordered by score (start
    nodes marked), nodes only on their paths as dashed boxes, and each followed edge labelled.
    A box shows the node's `label_field` metadata (else its id); hovering, focusing or
    clicking it shows the content, metadata, scores and path (`#node=I` at the end of the
    page's address selects box I on opening). The page says when nodes were left out."""
    nodes = _check(result, max_nodes)
    _check_labels(title, query, label_field)
    graph = _build(nodes, max_nodes)
    index = {it.id: i for i, it in enumerate(graph.items)}
    data = {
        "contentChars": CONTENT_CHARS,
        "items": [_details(it, index, label_field) for it in graph.items],
    }
    svg = _svg(graph, label_field)
    stats = getattr(result, "stats", None) if isinstance(result, TraversalResult) else None
    head = _header(graph, stats, title, query)
    csp = (
        f"default-src 'none'; script-src {_csp_hash(_JS)}; style-src {_csp_hash(_CSS)}; "
        "img-src 'none'; base-uri 'none'; form-action 'none'"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_x(csp)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_x(_line(title, 200))}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        f"<header>{''.join(head)}</header>\n"
        f'<main><div id="canvas">{svg}</div>\n'
        '<aside id="details"><p class="meta">Hover or click a box.</p></aside></main>\n'
        f'<script type="application/json" id="hoprag-data">{_script_json(data)}</script>\n'
        f"<script>{_JS}</script>\n</body>\n</html>\n"
    )


def write_html(
    result: TraversalResult | Sequence[Node], path: str | os.PathLike[str], **kw: Any
) -> Path:
    """Write `render_html(result, **kw)` to `path` (UTF-8) and return the path. The directory
    must exist (InvalidInputError naming it otherwise)."""
    target = Path(path)
    if target.is_dir():
        raise invalid("html path", str(path), "a file name, not a directory")
    if not target.parent.is_dir():
        raise invalid(
            "html path", str(path), f"a file in an existing directory ({target.parent} is not one)"
        )
    page = render_html(result, **kw)
    target.write_text(page, encoding="utf-8")
    return target
