// The float64 GDN recurrence (GDN.md §1) on the GPU: a reference for inputs too long for the CPU.
// CUDA C++ compiled at run time with NVRTC.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string_view>

#include "gdn/reference/GdnReference.h"
#include "qla/runtime/Nvrtc.h"

namespace qla::gdn {

// Device addresses of float64 tensors, row-major with the shapes of GdnInputs / GdnOutputs.
// Leave the ones a flag makes unused at 0.
struct GdnDevicePointers {
  CUdeviceptr q = 0, k = 0, v = 0;
  CUdeviceptr g = 0, beta = 0;                    // unless gateInKernel
  CUdeviceptr a = 0, b = 0, aLog = 0, dtBias = 0; // gateInKernel
  CUdeviceptr initialState = 0;                   // useInitialState
  CUdeviceptr o = 0;
  CUdeviceptr finalState = 0;                     // outputFinalState
};

// Runs the recurrence on `stream` and waits for it (cu_seqlens is uploaded to a temporary buffer).
// Throws qla::Error "gdn gpu reference: …" for an invalid problem, a missing or unexpected pointer,
// or when there is no GPU.
void gdnGpuReference(const GdnProblem& problem, const GdnDevicePointers& pointers,
                     CUstream stream = nullptr);
// Uploads the inputs, runs the recurrence and downloads the outputs.
GdnOutputs gdnGpuReference(const GdnProblem& problem, const GdnInputs& inputs);

// The CUDA source, and its PTX for state dimension K (the kernel keeps ceil(K / 32) state rows
// per lane in registers, fixed at compile time). Needs NVRTC, not a GPU.
std::string_view gdnGpuReferenceSource();
NvrtcResult compileGdnGpuReference(std::int64_t K);

} // namespace qla::gdn
