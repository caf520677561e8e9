// RUN: qla-opt %s -qla-convert-to-nvvm -split-input-file | FileCheck %s
// RUN: qla-opt %s -qla-convert-to-nvvm -split-input-file | FileCheck %s --check-prefix=FMA

// A 64x64 f32 tri_inverse is blocked: the input goes to scratch (barrier, stores, barrier); the four
// 16x16 diagonal blocks are substituted at once, one thread per column (16-byte reads of A's row),
// then block rows 1, 2, 3 each take three barriers (T_rs = Σ A_rk·X_ks into A's place, then
// X_rs = -X_rr·T_rs); every thread gathers its lower-triangular elements from X.
// CHECK-LABEL: func.func @blocked(
// CHECK-COUNT-2: nvvm.barrier0
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK: nvvm.barrier0
// CHECK: scf.for
// CHECK-COUNT-9: nvvm.barrier0
// CHECK-NOT: nvvm.barrier0
// CHECK: return
func.func @blocked(%A: !qla.tensor<64x64xf32>)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 33792 : i64} {
  %c0 = arith.constant 0 : index
  %a = qla.copy %A[%c0, %c0] : !qla.tensor<64x64xf32> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  %x = qla.tri_inverse %a {qla.scratch_offset = 0 : i64} : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  qla.store %x, %A[%c0, %c0] : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>, !qla.tensor<64x64xf32>
  return
}

// -----

// A size that is not a multiple of 16 is substituted column by column (the chain is n rows deep),
// unrolled (no loops), with one barrier before the gather.
// CHECK-LABEL: func.func @columns(
// CHECK-COUNT-2: nvvm.barrier0
// CHECK-NOT: scf.for
// CHECK: nvvm.barrier0
// CHECK-NOT: nvvm.barrier0
// CHECK: return
func.func @columns(%A: !qla.tensor<24x24xf32>)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 5632 : i64} {
  %c0 = arith.constant 0 : index
  %a = qla.copy %A[%c0, %c0] : !qla.tensor<24x24xf32> -> !qla.tile<24x24xf32, frag, #qla.strided<threads = 128>>
  %x = qla.tri_inverse %a {qla.scratch_offset = 0 : i64} : !qla.tile<24x24xf32, frag, #qla.strided<threads = 128>>
  qla.store %x, %A[%c0, %c0] : !qla.tile<24x24xf32, frag, #qla.strided<threads = 128>>, !qla.tensor<24x24xf32>
  return
}

// -----

// With block = 16 only the diagonal blocks are inverted. On an f32 accumulator fragment each warp holds
// its own (rows and columns 16w …) and inverts it in registers: 15 elimination steps of four shuffles
// of X's row k (from lane 4(k % 8) + l % 4) and two of N's column k (from lane 4(l / 4) + (k % 8) / 2),
// eight FMAs each; no shared memory, no barrier.
// CHECK-LABEL: func.func @diagonal_blocks(
// CHECK-NOT: nvvm.barrier0
// CHECK-COUNT-90: nvvm.shfl.sync idx
// CHECK-NOT: nvvm.shfl.sync
// CHECK-NOT: nvvm.barrier0
// CHECK: return
// FMA-LABEL: func.func @diagonal_blocks(
// FMA-COUNT-120: llvm.intr.fma
// FMA-NOT: llvm.intr.fma
// FMA: return
func.func @diagonal_blocks(%A: !qla.tensor<64x64xf32>)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 1024 : i64} {
  %c0 = arith.constant 0 : index
  %a = qla.copy %A[%c0, %c0] : !qla.tensor<64x64xf32> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  %x = qla.tri_inverse %a {block = 16 : i64} : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  qla.store %x, %A[%c0, %c0] : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>, !qla.tensor<64x64xf32>
  return
}

// -----

