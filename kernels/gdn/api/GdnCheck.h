// Checking and timing the GDN forward on the GPU through qla::gdn::ChunkForward, MLIR-free: fresh
// random inputs with real gate spread, o and the final state poisoned (NaN) first, every element
// against the float64 recurrence (CPU) or its double-precision NVRTC twin (GPU, for long inputs); then
// the call timed with CUDA events, plain and as a CUDA-graph replay (which must give the same bits).
// Used by the GPU test (qla_gpu_gdn) and by `qlac tune gdn`.
#ifndef QLA_KERNELS_GDN_API_GDNCHECK_H
#define QLA_KERNELS_GDN_API_GDNCHECK_H

#include "gdn/api/ChunkForward.h"
#include "gdn/reference/GdnRandom.h"
#include "gdn/reference/GdnReference.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace qla::gdn {

struct GdnCheckOptions {
  uint64_t seed = 1;
  GdnGateKind gate = GdnGateKind::mixedDecay;
  bool cpuReference = false; // the CPU float64 recurrence (small problems) instead of the GPU one
  int timedIters = 0;        // > 0: time the call (median of that many, plain and as a graph replay)
};

struct GdnCheck {
  double errO = 0, errState = 0; // relative L2 against the float64 reference
  size_t unwritten = 0;          // outputs still NaN after the call
  double ms = 0, graphMs = 0;    // medians (0: not timed)
  bool graphIdentical = false;   // the graph replay wrote the same bits as the plain call
  bool pass = false;             // nothing unwritten, both errors ≤ 5e-3, (timed) the replay identical
  size_t workspaceBytes = 0;     // the scratch the call asked for (ChunkForward::workspaceBytes)
  int64_t varlenSegments = 0;    // a varlen call's split (ChunkForward::planVarlen): its segments, 0 unsplit
};

struct GdnDeviceInputs; // the inputs on the GPU, uploaded by the first check of a case

/// A problem's inputs (from the seed) and its float64 reference, to check several builds against.
struct GdnCase {
  GdnProblem problem;
  GdnInputs inputs;
  GdnOutputs reference;
  mutable std::shared_ptr<const GdnDeviceInputs> device;
};
/// The GPU reference needs a GPU (the driver's context current).
GdnCase makeGdnCase(const GdnProblem &p, const GdnCheckOptions &options);

/// An output (bf16 bits or f32) against its float64 reference without a double copy of it (gigabytes
/// on long calls), over the cores: the relative L2 error (NaN if any value is NaN) and the NaNs counted.
struct Compared {
  double relL2 = 0;
  size_t nans = 0;
};
Compared compareToReference(const std::vector<uint16_t> &bf16, const std::vector<double> &reference);
Compared compareToReference(const std::vector<float> &f32, const std::vector<double> &reference);

/// Needs a GPU (the driver's context current); `fwd` loaded for the problem's shape. With
/// `timePlain` false only the graph replay is timed (a tuner needs one time; ms stays 0).
GdnCheck checkGdnForward(ChunkForward &fwd, const GdnCase &c, int timedIters, bool timePlain = true);
GdnCheck checkGdnForward(ChunkForward &fwd, const GdnProblem &p, const GdnCheckOptions &options);

} // namespace qla::gdn

#endif
