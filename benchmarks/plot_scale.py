#!/usr/bin/env python3
"""Plots, against the number of ranks (log scale), the busiest rank's messages per operation
and PREMA's own memory per rank (peak RSS minus the RSS right after MPI_Init, its anonymous
part above MPI_Init, and the peak C++ heap), from the JSON rows that `scale --json` writes
(benchmarks/run_scale.sh gathers them in scale.jsonl).

    benchmarks/plot_scale.py [results/scale.jsonl] [results/scale.png]

Needs matplotlib; without it, prints a note and exits 0.
"""
import json
import math
import os
import sys

import plot_common


def main() -> int:
    src, dst, plt = plot_common.paths_and_pyplot(__file__, "scale.jsonl", "scale.png")
    if plt is None:
        return 0

    with open(src) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    ops = []
    for r in rows:
        if r["op"] not in ops:
            ops.append(r["op"])

    fig, (msgs, mem) = plt.subplots(1, 2, figsize=(11, 4.2))
    for op in ops:
        if op in ("incast", "quiescence"):
            continue  # incast counts P-1 floods, quiescence sends no messages: see the table
        pts = sorted((r["ranks"], r["busiest_msgs"]) for r in rows if r["op"] == op)
        msgs.plot([p for p, _ in pts], [m for _, m in pts], marker="o", label=op)
    ranks = sorted({r["ranks"] for r in rows})
    msgs.plot(ranks, [2 * math.ceil(math.log2(p)) + 4 for p in ranks], "k--",
              label="2 ceil(log2 P) + 4")
    msgs.set_xscale("log", base=2)
    msgs.set_xlabel("ranks")
    msgs.set_ylabel("busiest rank's messages per call")
    msgs.legend(fontsize=8)

    for op in ("all_reduce", "incast"):
        pts = sorted((r["ranks"], (r["rss_kb"] - r["rss_after_mpi_init_kb"]) / 1024)
                     for r in rows if r["op"] == op)
        if pts:
            mem.plot([p for p, _ in pts], [m for _, m in pts], marker="o",
                     label=f"after {op}" if op != "incast" else "incast receiver")
    # Rows from before the heap counter have no heap_kb.
    pts = sorted((r["ranks"], r["heap_kb"] / 1024) for r in rows
                 if r["op"] == "quiescence" and "heap_kb" in r)
    if pts:
        mem.plot([p for p, _ in pts], [m for _, m in pts], marker="s",
                 label="C++ heap (PREMA's own), after the collectives")
    # The RSS without code pages and MPI's shared memory (rows from before it have no anon_kb).
    pts = sorted((r["ranks"], (r["anon_kb"] - r["anon_after_mpi_init_kb"]) / 1024) for r in rows
                 if r["op"] == "quiescence" and "anon_kb" in r)
    if pts:
        mem.plot([p for p, _ in pts], [m for _, m in pts], marker="^",
                 label="anonymous RSS above MPI_Init, after the collectives")
    mem.set_xscale("log", base=2)
    mem.set_xlabel("ranks")
    mem.set_ylabel("peak per rank (MiB; RSS above MPI_Init)")
    mem.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(dst, dpi=120)
    print("wrote", dst)
    return 0


if __name__ == "__main__":
    sys.exit(main())
