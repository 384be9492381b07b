#!/usr/bin/env python3
"""Compares lb_synthetic's measured makespans with prema-model's predictions (written by
benchmarks/run_model_validation.sh into one directory): prints the table, the mean and maximum
error of each method, and whether the recommended objects per worker is within 10 % of the best
measured makespan; writes the rows as JSON and draws measured vs predicted (matplotlib; without
it, no plot and a note).

    benchmarks/model_validation.py RAW_DIR OUT.json OUT.png
"""
import glob
import json
import os
import re
import statistics
import sys

POLICIES = ["none", "work_stealing", "diffusion"]
METHODS = ["rounds", "thesis"]


def measured(raw, name):
    """Per policy, the makespans of every repetition."""
    out = {p: [] for p in POLICIES}
    for path in sorted(glob.glob(os.path.join(raw, name + "_r[0-9]*.json"))):
        with open(path) as f:
            doc = json.load(f)
        runs = doc.get("runs", [doc])
        out["none"].append(runs[0]["static_makespan_s"])
        for r in runs:
            if r["policy"] in out:
                out[r["policy"]].append(r["makespan_s"])
    return out


def main() -> int:
    raw, out_json, out_png = sys.argv[1:4]
    rows = []
    names = sorted({m.group(1) for m in (re.match(r"(.+)_r\d+\.json$", os.path.basename(p))
                                         for p in glob.glob(os.path.join(raw, "*.json"))) if m})
    for name in names:
        shape, p, k = re.match(r"([\w-]+?)_p(\d+)_k(\d+)$", name).groups()
        with open(os.path.join(raw, name + "_model.json")) as f:
            model = json.load(f)
        pred = {(x["policy"], x["method"]): x for x in model["predictions"]}
        for policy, values in measured(raw, name).items():
            if not values:
                continue
            row = {"shape": shape, "ranks": int(p), "objects_per_worker": int(k),
                   "policy": policy, "measured_s": statistics.median(values),
                   "measured_min_s": min(values), "measured_max_s": max(values),
                   "repetitions": len(values)}
            for m in METHODS:
                x = pred[(policy, m)]
                row[m + "_s"] = x["makespan_s"]
                row[m + "_error"] = x["makespan_s"] / row["measured_s"] - 1
                row[m + "_breakdown"] = x["breakdown"]
            rows.append(row)

    print("Model validation: lb_synthetic (sleep work, 1 worker per rank, light item 160/k ms)")
    print("against prema-model from the nominal weights; measured = median over repetitions.")
    print("Shapes named linear4-PROGRESS-qQUANTUM are the quantum check (--prema-progress,")
    print("--prema-quantum-us); the others run dedicated progress and quantum 1000 us.\n")
    print(f"{'shape':24} {'P':>2} {'k':>3} {'policy':14} {'measured':>9} {'(min..max)':>17} "
          f"{'rounds':>8} {'err':>7} {'thesis':>8} {'err':>7}")
    for r in rows:
        print(f"{r['shape']:24} {r['ranks']:>2} {r['objects_per_worker']:>3} {r['policy']:14} "
              f"{r['measured_s']:9.4f} ({r['measured_min_s']:.3f}..{r['measured_max_s']:.3f}) "
              f"{r['rounds_s']:8.4f} {100 * r['rounds_error']:+6.1f}% "
              f"{r['thesis_s']:8.4f} {100 * r['thesis_error']:+6.1f}%")
    summary = {}
    print("\nAbsolute error (mean / max):")
    for m in METHODS:
        for subset in ["all"] + POLICIES + sorted({r["shape"] for r in rows}):
            sel = [abs(r[m + "_error"]) for r in rows
                   if subset in ("all", r["policy"], r["shape"])]
            if not sel:
                continue
            summary[f"{m}/{subset}"] = {"mean": sum(sel) / len(sel), "max": max(sel)}
            print(f"  {m:7} {subset:14} {100 * sum(sel) / len(sel):5.1f}% / {100 * max(sel):5.1f}%"
                  f"  ({len(sel)} points)")

    print("\nRecommended objects per worker (round model, scan 4/8/16 of the k=8 workload)"
          " against the measured best:")
    recs = []
    for path in sorted(glob.glob(os.path.join(raw, "*_recommend.json"))):
        shape, p = re.match(r"(\w+?)_p(\d+)_recommend\.json$", os.path.basename(path)).groups()
        with open(path) as f:
            doc = json.load(f)
        for rec in doc["recommendations"]:
            by_k = {r["objects_per_worker"]: r["measured_s"] for r in rows
                    if r["shape"] == shape and r["ranks"] == int(p) and
                    r["policy"] == rec["policy"]}
            best_k = min(by_k, key=by_k.get)
            k = rec["objects_per_worker"]
            ratio = by_k[k] / by_k[best_k]
            recs.append({"shape": shape, "ranks": int(p), "policy": rec["policy"],
                         "recommended": k, "measured_best": best_k, "ratio": ratio,
                         "ok": ratio <= 1.10})
            print(f"  {shape:8} P={p:>2} {rec['policy']:14} recommended k={k:>2}"
                  f" ({by_k[k]:.4f} s), best measured k={best_k:>2} ({by_k[best_k]:.4f} s):"
                  f" {100 * (ratio - 1):+5.1f}% {'ok' if ratio <= 1.10 else 'NOT within 10%'}")
    if recs:
        print(f"  within 10% of the best: {sum(r['ok'] for r in recs)} of {len(recs)}")

    with open(out_json, "w") as f:
        json.dump({"rows": rows, "errors": summary, "recommendations": recs}, f, indent=1)
    print(f"\nwrote {out_json}")

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("model_validation.py: matplotlib is not installed (apt-get install "
              "python3-matplotlib); no plot drawn")
        return 0
    fig, axes = plt.subplots(1, 2, figsize=(11, 5), sharex=True, sharey=True)
    marks = {"none": "o", "work_stealing": "s", "diffusion": "^"}
    colours = {"linear2": "tab:blue", "linear4": "tab:orange", "step": "tab:green",
               "quantum check": "tab:purple"}
    top = max(max(r["measured_s"], r["rounds_s"], r["thesis_s"]) for r in rows) * 1.05
    for ax, m in zip(axes, METHODS):
        ax.plot([0, top], [0, top], "k-", lw=0.8)
        ax.fill_between([0, top], [0, 0.9 * top], [0, 1.1 * top], color="0.9", label="±10 %")
        for r in rows:
            ax.scatter(r["measured_s"], r[m + "_s"], marker=marks[r["policy"]],
                       color=colours.get(r["shape"], colours["quantum check"]), s=28)
        s = summary[f"{m}/all"]
        ax.set_title(f"{'round' if m == 'rounds' else m} model: mean error {100 * s['mean']:.1f} %, max {100 * s['max']:.1f} %")
        ax.set_xlabel("measured makespan (s)")
        ax.set_xlim(0, top)
        ax.set_ylim(0, top)
    axes[0].set_ylabel("predicted makespan (s)")
    for p, mk in marks.items():
        axes[1].scatter([], [], marker=mk, color="0.3", label=p)
    for sh, c in colours.items():
        axes[1].scatter([], [], marker="o", color=c, label=sh)
    axes[1].legend(loc="upper left", fontsize=8)
    fig.suptitle("prema-model against lb_synthetic (4 and 8 ranks, 4/8/16 objects per worker)")
    fig.tight_layout()
    fig.savefig(out_png, dpi=110)
    print(f"wrote {out_png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
