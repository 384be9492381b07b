#!/usr/bin/env python3
"""Draws per-worker busy time, static placement beside each balancing policy, from the JSON
written by `lb_synthetic --json` (one run, or several under "runs" with --all): one panel per
policy, like the per-core workload figures of the PREMA papers. Dashed line: the lower bound;
solid / dotted lines: the policy's and the static makespan.

    benchmarks/plot_lb.py [results/lb_synthetic.json] [results/lb_synthetic.png]

Needs matplotlib; without it, prints a note and exits 0.
"""
import json
import math
import os
import sys

import plot_common


def main() -> int:
    src, dst, plt = plot_common.paths_and_pyplot(__file__, "lb_synthetic.json", "lb_synthetic.png")
    if plt is None:
        return 0

    with open(src) as f:
        data = json.load(f)
    runs = data["runs"] if "runs" in data else [data]
    runs = [r for r in runs if "per_worker_busy_s" in r and "static_per_worker_busy_s" in r]
    if not runs:
        print(f"plot_lb.py: no runs with per-worker busy times in {src}")
        return 1

    cols = min(len(runs), 2)
    rows = math.ceil(len(runs) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(6.5 * cols, 3.6 * rows), squeeze=False,
                             sharey=True)
    for ax in axes.flat[len(runs):]:
        ax.set_visible(False)
    for ax, r in zip(axes.flat, runs):
        static, busy = r["static_per_worker_busy_s"], r["per_worker_busy_s"]
        workers = max(1, r.get("workers", 1))
        xs = range(len(busy))
        w = 0.4
        ax.bar([x - w / 2 for x in xs], static, w, color="0.7", label="none (static)")
        ax.bar([x + w / 2 for x in xs], busy, w, color="tab:blue", label="balanced (the policy)")
        ax.axhline(r["lower_bound_s"], color="k", ls="--", lw=1, label="lower bound")
        ax.axhline(r["makespan_s"], color="tab:blue", lw=1, label="policy makespan")
        ax.axhline(r["static_makespan_s"], color="0.5", ls=":", lw=1, label="static makespan")
        if workers == 1:
            ax.set_xticks(list(xs))
            ax.set_xticklabels([str(x) for x in xs])
            ax.set_xlabel("rank")
        else:
            ax.set_xticks(list(xs))
            ax.set_xticklabels([f"{x // workers}.{x % workers}" for x in xs], fontsize=7)
            ax.set_xlabel("rank.worker")
        eff = r["lower_bound_s"] / r["makespan_s"]
        ax.set_title(f"{r['policy']}: makespan {r['makespan_s']:.3f} s (static "
                     f"{r['static_makespan_s']:.3f} s), efficiency {eff:.0%}, "
                     f"{r['migrations']} migrations", fontsize=9)
        ax.set_ylabel("busy time (s)")
        ax.grid(True, axis="y", alpha=0.3)
    axes.flat[0].legend(fontsize=7, loc="upper right")
    first = runs[0]
    fig.suptitle(f"PREMA synthetic benchmark: {first['ranks']} ranks x {first['workers']} "
                 f"worker(s), {first.get('objects', '?')} objects, {first.get('heavy', '?')} heavy "
                 f"({first.get('placement', '?')}), {first.get('work', '?')} work", fontsize=10)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(dst)), exist_ok=True)
    fig.savefig(dst, dpi=120)
    print(f"wrote {dst}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
