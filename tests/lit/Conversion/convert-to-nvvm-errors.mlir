// RUN: qla-opt %s -qla-convert-to-nvvm -split-input-file -verify-diagnostics

// What qla-convert-to-nvvm refuses, with the reason. A pattern that refuses an op says why; the
// conversion driver then adds its own 'failed to legalize' error on the same op.

// Kernel arguments are tensors.
// expected-error @+1 {{kernel argument 1 must be a !qla.tensor, got 'index'}}
func.func @scalar_argument(%A: !qla.tensor<256x64xbf16>, %n: index) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  return
}

// -----

// A copy that TMA does not do is written to shared memory by the threads, with a 128-byte swizzle or none.
func.func @copy_swizzle_64(%A: !qla.tensor<256x32xbf16>) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  // expected-error @+2 {{'qla.copy' op writes 2-D shared tiles with a 128-byte swizzle (or none) so far, got '!qla.tile<64x32xbf16, smem, #qla.swizzle<64>>'}}
  // expected-error @+1 {{failed to legalize operation 'qla.copy' that was explicitly marked illegal}}
  %t = qla.copy %A[%c0, %c0] {qla.smem_offset = 0 : i64} : !qla.tensor<256x32xbf16> -> !qla.tile<64x32xbf16, smem, #qla.swizzle<64>>
  return
}

// -----

// Without qla-plan-smem's offset a copy has nowhere to go.
func.func @copy_without_offset(%A: !qla.tensor<256x64xbf16>) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{failed to legalize operation 'qla.copy' that was explicitly marked illegal}}
  %t = qla.copy %A[%c0, %c0] : !qla.tensor<256x64xbf16> -> !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  return
}

// -----

// wgmma reads an operand MN-major (a non-transposed B stored [K][N], an Aᵀ stored [K][M]) only with 16-bit
// elements and 128-byte rows: here B's rows are 64 bytes.
func.func @gemm_b_mn_major_short_rows() attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 17408 : i64} {
  %a = qla.smem_alloc {offset = 0 : i64} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  %b = qla.smem_alloc {offset = 8192 : i64} : !qla.tile<64x32xbf16, smem, #qla.swizzle<64>>
  %acc = qla.fill 0.0 : f32 : !qla.tile<64x32xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  // expected-error @+2 {{'qla.gemm' op reads a tile MN-major (Aᵀ or B stored row-major), which needs 16-bit elements and rows of a multiple of 128 bytes (128-byte swizzle)}}
  // expected-error @+1 {{failed to legalize operation 'qla.gemm' that was explicitly marked illegal}}
  %r = qla.gemm %a, %b, %acc : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x32xbf16, smem, #qla.swizzle<64>>, !qla.tile<64x32xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x32xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  return
}

// -----

func.func @gemm_swizzle_mismatch() attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %a = qla.smem_alloc {offset = 0 : i64} : !qla.tile<64x64xbf16, smem, #qla.swizzle<64>>
  %b = qla.smem_alloc {offset = 8192 : i64} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  %acc = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  // expected-error @+2 {{'qla.gemm' op needs A and B tiles with 32-, 64- or 128-byte swizzled rows (K x 2 bytes = 32, 64 or a multiple of 128)}}
  // expected-error @+1 {{failed to legalize operation 'qla.gemm' that was explicitly marked illegal}}
  %r = qla.gemm %a, %b, %acc {transpose_b} : !qla.tile<64x64xbf16, smem, #qla.swizzle<64>>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  return
}

// -----

// wgmma reads a register A only spread like its accumulator; qla-assign-layouts shares any other.
func.func @gemm_register_a_strided() attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %a = qla.fill 1.0 : bf16 : !qla.tile<64x64xbf16, frag, #qla.strided<threads = 128>>
  %b = qla.smem_alloc {offset = 8192 : i64} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  %acc = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  // expected-error @+2 {{a register A needs the accumulator's wgmma layout}}
  // expected-error @+1 {{failed to legalize operation 'qla.gemm'}}
  %r = qla.gemm %a, %b, %acc {transpose_b} : !qla.tile<64x64xbf16, frag, #qla.strided<threads = 128>>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  return
}

// -----

func.func @store_shared_tile(%C: !qla.tensor<64x64xf32>) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %s = qla.smem_alloc {offset = 0 : i64} : !qla.tile<64x64xf32, smem>
  // expected-error @+2 {{'qla.store' op stores register fragments with a layout only}}
  // expected-error @+1 {{failed to legalize operation 'qla.store' that was explicitly marked illegal}}
  qla.store %s, %C[%c0, %c0] : !qla.tile<64x64xf32, smem>, !qla.tensor<64x64xf32>
  return
}

// -----

// A dynamic row stride (an inner dimension known only at launch) is not supported yet.
func.func @store_dynamic_stride(%C: !qla.tensor<64x?xf32>) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %t = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  // expected-error @+2 {{'qla.store' op needs a tensor with static strides (row-major with static inner dimensions)}}
  // expected-error @+1 {{failed to legalize operation 'qla.store' that was explicitly marked illegal}}
  qla.store %t, %C[%c0, %c0] : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>, !qla.tensor<64x?xf32>
  return
}


// -----

