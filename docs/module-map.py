#!/usr/bin/env python3
"""Draw the package's module map as an SVG picture.

Reads the manifest as `swift package dump-package` prints it (run in the package's
directory, or read from a file or standard input with --json) and draws the targets under
Sources/ (executables included, tests and anything outside Sources/ left out) with their
dependency edges, in layers: a target's layer is the length of its longest dependency chain
within the package, so targets that depend on nothing are at the bottom and the executables
are on the top row. System-library targets (and targets that link a system library
themselves) are drawn dashed; the external products a target uses are named in small type
under its name. Edges implied by a longer path are left out unless --all-edges is given.

The output depends only on the manifest: the same manifest gives the same file, byte for
byte. Python 3 standard library only; no graphviz.

    docs/module-map.py                          # writes docs/module-map.svg
    docs/module-map.py --check                  # exit 1 when docs/module-map.svg is stale
    swift package dump-package | docs/module-map.py --json - --output map.svg
"""

import argparse
import json
import os
import subprocess
import sys
from xml.sax.saxutils import escape

DOCS_DIR = os.path.dirname(os.path.abspath(__file__))
PACKAGE_DIR = os.path.dirname(DOCS_DIR)
DEFAULT_OUTPUT = os.path.join(DOCS_DIR, "module-map.svg")

# Geometry (px). Monospace text, so a label's width follows from its length.
NAME_SIZE = 13
NAME_CHAR = 7.9  # advance of one character at NAME_SIZE in a monospace font
NOTE_SIZE = 10
NOTE_CHAR = 6.1
BOX_PAD = 10
BOX_H = 26
BOX_H_NOTE = 38
H_GAP = 16  # between two boxes of a row
DUMMY_W = 2  # where an edge crosses a row
DUMMY_GAP = 7
ROW_GAP = 46  # between rows
MIN_WIDTH = 640
MARGIN = 20
TITLE_H = 34
LEGEND_H = 40

STYLE = {
    "executable": {"fill": "#1f4e8c", "stroke": "#163a69", "text": "#ffffff", "note": "#d6e2f3", "dash": None},
    "library": {"fill": "#eef3fa", "stroke": "#5b7db1", "text": "#12233d", "note": "#5f6b7a", "dash": None},
    "system": {"fill": "#f6f6f6", "stroke": "#8a8a8a", "text": "#333333", "note": "#6b6b6b", "dash": "4 3"},
}
EDGE = {"library": "#7f93b5", "executable": "#3a6db3", "system": "#7f93b5"}


def load_manifest(args):
    if args.json == "-":
        return json.load(sys.stdin)
    if args.json:
        with open(args.json, encoding="utf-8") as handle:
            return json.load(handle)
    swift = os.environ.get("SWIFT", "swift")
    result = subprocess.run(
        [swift, "package", "dump-package"], cwd=args.package_dir, check=False, capture_output=True, text=True
    )
    if result.returncode != 0:
        sys.exit(f"module-map: `{swift} package dump-package` failed: {result.stderr.strip().splitlines()[-1:]}")
    return json.loads(result.stdout)


def dependency_names(target):
    """(internal target names, external product names) a target declares."""
    internal, external = [], []
    for dependency in target.get("dependencies", []):
        (kind, value), = dependency.items()
        if kind in ("byName", "target"):
            internal.append(value[0])
        elif kind == "product":
            # A product of this package named by its package is internal in effect; every
            # other product belongs to an external package.
            external.append(value[0])
    return internal, external


def in_sources(target):
    path = target.get("path")
    if target.get("type") in ("test", "plugin", "macro", "binary"):
        return False
    return path is None or path == "Sources" or path.startswith("Sources/")


def kind_of(target):
    if target["type"] == "executable":
        return "executable"
    if target["type"] == "system":
        return "system"
    for setting in target.get("settings", []):
        if "linkedLibrary" in setting.get("kind", {}):
            return "system"
    return "library"


