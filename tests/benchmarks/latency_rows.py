#!/usr/bin/env python3
"""Runs benchmarks/latency with tiny settings and checks its JSON: on 2 ranks every layer,
progress mode and size has its row, each latency row holding the round trips of every round
(the rounds alternate raw MPI and PREMA, and the hand-off's two modes, so a round that ran
nothing would show here), raw MPI has rows at the sizes of the ping-pong's own MPI messages
for the smallest payload, and rows as two messages (PREMA's split-phase protocol) from
--split-from up and not below; on 3 ranks every mode has its forwarding hop.

    latency_rows.py MPIEXEC LATENCY JSON
"""
import json
import math
import subprocess
import sys

mpiexec, program, out = sys.argv[1:4]
iters, rounds, sizes, object_sizes, split_from = 10, 3, [8, 16, 32], [8, 16], 16
subprocess.run([mpiexec, "--oversubscribe", "--allow-run-as-root", "-n", "2", program,
                "--max-bytes", str(sizes[-1]), "--object-max-bytes", str(object_sizes[-1]),
                "--iters", str(iters), "--warmup", "2", "--rounds", str(rounds),
                "--rate-count", "2000", "--split-from", str(split_from), "--json", out],
               check=True)
rows = json.load(open(out))["results"]

per_round = math.ceil(iters / rounds)
failures = []


def expect(layer, progress, sizes_wanted, iterations):
    found = {r["bytes"]: r for r in rows if r["layer"] == layer and "half_rtt_us" in r
             and r.get("progress", "") == progress}
    for size in sizes_wanted:
        r = found.get(size)
        if r is None:
            failures.append(f"no {layer} row for {progress or 'raw MPI'} at {size} B")
        elif r["iterations"] != iterations or not r["half_rtt_us"] > 0:
            failures.append(f"{layer} {progress} {size} B: {r['iterations']} round trips "
                            f"(expected {iterations}), half-RTT {r['half_rtt_us']}")


expect("mpi", "", sizes, rounds * per_round)
expect("mpi_split", "", [s for s in sizes if s >= split_from], rounds * per_round)
below = [r["bytes"] for r in rows if r["layer"] == "mpi_split" and r["bytes"] < split_from]
if below:
    failures.append(f"raw MPI as two messages below --split-from {split_from}: {below}")
for mode in ("auto", "dedicated", "inline"):
    expect("transport", mode, sizes, rounds * per_round)
    expect("object", mode, object_sizes, rounds * per_round)
    rates = [r for r in rows if r.get("progress") == mode and "rate_msgs_per_s" in r]
    if len(rates) != 4 or not all(r["rate_msgs_per_s"] > 0 for r in rates):
        failures.append(f"{mode}: {len(rates)} message-rate rows, expected 4 with a rate")
    # function, coroutine, one object, 64 objects in turn
    if sorted(r.get("objects") for r in rates) != [0, 0, 1, 64]:
        failures.append(f"{mode}: message-rate rows for {[r.get('objects') for r in rates]} "
                        "objects, expected 0, 0, 1 and 64")
for mode in ("dedicated", "inline"):
    expect("handoff", mode, [8], rounds * per_round)
# Raw MPI at the size of PREMA's own message for the smallest payload, transport and object:
# the size of the ping-pong's hops, which leave from handlers on their own (docs/design/
# wire-format.md): a 40-byte header, then the vector<char> (its 8-byte length and its bytes);
# an object's also a 56-byte object header and the two 16-byte mobile_ptrs the benchmark's
# handlers take before the vector. (The chain's first message, from a task, goes in a batch,
# 32 bytes more: a probe of one round trip reported that one.)
wire_header, object_header, mobile_ptr = 40, 56, 16
hop = {"transport": wire_header + 8 + sizes[0]}
hop["object"] = hop["transport"] + object_header + 2 * mobile_ptr
at_wire = {r.get("of"): r for r in rows if r["layer"] == "mpi_at_wire"}
if sorted(at_wire) != ["object", "transport"]:
    failures.append(f"raw MPI at PREMA's size: rows for {sorted(at_wire)}, expected object and "
                    "transport")
for of, r in at_wire.items():
    if r["bytes"] != hop.get(of) or r["payload_bytes"] != sizes[0] or \
            r["iterations"] != rounds * per_round or not r["half_rtt_us"] > 0:
        failures.append(f"raw MPI at PREMA's {of} size: {r}, expected {hop.get(of)} bytes")

# Three ranks add the forwarding hop, one row per mode.
subprocess.run([mpiexec, "--oversubscribe", "--allow-run-as-root", "-n", "3", program,
                "--max-bytes", "8", "--object-max-bytes", "8", "--iters", str(iters),
                "--rounds", str(rounds), "--hop-calls", "20", "--no-rate", "--no-handoff",
                "--json", out], check=True)
hops = [r for r in json.load(open(out))["results"] if "forwarding_hop_us" in r]
if sorted(r["progress"] for r in hops) != ["auto", "dedicated", "inline"] or \
        not all(r["direct_call_us"] > 0 and r["forwarded_call_us"] > 0 for r in hops):
    failures.append(f"3 ranks: forwarding rows {hops}")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