// 128x128: two 64-row blocks a warp on one warpgroup (15 steps each: 180 shuffles), or one a warp on
// two warpgroups (90); each warp picks its block among the eight by a select, none through memory.
// CHECK-LABEL: func.func @two_row_blocks(
// CHECK-NOT: nvvm.barrier0
// CHECK-COUNT-180: nvvm.shfl.sync idx
// CHECK-NOT: nvvm.shfl.sync
// CHECK-NOT: nvvm.barrier0
// CHECK: return
// CHECK-LABEL: func.func @two_warpgroups(
// CHECK-NOT: nvvm.barrier0
// CHECK-COUNT-90: nvvm.shfl.sync idx
// CHECK-NOT: nvvm.shfl.sync
// CHECK-NOT: nvvm.barrier0
// CHECK: return
func.func @two_row_blocks(%A: !qla.tensor<128x128xf32>)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 1024 : i64} {
  %c0 = arith.constant 0 : index
  %a = qla.copy %A[%c0, %c0] : !qla.tensor<128x128xf32> -> !qla.tile<128x128xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  %x = qla.tri_inverse %a {block = 16 : i64} : !qla.tile<128x128xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  qla.store %x, %A[%c0, %c0] : !qla.tile<128x128xf32, frag, #qla.wgmma_acc<warpgroups = 1>>, !qla.tensor<128x128xf32>
  return
}
func.func @two_warpgroups(%A: !qla.tensor<128x128xf32>)
    attributes {qla.kernel, qla.block = array<i64: 256, 1, 1>, qla.smem_bytes = 1024 : i64} {
  %c0 = arith.constant 0 : index
  %a = qla.copy %A[%c0, %c0] : !qla.tensor<128x128xf32> -> !qla.tile<128x128xf32, frag, #qla.wgmma_acc<warpgroups = 2>>
  %x = qla.tri_inverse %a {block = 16 : i64} : !qla.tile<128x128xf32, frag, #qla.wgmma_acc<warpgroups = 2>>
  qla.store %x, %A[%c0, %c0] : !qla.tile<128x128xf32, frag, #qla.wgmma_acc<warpgroups = 2>>, !qla.tensor<128x128xf32>
  return
}

// -----

// Elsewhere (here a strided fragment) block = 16 substitutes through scratch, one thread a column (one
// barrier after the diagonal blocks), and every thread gathers the elements of its own diagonal block
// (row / 16 == column / 16).
// CHECK-LABEL: func.func @diagonal_blocks_scratch(
// CHECK-COUNT-3: nvvm.barrier0
// CHECK-NOT: nvvm.barrier0
// CHECK: arith.divui %{{.*}}, %{{.*}} : i32
// CHECK: return
func.func @diagonal_blocks_scratch(%A: !qla.tensor<64x64xf32>)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 33792 : i64} {
  %c0 = arith.constant 0 : index
  %a = qla.copy %A[%c0, %c0] : !qla.tensor<64x64xf32> -> !qla.tile<64x64xf32, frag, #qla.strided<threads = 128>>
  %x = qla.tri_inverse %a {block = 16 : i64, qla.scratch_offset = 0 : i64} : !qla.tile<64x64xf32, frag, #qla.strided<threads = 128>>
  qla.store %x, %A[%c0, %c0] : !qla.tile<64x64xf32, frag, #qla.strided<threads = 128>>, !qla.tensor<64x64xf32>
  return
}

// -----

// With f16_merges the whole 64x64 inverse stays in the warps: the diagonal blocks as above (90
// shuffles), then a barrier before the scratch is written (D_w and N's rows, transposed, as f16), a
// barrier before merge 16 -> 32 (four mma.sync a warp: −D_w·N·D_(w−1)), one before merge 32 -> 64
// (sixteen: −X_lo·N·X_up); the odd warps' blocks go to scratch under an scf.if. No other barrier.
// CHECK-LABEL: func.func @f16_merges(
// CHECK-COUNT-90: nvvm.shfl.sync idx
// CHECK: nvvm.barrier0
// CHECK-COUNT-40: llvm.store %{{.*}} : f16, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK-COUNT-4: nvvm.mma.sync {{.*}}layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK: scf.if
// CHECK-COUNT-8: llvm.store %{{.*}} : f16, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK-COUNT-16: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK-NOT: nvvm.barrier0
// CHECK: return
func.func @f16_merges(%A: !qla.tensor<64x64xf32>)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 19456 : i64} {
  %c0 = arith.constant 0 : index
  %a = qla.copy %A[%c0, %c0] : !qla.tensor<64x64xf32> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  %x = qla.tri_inverse %a {f16_merges, qla.scratch_offset = 0 : i64} : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  qla.store %x, %A[%c0, %c0] : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>, !qla.tensor<64x64xf32>
  return
}

