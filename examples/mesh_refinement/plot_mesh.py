#!/usr/bin/env python3
"""Draws the coupled mesh written by `mesh_refinement --vtk FILE`, coloured by the rank that
owns each subdomain at the end of the run (cell field rank_<policy>), with subdomain outlines
and, on each shared side, the split messages sent across it (both ways, from FILE.sides); beside
it, a zoom on the side that carried the most splits, where both neighbours' triangles meet at
the same vertices.

    examples/mesh_refinement/plot_mesh.py mesh.vtk mesh.png

Needs numpy and matplotlib (python3-matplotlib); without them, prints a note and exits 0.
"""
import sys


def read_vtk(path, np):
    """Points (n x 2), triangles (m x 3) and the integer cell fields of our legacy VTK file."""
    with open(path) as f:
        lines = f.read().split("\n")
    i, points, cells, fields = 0, None, None, {}
    while i < len(lines):
        words = lines[i].split()
        if words[:1] == ["POINTS"]:
            n = int(words[1])
            points = np.array(" ".join(lines[i + 1:i + 1 + n]).split(), dtype=float).reshape(n, 3)
            i += n
        elif words[:1] == ["CELLS"]:
            m = int(words[1])
            cells = np.array(" ".join(lines[i + 1:i + 1 + m]).split(), dtype=np.int64).reshape(m, 4)
            i += m
        elif words[:1] == ["SCALARS"]:
            m = len(cells)
            fields[words[1]] = np.array(lines[i + 2:i + 2 + m], dtype=np.int64)
            i += m + 1
        i += 1
    if points is None or cells is None or "subdomain" not in fields:
        raise ValueError(f"{path}: not a mesh written by mesh_refinement")
    return points[:, :2], cells[:, 1:], fields


def main() -> int:
    args = sys.argv[1:]
    if len(args) != 2:
        print(__doc__)
        return 2
    try:
        import matplotlib
        import numpy as np

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.collections import LineCollection
        from matplotlib.tri import Triangulation
    except ImportError:
        print("plot_mesh.py: numpy/matplotlib are not installed (apt-get install "
              "python3-matplotlib); no picture drawn")
        return 0

    xy, tri, fields = read_vtk(args[0], np)
    names = [k for k in fields if k.startswith("rank_")]
    if not names:
        print(f"plot_mesh.py: no rank_* field in {args[0]}")
        return 1
    name = names[-1]
    ranks = int(fields[name].max()) + 1
    cmap = plt.get_cmap("tab10" if ranks <= 10 else "tab20", max(ranks, 2))
    t = Triangulation(xy[:, 0], xy[:, 1], tri)
    # Subdomain outlines: the edges of triangles whose neighbour lies in another subdomain.
    sub = fields["subdomain"]
    edges = np.sort(np.concatenate([tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [2, 0]]]), axis=1)
    order = np.lexsort((edges[:, 1], edges[:, 0]))
    edges = edges[order]
    same = np.all(edges[1:] == edges[:-1], axis=1)
    boundary = np.ones(len(edges), dtype=bool)
    boundary[1:][same] = False
    boundary[:-1][same] = False
    outline = xy[edges[boundary]]
    try:
        sides = np.loadtxt(args[0] + ".sides", ndmin=2)
    except OSError:
        sides = np.zeros((0, 5))

    fig, (full, zoom) = plt.subplots(1, 2, figsize=(13, 6.2))
    colours = dict(cmap=cmap, vmin=-0.5, vmax=cmap.N - 0.5)
    full.tripcolor(t, facecolors=fields[name], edgecolors="face", linewidth=0.2, **colours)
    if len(tri) <= 100000:
        full.triplot(t, color="k", linewidth=0.05)
    full.add_collection(LineCollection(outline, colors="k", linewidths=0.5))
    for x0, y0, x1, y1, n in sides:
        full.text((x0 + x1) / 2, (y0 + y1) / 2, f"{int(n)}", fontsize=6, ha="center",
                  va="center", rotation=90 if x0 == x1 else 0,
                  bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none", alpha=0.7))
    full.set_xlim(0, 1)
    full.set_ylim(0, 1)
    full.set_title(f"owner at the end ({name[5:]}); split messages per shared side", fontsize=10)

    # The zoom: a window on the busiest side, a little way along it, with every edge drawn.
    if len(sides):
        x0, y0, x1, y1, _ = sides[np.argmax(sides[:, 4])]
        cx, cy = x0 + 0.3 * (x1 - x0), y0 + 0.3 * (y1 - y0)
    else:
        cx, cy = 0.5, 0.5
    half = 0.005
    centre = xy[tri].mean(axis=1)
    near = (np.abs(centre[:, 0] - cx) < 1.5 * half) & (np.abs(centre[:, 1] - cy) < 1.5 * half)
    zt = Triangulation(xy[:, 0], xy[:, 1], tri[near])
    # Nine colours: neighbours (index +-1, +-columns) never share one below 10 columns.
    zoom.tripcolor(zt, facecolors=sub[near] % 9, edgecolors="k", linewidth=0.2,
                   cmap=plt.get_cmap("Pastel1"), vmin=-0.5, vmax=8.5)
    zoom.set_xlim(cx - half, cx + half)
    zoom.set_ylim(cy - half, cy + half)
    zoom.set_title(f"the busiest shared side, zoom x{1 / (2 * half):.0f} at ({cx:.3f}, "
                   f"{cy:.3f}), by subdomain", fontsize=10)
    for ax in (full, zoom):
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
    sm = plt.cm.ScalarMappable(cmap=cmap, norm=plt.Normalize(-0.5, cmap.N - 0.5))
    fig.colorbar(sm, ax=full, ticks=range(ranks), label="rank", shrink=0.8)
    fig.suptitle(f"PREMA mesh_refinement, coupled: {len(tri)} triangles in {sub.max() + 1} "
                 f"subdomains, {int(sides[:, 4].sum()) if len(sides) else 0} split messages")
    fig.savefig(args[1], dpi=150)
    print(f"wrote {args[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