def build_graph(manifest, all_edges):
    targets = {t["name"]: t for t in manifest["targets"] if in_sources(t)}
    nodes = {}
    for name, target in sorted(targets.items()):
        internal, external = dependency_names(target)
        nodes[name] = {
            "name": name,
            "kind": kind_of(target),
            "deps": sorted({d for d in internal if d in targets and d != name}),
            "external": sorted(set(external) | {d for d in internal if d not in targets and d not in manifest_target_names(manifest)}),
        }
    # Layers: longest dependency chain below each target; executables on the top row.
    depth = {}

    def longest(name, trail=()):
        if name in depth:
            return depth[name]
        if name in trail:
            sys.exit(f"module-map: dependency cycle through {name}")
        below = [longest(d, trail + (name,)) for d in nodes[name]["deps"]]
        depth[name] = 1 + max(below) if below else 0
        return depth[name]

    for name in nodes:
        longest(name)
    top = max([depth[n] for n in nodes if nodes[n]["kind"] != "executable"] + [-1]) + 1
    for name, node in nodes.items():
        node["layer"] = top if node["kind"] == "executable" else depth[name]
    # A system library sits just below the lowest module that uses it, so that the bottom
    # row holds the package's own modules that depend on nothing.
    for name in sorted(nodes):
        node = nodes[name]
        users = [nodes[n]["layer"] for n in nodes if name in nodes[n]["deps"]]
        if node["kind"] == "system" and not node["deps"] and users:
            node["layer"] = min(users) - 1

    # Edges, without those a longer path implies (unless asked for all).
    reach = {}

    def reachable(name):
        if name not in reach:
            found = set()
            for d in nodes[name]["deps"]:
                found.add(d)
                found |= reachable(d)
            reach[name] = found
        return reach[name]

    edges = []
    for name in sorted(nodes):
        for d in nodes[name]["deps"]:
            implied = any(d in reachable(other) for other in nodes[name]["deps"] if other != d)
            if all_edges or not implied:
                edges.append((name, d))
    return nodes, edges


def manifest_target_names(manifest):
    return {t["name"] for t in manifest["targets"]}


def box_size(node):
    if node["kind"] == "dummy":
        return DUMMY_W, 0
    width = len(node["name"]) * NAME_CHAR
    if node["external"]:
        width = max(width, len(" · ".join(node["external"])) * NOTE_CHAR)
    return round(width + 2 * BOX_PAD, 1), BOX_H_NOTE if node["external"] else BOX_H


def add_dummies(nodes, edges):
    """Splits every edge that spans several layers into one hop per layer, through a point
    of its own in each layer it crosses, so that edges go between boxes, not behind them.
    Returns the hops and each edge's chain of nodes."""
    hops, chains = [], {}
    for a, b in edges:
        chain = [a]
        for layer in range(nodes[a]["layer"] - 1, nodes[b]["layer"], -1):
            dummy = f"{a}>{b}@{layer}"
            nodes[dummy] = {"name": dummy, "kind": "dummy", "layer": layer, "deps": [], "external": []}
            chain.append(dummy)
        chain.append(b)
        hops += list(zip(chain, chain[1:]))
        chains[(a, b)] = chain
    return hops, chains


def crossings(rows, down):
    total = 0
    for upper in rows[1:]:
        index = {}
        pairs = []
        for i, name in enumerate(upper):
            for target in down[name]:
                pairs.append((i, target))
        if not pairs:
            continue
        lower_row = next(r for r in rows if pairs[0][1] in r)
        index = {n: j for j, n in enumerate(lower_row)}
        ends = [(i, index[t]) for i, t in pairs]
        for k, (i1, j1) in enumerate(ends):
            for i2, j2 in ends[k + 1:]:
                if (i1 - i2) * (j1 - j2) < 0:
                    total += 1
    return total


