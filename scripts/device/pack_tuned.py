#!/usr/bin/env python3
"""Packs, for each GDN forward shape of a tuning database (qlac tune gdn), the fastest passing config
for one GPU into devpkg/gdn/t-H-HV-BxT (pack_gdn.sh with SPLIT=1, KEEP_PKG=1), with a `shape` file
(B,T) beside `settings`, for bench_tuned.sh on the device.
Usage: pack_tuned.py [DB] [GPU-NAME]   (defaults: tuning/h200.json, the first GPU in it)"""
import json, os, subprocess, sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
db = json.load(open(sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "tuning/h200.json")))
gpus = db["gpus"]
key = next(k for k in gpus if len(sys.argv) < 3 or gpus[k]["device"]["name"] == sys.argv[2])
best = {}
for e in gpus[key]["entries"]:
    if e["kernel"] == "gdn_forward" and e["pass"] and (e["shape"] not in best or e["ms"] < best[e["shape"]]["ms"]):
        best[e["shape"]] = e
args = []
for shape, e in sorted(best.items()):
    s = dict(kv.split("=") for kv in shape.split(","))
    name = f"t-{s['H']}-{s['HV']}-{s['B']}x{s['T']}"
    args += [name, e["config"]]
env = dict(os.environ, SPLIT="1")
subprocess.run(["bash", os.path.join(root, "scripts/device/pack_gdn.sh")] + args, check=True, env=env)
for shape in best:
    s = dict(kv.split("=") for kv in shape.split(","))
    with open(os.path.join(root, f"devpkg/gdn/t-{s['H']}-{s['HV']}-{s['B']}x{s['T']}/shape"), "w") as f:
        f.write(f"{s['B']},{s['T']}\n")
print(f"packed {len(best)} tuned configs from {key}")
