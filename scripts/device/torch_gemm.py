"""Times torch.matmul(A, B.T) (cuBLAS) on the shapes of qla.json in the same run and writes the result
file in the format of BENCHMARKS.md, with speedup = peer_ms / ms."""
import datetime, json, subprocess, sys
import torch

qla_rows = json.load(open(sys.argv[1]))
rows = []
for r in qla_rows:
    s = r["shape"]
    row = dict(r)
    if "ms" in r:
        a = torch.randn(s["M"], s["K"], device="cuda", dtype=torch.bfloat16)
        b = torch.randn(s["N"], s["K"], device="cuda", dtype=torch.bfloat16)
        for _ in range(10):
            torch.matmul(a, b.T)
        times = []
        for _ in range(100):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record(); torch.matmul(a, b.T); e1.record(); e1.synchronize()
            times.append(e0.elapsed_time(e1))
        times.sort()
        peer = times[len(times) // 2]
        row.update(peer="cublas", peer_ms=peer, speedup=peer / r["ms"],
                   peer_tflops=2 * s["M"] * s["N"] * s["K"] / (peer * 1e-3) / 1e12)
        print(f"M={s['M']} N={s['N']} K={s['K']} {r.get('config')}: qla {r['ms']:.4f} ms, "
              f"cublas {peer:.4f} ms, qla/cublas = {peer / r['ms']:.3f}")
    rows.append(row)
name, driver = subprocess.check_output(
    ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], text=True).strip().split(", ")
json.dump({"gpu": name, "driver": driver, "date": datetime.date.today().isoformat(),
           "commit": "", "command": "scripts/device/run_gemm.sh (after scripts/device/pack_gemm.sh)",
           "torch": torch.__version__, "rows": rows}, open(sys.argv[2], "w"), indent=1)