def order_layers(nodes, hops):
    """Rows of names per layer, bottom first, ordered to keep crossings few."""
    count = max(node["layer"] for node in nodes.values()) + 1
    rows = [[] for _ in range(count)]
    for name in sorted(nodes):
        rows[nodes[name]["layer"]].append(name)
    up = {n: [] for n in nodes}  # the hop's upper end, per lower end
    down = {n: [] for n in nodes}
    for a, b in hops:
        down[a].append(b)
        up[b].append(a)

    def positions():
        pos = {}
        for row in rows:
            for i, name in enumerate(row):
                pos[name] = (i + 0.5) / len(row)
        return pos

    def resort(row, neighbours, pos):
        keyed = []
        for i, name in enumerate(row):
            near = sorted(pos[n] for n in neighbours[name])
            if near:
                middle = len(near) // 2
                centre = near[middle] if len(near) % 2 else (near[middle - 1] + near[middle]) / 2
            else:
                centre = pos[name]
            keyed.append((round(centre, 9), i, name))
        return [name for _, _, name in sorted(keyed)]

    best, best_count = [list(r) for r in rows], crossings(rows, down)
    for _ in range(24):
        pos = positions()
        for i in range(1, count):
            rows[i] = resort(rows[i], down, pos)
            pos = positions()
        for i in range(count - 2, -1, -1):
            rows[i] = resort(rows[i], up, pos)
            pos = positions()
        now = crossings(rows, down)
        if now < best_count:
            best, best_count = [list(r) for r in rows], now
    return best, up, down


def gap(a, b, nodes):
    return DUMMY_GAP if "dummy" in (nodes[a]["kind"], nodes[b]["kind"]) else H_GAP


def row_width(row, sizes, nodes):
    return sum(sizes[n][0] for n in row) + sum(gap(a, b, nodes) for a, b in zip(row, row[1:]))


def settle(row, want, sizes, nodes, left, right):
    """x centres for `row` as near `want` as the order, the gaps and the bounds allow."""
    xs = list(want)
    for i in range(len(row)):
        low = left + sizes[row[i]][0] / 2 if i == 0 else xs[i - 1] + sizes[row[i - 1]][0] / 2 + gap(row[i - 1], row[i], nodes) + sizes[row[i]][0] / 2
        xs[i] = max(xs[i], low)
    for i in range(len(row) - 1, -1, -1):
        high = right - sizes[row[i]][0] / 2 if i == len(row) - 1 else xs[i + 1] - sizes[row[i + 1]][0] / 2 - gap(row[i], row[i + 1], nodes) - sizes[row[i]][0] / 2
        xs[i] = min(xs[i], high)
    return xs


def layout(nodes, edges):
    hops, chains = add_dummies(nodes, edges)
    sizes = {name: box_size(node) for name, node in nodes.items()}
    rows, up, down = order_layers(nodes, hops)
    width = max(max(row_width(row, sizes, nodes) for row in rows) + 2 * MARGIN, MIN_WIDTH)
    left, right = MARGIN, width - MARGIN

    # x: packed and centred, then each row pulled towards its neighbours, a few times over.
    x = {}
    for row in rows:
        start = (width - row_width(row, sizes, nodes)) / 2
        for i, name in enumerate(row):
            x[name] = start + sizes[name][0] / 2
            start += sizes[name][0] + (gap(name, row[i + 1], nodes) if i + 1 < len(row) else 0)
    both = {n: down[n] + up[n] for n in nodes}
    for sweep in range(12):
        order = range(1, len(rows)) if sweep % 2 == 0 else range(len(rows) - 2, -1, -1)
        for i in order:
            row = rows[i]
            neighbours = both if sweep >= 8 else down if sweep % 2 == 0 else up
            want = []
            for name in row:
                near = [x[n] for n in neighbours[name]]
                want.append(sum(near) / len(near) if near else x[name])
            for name, value in zip(row, settle(row, want, sizes, nodes, left, right)):
                x[name] = value
    # Centre the drawing.
    low = min(x[n] - sizes[n][0] / 2 for n in x)
    high = max(x[n] + sizes[n][0] / 2 for n in x)
    shift = (width - (high - low)) / 2 - low
    x = {n: value + shift for n, value in x.items()}

    # y: the top layer first.
    place = {}
    y = MARGIN + TITLE_H
    for row in reversed(rows):
        if not row:
            continue
        real = [sizes[n][1] for n in row if nodes[n]["kind"] != "dummy"]
        height = max(real) if real else BOX_H
        for name in row:
            w, h = sizes[name]
            if nodes[name]["kind"] == "dummy":
                place[name] = (x[name] - w / 2, y, w, height)
            else:
                place[name] = (x[name] - w / 2, y + (height - h) / 2, w, h)
        y += height + ROW_GAP
    height = y - ROW_GAP + MARGIN + LEGEND_H
    return place, chains, width, height


