"""flash-linear-attention's chunk_gated_delta_rule on the GDN benchmark shapes, in the same device run as
qla_gpu_gdn: its time (plain launches and CUDA-graph replay, median of do_bench) and its own relative L2
error against a float64 recurrence on the same inputs. Inputs as BENCHMARKS.md: q, k L2-normalised bf16,
v bf16, g = logsigmoid(randn) fp32, beta = sigmoid(randn), random fp32 initial state, final state on.
Usage: fla_gdn.py OUT.json H HV B T [K V]"""
import json, os, sys
os.environ.setdefault("FLA_FLASH_QLA", "0")
import torch
import torch.nn.functional as F
import triton
from fla.ops.gated_delta_rule import chunk_gated_delta_rule

out, H, HV, B, T = sys.argv[1], *map(int, sys.argv[2:6])
K = int(sys.argv[6]) if len(sys.argv) > 6 else 128
V = int(sys.argv[7]) if len(sys.argv) > 7 else 128
dev = "cuda"
torch.manual_seed(0)
q = F.normalize(torch.randn(B, T, H, K, device=dev), dim=-1).to(torch.bfloat16)
k = F.normalize(torch.randn(B, T, H, K, device=dev), dim=-1).to(torch.bfloat16)
v = torch.randn(B, T, HV, V, device=dev).to(torch.bfloat16)
g = F.logsigmoid(torch.randn(B, T, HV, device=dev)).float()
beta = torch.sigmoid(torch.randn(B, T, HV, device=dev)).float()
h0 = torch.randn(B, HV, K, V, device=dev).float()

def fla():
    return chunk_gated_delta_rule(q, k, v, g, beta, initial_state=h0, output_final_state=True)

o, ht = fla()
torch.cuda.synchronize()

# float64 recurrence (GDN.md §1) on the GPU, from the same bf16 inputs.
rep = HV // H
qd = q.double().repeat_interleave(rep, dim=2); kd = k.double().repeat_interleave(rep, dim=2)
vd, gd, bd = v.double(), g.double(), beta.double()
S = h0.double().clone()
o_ref = torch.empty(B, T, HV, V, dtype=torch.float64, device=dev)
scale = K ** -0.5
for t in range(T):
    S = S * torch.exp(gd[:, t])[..., None, None]
    kt, qt = kd[:, t], qd[:, t]
    u = bd[:, t][..., None] * (vd[:, t] - torch.einsum("bhk,bhkv->bhv", kt, S))
    S = S + kt[..., :, None] * u[..., None, :]
    o_ref[:, t] = scale * torch.einsum("bhk,bhkv->bhv", qt, S)
rel = lambda a, r: ((a.double() - r).norm() / r.norm()).item()
err_o, err_s = rel(o, o_ref), rel(ht, S)

plain = triton.testing.do_bench(fla, warmup=25, rep=200, return_mode="median")
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(3):
        fla()
torch.cuda.current_stream().wait_stream(s)
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    fla()
graph_ms = triton.testing.do_bench(graph.replay, warmup=25, rep=200, return_mode="median")
res = {"peer": "fla", "fla_version": __import__("fla").__version__, "H": H, "HV": HV, "K": K, "V": V,
       "seqlens": [T] * B, "peer_ms": plain, "peer_graph_ms": graph_ms,
       "peer_rel_l2": {"o": err_o, "final_state": err_s}}
print(json.dumps(res))
json.dump(res, open(out, "w"), indent=1)
