#!/usr/bin/env python
"""The figures of `scripts/bench_scale.py`: each measure against the corpus size, log scale.

    python scripts/scale_chart.py bench-out/scale.json docs/scale.png

(`bench_scale.py --chart PNG` draws the same from the run it just made.) One PNG, one panel a
measure, one line a case: p50 latency of each traversal case per store measured (Cassandra,
each candidate pool, MemoryStore; log-log), rows read and node CPU per traversal on Cassandra,
the single reads' p50 (log-log), and the load's documents per second per tenth of each size's
load (against the documents written). Needs matplotlib (the `test` and `bench` extras)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

LATENCY_STORES = ("cassandra", "memory")


def _sizes_with(data: dict[str, Any], store: str) -> list[dict[str, Any]]:
    """The generated corpus's sizes measured on `store` (WordNet, one point of another
    corpus, is in the tables only)."""
    return [s for s in _generated(data) if s.get(store)]


def _generated(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The sizes of the generated corpus (runs before WordNet was measured have no `corpus`)."""
    return [s for s in data["sizes"] if s.get("corpus", "generated") == "generated"]


def _stores(data: dict[str, Any]) -> list[str]:
    """The stores measured, Cassandra first (then its pools and edge plans, as bench_scale
    labels them), MemoryStore last."""
    args = data.get("args", {})
    pools = [f"cassandra pool {p}" for p in args.get("pool", [])]
    pools += [f"cassandra plans {h}" for h in args.get("hub_holders", [])]
    pools += [f"cassandra plans read {r}" for r in args.get("read_holders", [])]
    return [s for s in ("cassandra", *pools, "memory") if _sizes_with(data, s)]


def _case_lines(ax: Any, data: dict[str, Any], store: str, key: str, label: str) -> None:
    """One line per case of `store`: `key` against the size."""
    sizes = _sizes_with(data, store)
    names = list(sizes[0][store]["cases"])
    bases = list(dict.fromkeys(name.split(" x")[0] for name in names))
    colors = plt_colors(len(bases))
    for name in names:
        values = [s[store]["cases"][name].get(key) for s in sizes]
        points = [(s["size"], v) for s, v in zip(sizes, values, strict=True) if v is not None]
        if points:
            xs, ys = zip(*points, strict=True)
            # One color a case, solid for one traversal in flight, dashed for more.
            style = "--" if " x" in name else "-"
            color = colors[bases.index(name.split(" x")[0])]
            ax.plot(xs, ys, style, color=color, marker="o", markersize=3, linewidth=1, label=name)
    _proportional(ax, [s["size"] for s in sizes])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("documents (log)")
    ax.set_ylabel(label)


def _proportional(ax: Any, sizes: list[int]) -> None:
    """A grey dotted guide growing as the corpus does, from the panel's lowest first point."""
    lines = [line for line in ax.get_lines() if len(line.get_xdata()) > 1]
    if not lines or len(sizes) < 2:
        return
    y0 = min(float(line.get_ydata()[0]) for line in lines)
    ax.plot([sizes[0], sizes[-1]], [y0, y0 * sizes[-1] / sizes[0]], ":", color="grey",
            linewidth=1, label="grows as the corpus")  # fmt: skip


def plt_colors(count: int) -> list[Any]:
    """`count` distinct colors (matplotlib's tab10, then tab20 for more)."""
    import matplotlib

    cmap = matplotlib.colormaps["tab10" if count <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(count)]


def _probe_lines(ax: Any, data: dict[str, Any]) -> None:
    """One line per single read: its p50 against the size."""
    sizes = [s for s in _generated(data) if s.get("single_reads")]
    for name in sizes[0]["single_reads"] if sizes else ():
        xs = [s["size"] for s in sizes]
        ys = [s["single_reads"][name]["p50_ms"] for s in sizes]
        ax.plot(xs, ys, marker="o", markersize=3, linewidth=1, label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("documents (log)")
    ax.set_ylabel("p50 ms of one read (log)")
    ax.set_title("single reads on Cassandra", fontsize=9)


def _load_lines(ax: Any, data: dict[str, Any]) -> None:
    """One line per size loaded in the run: documents per second of each tenth."""
    for s in data["sizes"]:
        parts = s["load"]["parts"]
        if parts:
            ax.plot([p["upto"] for p in parts], [p["docs_per_s"] for p in parts],
                    marker="o", markersize=3, linewidth=1,
                    label=s.get("label") or f"{s['size']:,}")  # fmt: skip
    if not ax.has_data():
        ax.text(0.5, 0.5, "no load in this run (tables reused)", ha="center",
                transform=ax.transAxes)  # fmt: skip
        ax.set_xticks([])
        ax.set_yticks([])
        return
    ax.set_xscale("log")
    ax.set_xlabel("documents written (log)")
    ax.set_ylabel("documents/s in each tenth")
    ax.set_title("loading (library loader)", fontsize=9)


def chart(data: dict[str, Any], path: Path) -> bool:
    """Draw every panel of `data` (bench_scale's JSON) into `path`; False when matplotlib is
    missing (said on stdout)."""
    try:
        import matplotlib
    except ImportError:
        print("  matplotlib missing: pip install -e '.[bench]' for the chart")
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stores = _stores(data)
    panels = len(stores) + 4
    cols = 3
    rows = -(-panels // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(15, 4.2 * rows), squeeze=False)
    flat = list(axes.flat)
    for ax, store in zip(flat, stores, strict=False):
        _case_lines(ax, data, store, "p50_ms", "p50 ms per traversal (log)")
        ax.set_title(f"latency, {store}, 1 in flight", fontsize=9)
    rest = flat[len(stores) :]
    if _sizes_with(data, "cassandra"):
        _case_lines(rest[0], data, "cassandra", "rows", "rows read per traversal (log)")
        rest[0].set_title("rows read, cassandra", fontsize=9)
        _case_lines(rest[1], data, "cassandra", "node_cpu_ms", "node CPU ms per traversal (log)")
        rest[1].set_title("node CPU, cassandra", fontsize=9)
    _probe_lines(rest[2], data)
    _load_lines(rest[3], data)
    for ax in flat[:panels]:
        if ax.has_data():
            ax.legend(fontsize=6, ncol=2)
    for ax in flat[panels:]:
        ax.set_visible(False)
    machine = data.get("machine", {})
    fig.suptitle(
        f"bench_scale, {machine.get('date', '?')}: Cassandra {machine.get('cassandra', '?')}, "
        f"{machine.get('cores', '?')} cores, {machine.get('cpu', '?')}",
        fontsize=10,
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"  chart: {path}")
    return True


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: scale_chart.py SCALE.json OUT.png", file=sys.stderr)
        return 2
    source = Path(argv[0])
    try:
        data = json.loads(source.read_text())
    except (OSError, ValueError) as exc:
        print(f"scale_chart.py: cannot read {source}: {exc}", file=sys.stderr)
        return 2
    if not isinstance(data, dict) or not isinstance(data.get("sizes"), list):
        print(f"scale_chart.py: {source} is not bench_scale.py's JSON", file=sys.stderr)
        return 2
    return 0 if chart(data, Path(argv[1])) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
