"""Merges one device run's files (gdn-<config>.json from qla_gpu_gdn, fla-H-HV-B-T.json from fla_gdn_shapes.py,
gdn.log for the sanitizer lines) into one result file in BENCHMARKS.md's format, pairing each timed row
with FLA's row of the same shape when the run has one (speedup = peer graph ms / our graph ms).
Usage: collect_gdn.py RUN_DIR OUT.json COMMIT "COMMAND" "NOTE" """
import glob, json, os, re, sys, datetime

run, out, commit, command, note = sys.argv[1:6]
log = open(os.path.join(run, "gdn.log")).read()
gpu, driver = [s.strip() for s in log.splitlines()[0].split(",")]
fla = {}
for f in glob.glob(os.path.join(run, "fla-*.json")):
    doc = json.load(open(f))
    for r in doc if isinstance(doc, list) else [doc]:
        fla[(r["H"], r["HV"], tuple(r["seqlens"]))] = r
rows = []
for f in sorted(glob.glob(os.path.join(run, "gdn-*.json"))):
    config = os.path.basename(f)[4:-5]
    for row in json.load(open(f)):
        row.setdefault("config", config)
        s = row["shape"]
        peer = fla.get((s["H"], s["HV"], tuple(s["seqlens"])))
        if "ms" in row and peer:
            row.update(peer="fla", peer_version=peer["fla_version"], peer_ms=peer["peer_ms"],
                       peer_graph_ms=peer["peer_graph_ms"], peer_rel_l2=peer["peer_rel_l2"],
                       speedup=peer["peer_graph_ms"] / row["graph_ms"], speedup_plain=peer["peer_ms"] / row["ms"])
        else:
            row["peer"] = None
        rows.append(row)
sanitizers = {(cfg + " " if cfg else "") + tool: res for cfg, tool, res in
              re.findall(r"gdn (?:(\w+) )?(memcheck|racecheck|synccheck): (exit \d+ \(.*\))", log)}
doc = {"gpu": gpu, "driver": driver, "date": datetime.date.today().isoformat(), "commit": commit,
       "command": command, "note": note, "sanitizers_small_config": sanitizers, "rows": rows}
json.dump(doc, open(out, "w"), indent=1)
for r in rows:
    if "ms" in r:
        s = r["shape"]
        print(f'({s["H"]:2d},{s["HV"]:2d}) {len(s["seqlens"])}x{s["seqlens"][0]:<6d} {r["graph_ms"]:7.3f} ms',
              f'fla {r["peer_graph_ms"]:7.3f} ms  {r["speedup"]:.2f}x' if r["peer"] else "", "" if r["pass"] else "FAIL")
