// RUN: qla-opt %s -qla-convert-to-nvvm -split-input-file -verify-diagnostics

// What qla-convert-to-nvvm refuses, with the reason. A pattern that refuses an op says why; the
// conversion driver then adds its own 'failed to legalize' error on the same op.

// A copy outside a loop qla-pipeline turned into TMA has no lowering.
func.func @leftover_copy(%A: !qla.tensor<256x64xbf16>) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{qla.copy is lowered only inside a qla.for pipelined by qla-pipeline (stages >= 2, TMA-compatible); see the remarks of that pass}}
  %t = qla.copy %A[%c0, %c0] : !qla.tensor<256x64xbf16> -> !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  return
}

// -----

// Kernel arguments are tensors (the ABI has no scalars yet).
// expected-error @+1 {{kernel argument 1 must be a !qla.tensor, got 'index'}}
func.func @scalar_argument(%A: !qla.tensor<256x64xbf16>, %n: index) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  return
}

// -----

func.func @gemm_not_transposed() attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %a = qla.smem_alloc {offset = 0 : i64} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  %b = qla.smem_alloc {offset = 8192 : i64} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  %acc = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  // expected-error @+2 {{'qla.gemm' op is only lowered to wgmma for A in shared memory, not transposed, and B transposed (stored N x K) so far}}
  // expected-error @+1 {{failed to legalize operation 'qla.gemm' that was explicitly marked illegal}}
  %r = qla.gemm %a, %b, %acc : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  return
}

// -----

func.func @gemm_register_a() attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %a = qla.fill 1.0 : bf16 : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>
  %b = qla.smem_alloc {offset = 8192 : i64} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  %acc = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  // expected-error @+2 {{'qla.gemm' op is only lowered to wgmma for A in shared memory, not transposed, and B transposed (stored N x K) so far}}
  // expected-error @+1 {{failed to legalize operation 'qla.gemm' that was explicitly marked illegal}}
  %r = qla.gemm %a, %b, %acc {transpose_b} : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  return
}

// -----

func.func @gemm_swizzle_mismatch() attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %a = qla.smem_alloc {offset = 0 : i64} : !qla.tile<64x64xbf16, smem, #qla.swizzle<64>>
  %b = qla.smem_alloc {offset = 8192 : i64} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  %acc = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  // expected-error @+2 {{'qla.gemm' op needs A and B tiles whose rows are exactly one swizzle span (32, 64 or 128 B)}}
  // expected-error @+1 {{failed to legalize operation 'qla.gemm' that was explicitly marked illegal}}
  %r = qla.gemm %a, %b, %acc {transpose_b} : !qla.tile<64x64xbf16, smem, #qla.swizzle<64>>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  return
}

// -----

func.func @store_without_layout(%C: !qla.tensor<64x64xf32>) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %t = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  %s = qla.smem_alloc {offset = 0 : i64} : !qla.tile<64x64xf32, smem>
  // expected-error @+2 {{'qla.store' op only stores 2-D fragments with a wgmma_acc layout so far}}
  // expected-error @+1 {{failed to legalize operation 'qla.store' that was explicitly marked illegal}}
  qla.store %s, %C[%c0, %c0] : !qla.tile<64x64xf32, smem>, !qla.tensor<64x64xf32>
  return
}

// -----

func.func @store_dynamic(%C: !qla.tensor<?x64xf32>) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %t = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  // expected-error @+2 {{'qla.store' op needs a destination with static shape and strides so far}}
  // expected-error @+1 {{failed to legalize operation 'qla.store' that was explicitly marked illegal}}
  qla.store %t, %C[%c0, %c0] : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>, !qla.tensor<?x64xf32>
  return
}
