// A call's sizes and where its scratch lies in the caller's workspace.
#include "gdn/api/ChunkForwardInternal.h"

#include "qla/runtime/Error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace qla::gdn::detail {

Sizes sizesOf(const ChunkForwardTensors &t) {
  if (t.q.shape.size() != 4)
    throw Error(fmt::format("{}: argument 'q': expected shape [B, T, H, K], got [{}]", kWho, fmt::join(t.q.shape, ", ")));
  Sizes s{t.q.shape[0], t.q.shape[1], 0, 0, t.cuSeqlens.data != 0, 0};
  s.tokens = s.B * s.T;
  s.longest = s.T;
  if (t.hostCuSeqlens && !s.varlen)
    throw Error(fmt::format("{}: argument 'host_cu_seqlens': given without cu_seqlens", kWho));
  if (s.varlen) {
    if (t.cuSeqlens.shape.size() != 1 || t.cuSeqlens.shape[0] < 2)
      throw Error(fmt::format("{}: argument 'cu_seqlens': expected shape [N + 1] with N >= 1, got [{}]", kWho,
                              fmt::join(t.cuSeqlens.shape, ", ")));
    if (s.B != 1)
      throw Error(fmt::format("{}: argument 'q': expected B = 1 with cu_seqlens, got B = {}", kWho, s.B));
    s.N = t.cuSeqlens.shape[0] - 1;
    if (const int64_t *cu = t.hostCuSeqlens) {
      if (cu[0] != 0)
        throw Error(fmt::format("{}: argument 'cu_seqlens': expected 0 first, got {}", kWho, cu[0]));
      s.longest = 0;
      for (int64_t i = 0; i < s.N; ++i) {
        if (cu[i + 1] < cu[i])
          throw Error(fmt::format("{}: argument 'cu_seqlens': expected non-decreasing values, got {} after {} at "
                                  "index {}",
                                  kWho, cu[i + 1], cu[i], i + 1));
        s.longest = std::max(s.longest, cu[i + 1] - cu[i]);
      }
      if (cu[s.N] != s.T)
        throw Error(fmt::format("{}: argument 'cu_seqlens': expected the last value to be T = {}, got {}", kWho, s.T,
                                cu[s.N]));
    }
  } else {
    s.N = s.B;
  }
  return s;
}

ChunkForwardLayout workspaceLayout(const ChunkForwardShape &sh, int64_t tokens, int64_t sequences, bool varlen,
                                   int64_t segments, int64_t chunkSlots) {
  ChunkForwardLayout l;
  int64_t at = 0;
  l.offsets = at;
  at += varlen ? 0 : alignUp((sequences + 1) * 8);
  if (segments > 0) {
    const int64_t state = segments * sh.HV * sh.K * sh.V * 4;
    l.segments = segments;
    l.segmentOffsets = at;
    at += alignUp((segments + 1) * 8);
    l.firstSegment = at;
    at += alignUp((sequences + 1) * 8);
    l.ends = at;
    at += alignUp(state);
    l.transitions = at;
    at += alignUp(segments * sh.HV * sh.K * sh.K * 4);
    l.starts = at;
    at += alignUp(state);
    l.finals = at;
    at += alignUp(state);
    // Fixed-length batches: m segments of ⌈T / 64m⌉ chunks at most (gdn_split_offsets' length); a
    // varlen split gives its longest segment's chunks.
    const int64_t m = segments / sequences, T = tokens / sequences;
    l.chunkSlots = chunkSlots > 0 ? chunkSlots : (T + m * kChunk - 1) / (m * kChunk);
    l.chunkTotals = at;
    at += alignUp(sh.HV * segments * l.chunkSlots * 4);
    l.threshold = at;
    at += alignUp(4);
    l.endRuns = at;
    at += alignUp(segments * sh.HV * 8);
    l.transitionRuns = at;
    at += alignUp(segments * sh.HV * 8);
  }
  l.gcum = at;
  at += alignUp(tokens * sh.HV * 4);
  l.beta = at;
  at += sh.gateInKernel ? alignUp(tokens * sh.HV * 4) : 0;
  l.a = at;
  at += alignUp(tokens * sh.HV * kChunk * 2);
  l.aqk = at;
  at += alignUp(tokens * sh.HV * kChunk * 2);
  l.total = std::max<int64_t>(at, 256);
  return l;
}

} // namespace qla::gdn::detail
