#!/usr/bin/env python3
"""Plots the UTS benchmark's parallel efficiency (sequential loop time / (ranks x parallel time))
against the number of ranks, one line per tree, from the JSON written by run_uts.sh (an array of
`uts --json` objects).

    benchmarks/plot_uts.py [results/uts.json] [results/uts.png]

Needs matplotlib; without it, prints a note and exits 0.
"""
import json
import os
import sys

import plot_common


def main() -> int:
    src, dst, plt = plot_common.paths_and_pyplot(__file__, "uts.json", "uts.png")
    if plt is None:
        return 0

    with open(src) as f:
        runs = json.load(f)
    series = {}  # tree -> [(ranks, efficiency)]
    for r in runs:
        series.setdefault(r["tree"], []).append((r["ranks"], r["efficiency"]))
    if not series:
        print(f"plot_uts.py: no runs in {src}")
        return 1

    fig, ax = plt.subplots(figsize=(7, 4.5))
    ranks = sorted({p[0] for pts in series.values() for p in pts})
    ax.plot(ranks, [1.0] * len(ranks), "k:", label="ideal")
    for tree in sorted(series):
        pts = sorted(series[tree])
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=tree)
    ax.set_xticks(ranks)
    top = max(p[1] for pts in series.values() for p in pts)
    ax.set_ylim(0, max(1.1, top * 1.05))  # above 1: the loop was slowed by other jobs
    workers = sorted({r.get("workers", 1) for r in runs})
    ax.set_xlabel("ranks (%s worker(s) each)" % "/".join(str(w) for w in workers))
    ax.set_ylabel("efficiency (sequential / (ranks x parallel))")
    ax.set_title("UTS on PREMA: parallel efficiency")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(dst)), exist_ok=True)
    fig.savefig(dst, dpi=120)
    print(f"wrote {dst}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
