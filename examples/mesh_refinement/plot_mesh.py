#!/usr/bin/env python3
"""Draws the mesh written by `mesh_refinement --vtk FILE`, coloured by the rank that refined
each subdomain: one panel per run (cell fields rank_<policy>), static placement first, with
subdomain outlines; a zoom on the finest region under the first panel's colours is drawn
beside them.

    examples/mesh_refinement/plot_mesh.py mesh.vtk mesh.png [--fields=rank_none,rank_diffusion]

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
    args = [a for a in sys.argv[1:] if not a.startswith("--fields")]
    wanted = [a.split("=", 1)[1].split(",") for a in sys.argv[1:] if a.startswith("--fields=")]
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
    names = wanted[0] if wanted else [k for k in fields if k.startswith("rank_")]
    names = [n for n in names if n in fields]
    if not names:
        print(f"plot_mesh.py: no rank_* field in {args[0]}")
        return 1
    ranks = int(max(fields[n].max() for n in names)) + 1
    cmap = plt.get_cmap("tab10" if ranks <= 10 else "tab20", max(ranks, 2))
    t = Triangulation(xy[:, 0], xy[:, 1], tri)
    # Subdomain outlines: the edges of triangles whose neighbour lies in another subdomain.
    sub = fields["subdomain"]
    edges = np.sort(np.concatenate([tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [2, 0]]]), axis=1)
    owner = np.concatenate([sub, sub, sub])
    order = np.lexsort((edges[:, 1], edges[:, 0]))
    edges, owner = edges[order], owner[order]
    same = np.all(edges[1:] == edges[:-1], axis=1)
    boundary = np.ones(len(edges), dtype=bool)
    boundary[1:][same] = False
    boundary[:-1][same] = False
    outline = xy[edges[boundary]]

    # The zoom: a window around the smallest triangle, with the triangles' edges.
    area = 0.5 * np.abs(np.cross(xy[tri[:, 1]] - xy[tri[:, 0]], xy[tri[:, 2]] - xy[tri[:, 0]]))
    cx, cy = xy[tri[np.argmin(area)]].mean(axis=0)
    half = 0.02
    centre = xy[tri].mean(axis=1)
    near = (np.abs(centre[:, 0] - cx) < 1.5 * half) & (np.abs(centre[:, 1] - cy) < 1.5 * half)

    panels = len(names) + 1
    cols = min(panels, 3)
    rows = (panels + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols + 1, 4.3 * rows), squeeze=False)
    axes = axes.ravel()
    colours = dict(cmap=cmap, vmin=-0.5, vmax=cmap.N - 0.5)
    for ax, name in zip(axes, names):
        ax.tripcolor(t, facecolors=fields[name], edgecolors="face", linewidth=0.2, **colours)
        if len(tri) <= 100000:
            ax.triplot(t, color="k", linewidth=0.05)
        ax.add_collection(LineCollection(outline, colors="k", linewidths=0.5))
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_title(name[5:], fontsize=10)
    zoom = axes[len(names)]
    zt = Triangulation(xy[:, 0], xy[:, 1], tri[near])
    zoom.tripcolor(zt, facecolors=fields[names[0]][near], edgecolors="k", linewidth=0.1, **colours)
    zoom.set_xlim(cx - half, cx + half)
    zoom.set_ylim(cy - half, cy + half)
    zoom.set_title(f"{names[0][5:]}, zoom x{1 / (2 * half):.0f} at ({cx:.3f}, {cy:.3f})",
                   fontsize=10)
    for ax in axes[panels:]:
        ax.axis("off")
    for ax in axes[:panels]:
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
    sm = plt.cm.ScalarMappable(cmap=cmap, norm=plt.Normalize(-0.5, cmap.N - 0.5))
    fig.colorbar(sm, ax=axes.tolist(), ticks=range(ranks), label="rank", shrink=0.6)
    fig.suptitle(f"PREMA mesh_refinement: {len(tri)} triangles in {sub.max() + 1} subdomains, "
                 "coloured by the rank that refined each subdomain")
    fig.savefig(args[1], dpi=150)
    print(f"wrote {args[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