def fmt(value):
    text = f"{value:.1f}"
    if text == "-0.0":
        text = "0.0"
    return text[:-2] if text.endswith(".0") else text


def ports(names, place, x0, w):
    """Spreads the ends of a box's hops along its side, in the order of the far ends' x."""
    order = sorted(names, key=lambda n: (place[n][0] + place[n][2] / 2, n))
    span = w * 0.7
    out = {}
    for i, n in enumerate(order):
        out[n] = x0 + w / 2 + (span * ((i + 0.5) / len(order) - 0.5) if len(order) > 1 else 0)
    return out


def render(nodes, chains, place, width, height, title):
    out = []
    add = out.append
    add('<?xml version="1.0" encoding="UTF-8"?>')
    add(
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{fmt(width)}" height="{fmt(height)}" '
        f'viewBox="0 0 {fmt(width)} {fmt(height)}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace">'
    )
    add(f"<title>{escape(title)}</title>")
    add("<defs>")
    for kind in sorted(EDGE):
        add(
            f'<marker id="arrow-{kind}" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto">'
            f'<path d="M0,0 L8,4 L0,8 z" fill="{EDGE[kind]}"/></marker>'
        )
    add("</defs>")
    add(f'<rect x="0" y="0" width="{fmt(width)}" height="{fmt(height)}" fill="#ffffff"/>')
    add(
        f'<text x="{fmt(MARGIN)}" y="{fmt(MARGIN + 14)}" font-size="15" font-weight="bold" fill="#12233d">{escape(title)}</text>'
    )

    hops_out = {n: [] for n in nodes}
    hops_in = {n: [] for n in nodes}
    for chain in chains.values():
        for a, b in zip(chain, chain[1:]):
            hops_out[a].append(b)
            hops_in[b].append(a)
    out_port = {n: ports(hops_out[n], place, place[n][0], place[n][2]) for n in nodes if nodes[n]["kind"] != "dummy"}
    in_port = {n: ports(hops_in[n], place, place[n][0], place[n][2]) for n in nodes if nodes[n]["kind"] != "dummy"}

    add('<g fill="none" stroke-width="1.3" stroke-opacity="0.8">')
    for (a, b), chain in sorted(chains.items()):
        kind = nodes[a]["kind"]
        d = []
        for i, (p, q) in enumerate(zip(chain, chain[1:])):
            px, py, pw, ph = place[p]
            qx, qy, qw, qh = place[q]
            x1 = px + pw / 2 if nodes[p]["kind"] == "dummy" else out_port[p][q]
            y1 = py + ph
            x2 = qx + qw / 2 if nodes[q]["kind"] == "dummy" else in_port[q][p]
            y2 = qy if nodes[q]["kind"] == "dummy" else qy - 1
            bend = (y2 - y1) * 0.5
            if i == 0:
                d.append(f"M{fmt(x1)},{fmt(y1)}")
            d.append(f"C{fmt(x1)},{fmt(y1 + bend)} {fmt(x2)},{fmt(y2 - bend)} {fmt(x2)},{fmt(y2)}")
            if nodes[q]["kind"] == "dummy":
                d.append(f"L{fmt(x2)},{fmt(qy + qh)}")
        add(
            f'<path d="{" ".join(d)}" stroke="{EDGE[kind]}" marker-end="url(#arrow-{kind})">'
            f"<title>{escape(a)} uses {escape(b)}</title></path>"
        )
    add("</g>")

    for name in sorted((n for n in nodes if nodes[n]["kind"] != "dummy"), key=lambda n: (place[n][1], place[n][0], n)):
        node = nodes[name]
        x, y, w, h = place[name]
        style = STYLE[node["kind"]]
        dash = f' stroke-dasharray="{style["dash"]}"' if style["dash"] else ""
        add(f"<g><title>{escape(name)} ({node['kind']})</title>")
        add(
            f'<rect x="{fmt(x)}" y="{fmt(y)}" width="{fmt(w)}" height="{fmt(h)}" rx="5" '
            f'fill="{style["fill"]}" stroke="{style["stroke"]}" stroke-width="1.2"{dash}/>'
        )
        weight = ' font-weight="bold"' if node["kind"] == "executable" else ""
        add(
            f'<text x="{fmt(x + w / 2)}" y="{fmt(y + 17)}" font-size="{NAME_SIZE}" text-anchor="middle" '
            f'fill="{style["text"]}"{weight}>{escape(name)}</text>'
        )
        if node["external"]:
            add(
                f'<text x="{fmt(x + w / 2)}" y="{fmt(y + 31)}" font-size="{NOTE_SIZE}" text-anchor="middle" '
                f'fill="{style["note"]}">{escape(" · ".join(node["external"]))}</text>'
            )
        add("</g>")

    # Legend.
    ly = height - MARGIN - 18
    x = MARGIN
    for kind, label in (
        ("executable", "executable"),
        ("library", "library"),
        ("system", "system library, or links one"),
    ):
        style = STYLE[kind]
        dash = f' stroke-dasharray="{style["dash"]}"' if style["dash"] else ""
        add(
            f'<rect x="{fmt(x)}" y="{fmt(ly)}" width="22" height="14" rx="3" fill="{style["fill"]}" '
            f'stroke="{style["stroke"]}" stroke-width="1.2"{dash}/>'
        )
        add(f'<text x="{fmt(x + 28)}" y="{fmt(ly + 11)}" font-size="11" fill="#333333">{escape(label)}</text>')
        x += 28 + len(label) * 6.7 + 20
    add(
        f'<text x="{fmt(x)}" y="{fmt(ly + 11)}" font-size="11" fill="#5f6b7a">'
        "arrow: uses · small type: external products</text>"
    )
    add("</svg>")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description="Draw the module map (docs/module-map.svg) from the package manifest.")
    parser.add_argument("--json", metavar="FILE", help="read dump-package JSON from FILE ('-': standard input)")
    parser.add_argument("--package-dir", default=PACKAGE_DIR, help="where to run swift package dump-package")
    parser.add_argument("--output", default=DEFAULT_OUTPUT, help="the SVG to write (default docs/module-map.svg)")
    parser.add_argument("--all-edges", action="store_true", help="also draw the edges a longer path implies")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when --output differs")
    args = parser.parse_args()

    manifest = load_manifest(args)
    nodes, edges = build_graph(manifest, args.all_edges)
    if not nodes:
        sys.exit("module-map: no targets under Sources/ in the manifest")
    modules = len(nodes)
    place, chains, width, height = layout(nodes, edges)
    title = f"{manifest.get('name', 'package')}: the modules under Sources/ and what each uses"
    svg = render(nodes, chains, place, width, height, title)

    relative = os.path.relpath(args.output, PACKAGE_DIR)
    if args.check:
        try:
            with open(args.output, encoding="utf-8") as handle:
                current = handle.read()
        except FileNotFoundError:
            current = None
        if current != svg:
            print(f"{relative} is not what docs/module-map.py draws from Package.swift now: run make module-map", file=sys.stderr)
            sys.exit(1)
        print(f"{relative} is up to date")
        return
    with open(args.output, "w", encoding="utf-8") as handle:
        handle.write(svg)
    print(f"wrote {relative}: {modules} modules, {len(edges)} edges")


if __name__ == "__main__":
    main()
