"""flash-linear-attention's chunk_gated_delta_rule on many GDN forward shapes in one process (one Triton
JIT warm-up): per shape its time (plain launches and CUDA-graph replay, median of do_bench) and, when
B*T <= FLA_ERR_MAX_TOKENS (default 65536; the recurrence is a Python loop over tokens), its own relative L2
error against a float64 recurrence on the same inputs. Inputs as
BENCHMARKS.md: q, k L2-normalised bf16, v bf16, g = logsigmoid(randn) fp32, beta = sigmoid(randn), random
fp32 initial state, final state on.
A shape H,HV,varlen:L1:L2:... is one packed batch (B = 1, cu_seqlens) of those sequence lengths.
Usage: fla_gdn_shapes.py OUT_DIR H,HV,B,T [H,HV,B,T ...]   (writes OUT_DIR/fla-H-HV-B-T.json each)"""
import json, os, sys
os.environ.setdefault("FLA_FLASH_QLA", "0")
import torch
import torch.nn.functional as F
import triton
from fla.ops.gated_delta_rule import chunk_gated_delta_rule

K = V = 128
dev = "cuda"


def reference(q, k, v, g, beta, h0, HV, H):
    rep = HV // H
    qd = q.double().repeat_interleave(rep, dim=2); kd = k.double().repeat_interleave(rep, dim=2)
    vd, gd, bd = v.double(), g.double(), beta.double()
    S = h0.double().clone()
    o = torch.empty(*v.shape, dtype=torch.float64, device=dev)
    for t in range(q.shape[1]):
        S = S * torch.exp(gd[:, t])[..., None, None]
        u = bd[:, t][..., None] * (vd[:, t] - torch.einsum("bhk,bhkv->bhv", kd[:, t], S))
        S = S + kd[:, t][..., :, None] * u[..., None, :]
        o[:, t] = K ** -0.5 * torch.einsum("bhk,bhkv->bhv", qd[:, t], S)
    return o, S


out_dir = sys.argv[1]
for shape in sys.argv[2:]:
    fields = shape.split(",")
    H, HV = int(fields[0]), int(fields[1])
    lens, cu = None, None
    if fields[2].startswith("varlen:"):
        lens = [int(x) for x in fields[2][len("varlen:"):].split(":")]
        B, T = 1, sum(lens)
        cu = torch.tensor([0] + list(__import__("itertools").accumulate(lens)), dtype=torch.int64, device=dev)
    else:
        B, T = int(fields[2]), int(fields[3])
    N = len(lens) if lens else B
    torch.manual_seed(0)
    q = F.normalize(torch.randn(B, T, H, K, device=dev), dim=-1).to(torch.bfloat16)
    k = F.normalize(torch.randn(B, T, H, K, device=dev), dim=-1).to(torch.bfloat16)
    v = torch.randn(B, T, HV, V, device=dev).to(torch.bfloat16)
    g = F.logsigmoid(torch.randn(B, T, HV, device=dev)).float()
    beta = torch.sigmoid(torch.randn(B, T, HV, device=dev)).float()
    h0 = torch.randn(N, HV, K, V, device=dev).float()
    fla = lambda: chunk_gated_delta_rule(q, k, v, g, beta, initial_state=h0, output_final_state=True, cu_seqlens=cu)
    o, ht = fla()
    torch.cuda.synchronize()
    err = None
    if B * T <= int(os.environ.get("FLA_ERR_MAX_TOKENS", "65536")) and lens is None:
        o_ref, s_ref = reference(q, k, v, g, beta, h0, HV, H)
        rel = lambda a, r: ((a.double() - r).norm() / r.norm()).item()
        err = {"o": rel(o, o_ref), "final_state": rel(ht, s_ref)}
        del o_ref, s_ref
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
           "seqlens": lens or [T] * B, "peer_ms": plain, "peer_graph_ms": graph_ms, "peer_rel_l2": err}
    print(json.dumps(res), flush=True)
    name = f"fla-{H}-{HV}-varlen-{T}" if lens else f"fla-{H}-{HV}-{B}-{T}"
    json.dump(res, open(os.path.join(out_dir, name + ".json"), "w"), indent=1)
    del q, k, v, g, beta, h0, o, ht, graph
    torch.cuda.empty_cache()
