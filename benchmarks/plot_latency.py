#!/usr/bin/env python3
"""Plots half round-trip time against message size (log-log) for raw MPI and PREMA's progress
modes (auto labelled with the mode it resolved to), from the JSON written by `latency --json`.

    benchmarks/plot_latency.py [results/latency.json] [results/latency.png]

Needs matplotlib; without it, prints a note and exits 0.
"""
import json
import os
import sys

import plot_common


def main() -> int:
    src, dst, plt = plot_common.paths_and_pyplot(__file__, "latency.json", "latency.png")
    if plt is None:
        return 0

    with open(src) as f:
        results = json.load(f)["results"]
    series = {}  # label -> [(bytes, half_rtt_us)]
    for r in results:
        if "half_rtt_us" not in r or r["layer"] not in ("mpi", "transport"):
            continue  # message rates, objects and the hand-off have tables of their own
        if r["layer"] == "mpi":
            label = "MPI"
        else:
            label = "PREMA " + r.get("progress", "?")
            if "resolved" in r:
                label += " -> " + r["resolved"]
        series.setdefault(label, []).append((r["bytes"], r["half_rtt_us"]))
    if not series:
        print(f"plot_latency.py: no latency rows in {src}")
        return 1

    fig, ax = plt.subplots(figsize=(7, 4.5))
    styles = {"MPI": "o-", "PREMA dedicated": "s-", "PREMA inline": "^-"}
    for label in sorted(series, key=lambda l: (l != "MPI", l)):
        pts = sorted(series[label])
        ax.plot([p[0] for p in pts], [p[1] for p in pts], styles.get(label, ".-"), label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("half round-trip time (us, median)")
    ax.set_title("Ping-pong latency, 2 ranks")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(dst)), exist_ok=True)
    fig.savefig(dst, dpi=120)
    print(f"wrote {dst}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
