"""Renders the comparison tables of bench/README.md as charts (PNG, with matplotlib).

A table is charted where a comment line right above it says how:

    <!-- chart: NAME, bars|rate|lines, UNIT[, ours=COLUMN] -->

- `bars`: times (lower is better), one group per row, one bar per column (ours first),
  each peer's bar labelled with its time over ours; the axis is logarithmic where the
  values span more than 20×, linear from 0 otherwise;
- `rate`: the same for rates (higher is better: GFLOP/s), on a linear axis;
- `lines`: the first column as x and every other column as a line, both axes logarithmic.

The first charted column is ours unless `ours=` names another (by its header): the bars
are labelled against it. Columns of ratios (a header with " / " in it, or "speed-up") are not charted: the bars
show them. Cells may group digits with spaces ("93 497"); empty cells are skipped.
Usage: python3 bench/charts.py [bench/README.md] [out-dir, default bench/charts].
"""
import os
import re
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MARKER = re.compile(r"<!--\s*chart:\s*([\w-]+)\s*,\s*(bars|rate|lines)\s*,\s*([^,>]*?)\s*(?:,\s*ours=([^>]*?)\s*)?-->")
OURS = "#1f6f3f"
PEERS = ["#5b8fd6", "#d9823b", "#b55dbd", "#8c8c8c", "#c9b33a", "#4fb3b3"]


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def number(text):
    t = text.replace(" ", "").replace("\u202f", "").replace(",", "").rstrip("×")
    try:
        return float(t)
    except ValueError:
        return None


def plain(text):
    """A header or row name without Markdown's backticks and escapes."""
    return text.replace("`", "").replace("\\", "")


def tables(markdown):
    """(name, kind, unit, ours, header, rows) of every marked table."""
    lines = markdown.splitlines()
    found = []
    for i, line in enumerate(lines):
        m = MARKER.search(line)
        if not m:
            continue
        j = i + 1
        while j < len(lines) and not lines[j].lstrip().startswith("|"):
            j += 1
        block = []
        while j < len(lines) and lines[j].lstrip().startswith("|"):
            block.append(cells(lines[j]))
            j += 1
        if len(block) < 3:
            sys.exit(f"chart {m.group(1)}: no table after its marker")
        header, rows = block[0], block[2:]
        ours = m.group(4)
        if ours is not None and ours not in [plain(h) for h in header]:
            sys.exit(f"chart {m.group(1)}: ours={ours} names no column of {header}")
        found.append((m.group(1), m.group(2), m.group(3), ours, header, rows))
    return found


def charted_columns(header):
    return [k for k, h in enumerate(header) if k > 0 and " / " not in h and "speed-up" not in h.lower()]


def bars(name, kind, unit, ours_name, header, rows, out):
    cols = charted_columns(header)
    ref = cols[0] if ours_name is None else [plain(h) for h in header].index(ours_name)
    groups = [plain(r[0]) for r in rows]
    width = 0.8 / len(cols)
    values = [number(r[k]) for r in rows for k in cols if k < len(r) and number(r[k]) is not None]
    # The legend sits right of the axes: room for it.
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(rows) + 2.5) + 3.0, 4.4))
    for n, k in enumerate(cols):
        xs, ys = [], []
        for g, r in enumerate(rows):
            v = number(r[k]) if k < len(r) else None
            if v is not None:
                xs.append(g + (n - (len(cols) - 1) / 2) * width)
                ys.append(v)
        color = OURS if k == ref else PEERS[(n - (k > ref)) % len(PEERS)]
        ax.bar(xs, ys, width, label=plain(header[k]), color=color)
        if k == ref:
            continue
        for x, y, r in zip(xs, ys, [r for r in rows if k < len(r) and number(r[k]) is not None]):
            ours = number(r[ref])
            if ours:
                ratio = y / ours if kind == "bars" else ours / y
                ax.annotate(f"{ratio:.2g}×", (x, y), ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, rotation=20 if max(len(g) for g in groups) > 14 else 0, ha="right", fontsize=8)
    ours = plain(header[ref])
    wide = max(values) / min(values) > 20
    if wide:
        ax.set_yscale("log")
    scale = "log scale, " if wide else ""
    if kind == "bars":
        ax.set_ylabel(f"{unit} ({scale}lower is better)")
        note = f"label: the bar's time over {ours} (above 1: {ours} faster)"
    else:
        ax.set_ylabel(f"{unit} ({scale}higher is better)")
        note = f"label: {ours} over the bar's rate (above 1: {ours} faster)"
    ax.set_title(textwrap.fill(f"{name}: {note}", 90), fontsize=9)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def lines(name, unit, header, rows, out):
    xs = [number(r[0]) for r in rows]
    fig, ax = plt.subplots(figsize=(6.0, 4.2))
    for n, k in enumerate(charted_columns(header)):
        pts = [(x, number(r[k])) for x, r in zip(xs, rows) if x is not None and number(r[k]) is not None]
        color = PEERS[n % len(PEERS)]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=plain(header[k]), color=color)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(plain(header[0]))
    ax.set_ylabel(f"{unit} (log scale)")
    ax.set_title(name, fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main():
    readme = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "README.md")
    out_dir = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(readme), "charts")
    os.makedirs(out_dir, exist_ok=True)
    with open(readme, encoding="utf-8") as f:
        found = tables(f.read())
    if not found:
        sys.exit(f"no chart markers in {readme}")
    for name, kind, unit, ours, header, rows in found:
        out = os.path.join(out_dir, f"{name}.png")
        if kind == "lines":
            lines(name, unit, header, rows, out)
        else:
            bars(name, kind, unit, ours, header, rows, out)
        print(f"{out}: {len(rows)} rows")


if __name__ == "__main__":
    main()
