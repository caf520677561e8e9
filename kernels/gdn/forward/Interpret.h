// The GDN forward DSL programs run on the CPU interpreter, with the reference's problem and tensors.
#ifndef QLA_KERNELS_GDN_FORWARD_INTERPRET_H
#define QLA_KERNELS_GDN_FORWARD_INTERPRET_H

#include "gdn/forward/GdnForward.h"
#include "gdn/reference/GdnReference.h"

namespace qla::gdn {

GdnForwardConfig forwardConfigFor(const GdnProblem &problem);

/// Packs the inputs (q, k, v rounded to bf16), runs gdn_cumsum, gdn_chunk_inverse and
/// gdn_chunk_forward on the interpreter and unpacks o and the final state.
/// Which form of gdn_chunk_forward runs: the whole forward, or its state-only form
/// (Kernel::dropLoopOutputs: the final state only, o stays zero).
enum class ForwardRun { full, stateOnly };

/// Build settings of the kernels run (GdnForwardConfig): `stages` >= 2 builds gdn_chunk_forward with
/// pipelined, unbounded copies; the inverse* fields are gdn_chunk_inverse's.
struct InterpretOptions {
  int64_t stages = 1;
  int64_t gateRing = -1; // >= 0: overrides GdnForwardConfig's default (the gate column through the ring)
  int64_t inverseChunks = 1, inverseStages = 1;
  int64_t inverseHeads = 0; // 0: the config's default
  int64_t precise = -1; // >= 0: overrides GdnForwardConfig's default
  int64_t inverseF16 = -1; // >= 0: overrides GdnForwardConfig's default
  int64_t shareStateOperand = -1; // >= 0: overrides GdnForwardConfig's default (on where K > 128)
  int64_t stashState = -1;        // likewise
  bool inverseInWarps = false;    // GdnForwardConfig::inverseInWarps
  bool inverseProductsOnce = false; // GdnForwardConfig::inverseProductsOnce
  // The kernels lowered by the pipeline and run on the SIMT simulator (dsl::Kernel::simulate: the code
  // the GPU would run, bounds- and race-checked) instead of on the tile interpreter.
  bool simulate = false;
  ForwardRun run = ForwardRun::full;
};
GdnOutputs interpretGdnForward(const GdnProblem &problem, const GdnInputs &inputs, const InterpretOptions &options = {});

} // namespace qla::gdn

#endif
