// RUN: qla-opt %s -qla-assign-layouts -split-input-file | FileCheck %s --check-prefix=LAYOUT
// RUN: qla-opt %s -qla-assign-layouts -qla-plan-smem -split-input-file | FileCheck %s --check-prefix=SMEM

// qla.warpgroup_local on a 256-thread kernel: the round-robin gate row is held by each warpgroup
// (copies = 2); accumulator fragments span both warpgroups as usual.
// LAYOUT-LABEL: func.func @copies_per_warpgroup(
// LAYOUT: qla.copy {{.*}} -> !qla.tile<1x64xf32, frag, #qla.strided<threads = 128, copies = 2>>
// LAYOUT: qla.broadcast {{.*}} : !qla.tile<1x64xf32, frag, #qla.strided<threads = 128, copies = 2>> -> !qla.tile<128x64xf32, frag, #qla.wgmma_acc<warpgroups = 2>>
//
// qla-plan-smem: the broadcast's scratch is a copy a warpgroup (2 x 64 x 4 bytes), the loop's transposed
// store stages per warpgroup (qla.scratch_per_warpgroup); both count as live from the kernel's start to
// the loop's end, so they share bytes with nothing before or in the loop (the store after 512). The store
// after the loop is block-wide and reuses byte 0: its leading block barrier waits for both warpgroups.
// SMEM-LABEL: func.func @copies_per_warpgroup(
// SMEM-SAME: qla.smem_bytes = 17920 : i64
// SMEM: qla.broadcast %{{.*}} {dims = array<i64: 0, 1>, qla.scratch_offset = 0 : i64}
// SMEM: qla.store %{{.*}} {qla.scratch_offset = 512 : i64, qla.scratch_per_warpgroup, transpose}
// SMEM: qla.store %{{.*}} {qla.scratch_offset = 0 : i64, transpose}
func.func @copies_per_warpgroup(%g: !qla.tensor<1x64xf32>, %o: !qla.tensor<4096x128xbf16>)
    attributes {qla.kernel, qla.block = array<i64: 256, 1, 1>, qla.warpgroup_local} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %r = qla.copy %g[%c0, %c0] : !qla.tensor<1x64xf32> -> !qla.tile<1x64xf32, frag>
    %b = qla.broadcast %r {dims = array<i64: 0, 1>} : !qla.tile<1x64xf32, frag> -> !qla.tile<128x64xf32, frag>
    %h = qla.map %b : !qla.tile<128x64xf32, frag> -> !qla.tile<128x64xbf16, frag> {
    ^bb0(%a: f32):
      %t = arith.truncf %a : f32 to bf16
      qla.yield %t : bf16
    }
    qla.store %h, %o[%i, %c0] {transpose} : !qla.tile<128x64xbf16, frag>, !qla.tensor<4096x128xbf16>
  }
  %z = qla.fill 1.0 : bf16 : !qla.tile<128x64xbf16, frag>
  qla.store %z, %o[%c0, %c0] {transpose} : !qla.tile<128x64xbf16, frag>, !qla.tensor<4096x128xbf16>
  return
}

// -----

// Without the attribute the row is spread over all 256 threads, and every exchange and staged store
// shares the one scratch region (block barriers order them).
// LAYOUT-LABEL: func.func @block_wide(
// LAYOUT: qla.copy {{.*}} -> !qla.tile<1x64xf32, frag, #qla.strided<threads = 256>>
// SMEM-LABEL: func.func @block_wide(
// SMEM: qla.broadcast %{{.*}} {dims = array<i64: 0, 1>, qla.scratch_offset = 0 : i64}
// SMEM: qla.store %{{.*}} {qla.scratch_offset = 0 : i64, transpose}
// SMEM-NOT: qla.scratch_per_warpgroup
func.func @block_wide(%g: !qla.tensor<1x64xf32>, %o: !qla.tensor<4096x128xbf16>)
    attributes {qla.kernel, qla.block = array<i64: 256, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %r = qla.copy %g[%c0, %c0] : !qla.tensor<1x64xf32> -> !qla.tile<1x64xf32, frag>
    %b = qla.broadcast %r {dims = array<i64: 0, 1>} : !qla.tile<1x64xf32, frag> -> !qla.tile<128x64xf32, frag>
    %h = qla.map %b : !qla.tile<128x64xf32, frag> -> !qla.tile<128x64xbf16, frag> {
    ^bb0(%a: f32):
      %t = arith.truncf %a : f32 to bf16
      qla.yield %t : bf16
    }
    qla.store %h, %o[%i, %c0] {transpose} : !qla.tile<128x64xbf16, frag>, !qla.tensor<4096x128xbf16>
  }
  return
}

// -----

// Where a cumsum reads a vector (it exchanges block-wide only), the kernel's vectors stay spread over the
// block.
// LAYOUT-LABEL: func.func @cumsum_input(
// LAYOUT: qla.copy {{.*}} -> !qla.tile<1x64xf32, frag, #qla.strided<threads = 256>>
// LAYOUT: qla.cumsum {{.*}} : !qla.tile<1x64xf32, frag, #qla.strided<threads = 256>>
// SMEM-LABEL: func.func @cumsum_input(
func.func @cumsum_input(%g: !qla.tensor<1x64xf32>)
    attributes {qla.kernel, qla.block = array<i64: 256, 1, 1>, qla.warpgroup_local} {
  %c0 = arith.constant 0 : index
  %r = qla.copy %g[%c0, %c0] : !qla.tensor<1x64xf32> -> !qla.tile<1x64xf32, frag>
  %s = qla.cumsum %r, 1 : !qla.tile<1x64xf32, frag>
  qla.store %s, %g[%c0, %c0] : !qla.tile<1x64xf32, frag>, !qla.tensor<1x64xf32>
  return
}