// A wgmma-accumulator fragment spans every warpgroup that runs it: on 256 threads a one-warpgroup
// layout would have threads 128..255 address rows 64..127 of a 64-row tile.
func.func @accumulator_on_half_the_block(%A: !qla.tensor<256x128xbf16>) attributes {qla.kernel, qla.block = array<i64: 256, 1, 1>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'qla.copy' op has a '!qla.tile<64x128xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>' spread over 1 warpgroup(s) but runs on 256 threads: a wgmma-accumulator fragment must span all of them}}
  %t = qla.copy %A[%c0, %c0] : !qla.tensor<256x128xbf16> -> !qla.tile<64x128xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>
  return
}

// -----

// A gemm's accumulator must be spread like wgmma's over every warpgroup that runs it: 64 rows on 256
// threads cannot be (qla-assign-layouts gives such a tile the round-robin layout).
func.func @gemm_accumulator_round_robin(%A: !qla.tensor<256x64xbf16>) attributes {qla.kernel, qla.block = array<i64: 256, 1, 1>} {
  %c0 = arith.constant 0 : index
  %a = qla.copy %A[%c0, %c0] {qla.smem_offset = 0 : i64} : !qla.tensor<256x64xbf16> -> !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  %z = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag, #qla.strided<threads = 256>>
  // expected-error @+2 {{'qla.gemm' op needs an accumulator spread like wgmma's over all the warpgroups that run it, got '!qla.tile<64x64xf32, frag, #qla.strided<threads = 256>>': 8 to 256 columns and rows a multiple of 64 per warpgroup (qla-assign-layouts)}}
  // expected-error @+1 {{failed to legalize operation 'qla.gemm' that was explicitly marked illegal}}
  %r = qla.gemm %a, %a, %z {transpose_b} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xf32, frag, #qla.strided<threads = 256>> -> !qla.tile<64x64xf32, frag, #qla.strided<threads = 256>>
  return
}

// -----

// A fragment held by each warpgroup (qla.warpgroup_local) exchanges per warpgroup only by broadcast and
// reduce (no barriers inside them); a cumsum's line scan synchronises the block and is refused.
func.func @cumsum_of_warpgroup_copies(%A: !qla.tensor<64x32xf32>)
    attributes {qla.kernel, qla.block = array<i64: 256, 1, 1>, qla.smem_bytes = 17408 : i64} {
  %c0 = arith.constant 0 : index
  %a = qla.copy %A[%c0, %c0] : !qla.tensor<64x32xf32> -> !qla.tile<64x32xf32, frag, #qla.strided<threads = 128, copies = 2>>
  // expected-error @+2 {{'qla.cumsum' op of a fragment held by each warpgroup (#qla.strided copies, a qla.warpgroup_local kernel) is not supported: only broadcasts and reductions exchange per warpgroup}}
  // expected-error @+1 {{failed to legalize operation 'qla.cumsum' that was explicitly marked illegal}}
  %s = qla.cumsum %a, 0 {qla.scratch_offset = 0 : i64} : !qla.tile<64x32xf32, frag, #qla.strided<threads = 128, copies = 2>>
  qla.store %s, %A[%c0, %c0] : !qla.tile<64x32xf32, frag, #qla.strided<threads = 128, copies = 2>>, !qla.tensor<64x32xf32>
  return
}

// -----

// One copy a warpgroup: copies x 128 threads must be the block.
func.func @copies_not_the_block(%A: !qla.tensor<1x64xf32>)
    attributes {qla.kernel, qla.block = array<i64: 512, 1, 1>, qla.smem_bytes = 2048 : i64} {
  %c0 = arith.constant 0 : index
  %a = qla.copy %A[%c0, %c0] : !qla.tensor<1x64xf32> -> !qla.tile<1x64xf32, frag, #qla.strided<threads = 128, copies = 2>>
  // expected-error @+2 {{'qla.broadcast' op has a fragment held in 2 copies of 128 threads, but its block has 512 threads: one copy a warpgroup (qla.warpgroup_local)}}
  // expected-error @+1 {{failed to legalize operation 'qla.broadcast' that was explicitly marked illegal}}
  %b = qla.broadcast %a {dims = array<i64: 0, 1>, qla.scratch_offset = 0 : i64} : !qla.tile<1x64xf32, frag, #qla.strided<threads = 128, copies = 2>> -> !qla.tile<256x64xf32, frag, #qla.wgmma_acc<warpgroups = 4>>
  return
}

// -----

// f16_merges needs the fragment in the wgmma accumulator layout of one warpgroup.
func.func @f16_merges_strided(%A: !qla.tensor<64x64xf32>)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 33792 : i64} {
  %c0 = arith.constant 0 : index
  %a = qla.copy %A[%c0, %c0] : !qla.tensor<64x64xf32> -> !qla.tile<64x64xf32, frag, #qla.strided<threads = 128>>
  // expected-error @+2 {{with f16_merges needs a 64x64 f32 wgmma accumulator fragment of one warpgroup}}
  // expected-error @+1 {{failed to legalize operation 'qla.tri_inverse' that was explicitly marked illegal}}
  %x = qla.tri_inverse %a {f16_merges, qla.scratch_offset = 0 : i64} : !qla.tile<64x64xf32, frag, #qla.strided<threads = 128>>
  qla.store %x, %A[%c0, %c0] : !qla.tile<64x64xf32, frag, #qla.strided<threads = 128>>, !qla.tensor<64x64xf32>
  return
}
