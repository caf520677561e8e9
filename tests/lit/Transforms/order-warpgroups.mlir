// RUN: qla-opt %s -qla-order-warpgroups -split-input-file -verify-diagnostics | FileCheck %s

// Each run of consecutive asynchronous gemms in the loop is a turn: wait before it, pass after it; the
// last warpgroup hands the first its first turn before the loop, and the first takes the last turn after
// it. Ops between the runs (the wait for the results, the elementwise work) are outside the turns.
// CHECK-LABEL: func.func @two_runs(
// CHECK-NOT: qla.warpgroup_turns
// CHECK: qla.warpgroup_turn "begin"
// CHECK-NEXT: scf.for
// CHECK-NEXT: qla.warpgroup_turn "wait"
// CHECK-NEXT: qla.gemm
// CHECK-NEXT: qla.gemm
// CHECK-NEXT: qla.warpgroup_turn "pass"
// CHECK-NEXT: qla.async_wait 0
// CHECK-NEXT: qla.map
// CHECK: qla.warpgroup_turn "wait"
// CHECK-NEXT: qla.gemm
// CHECK-NEXT: qla.warpgroup_turn "pass"
// CHECK-NEXT: qla.async_wait 0
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: qla.warpgroup_turn "end"
// (Lowered: tests/lit/Conversion/warpgroup-turns.mlir.)
func.func @two_runs()
    attributes {qla.kernel, qla.block = array<i64: 256, 1, 1>, qla.smem_bytes = 9216 : i64, qla.warpgroup_turns} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = qla.smem_alloc {offset = 0 : i64} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  %z = qla.fill 0.0 : f32 : !qla.tile<128x64xf32, frag, #qla.wgmma_acc<warpgroups = 2>>
  %h0 = qla.fill 1.0 : bf16 : !qla.tile<128x64xbf16, frag, #qla.wgmma_acc<warpgroups = 2>>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %h0) -> (!qla.tile<128x64xbf16, frag, #qla.wgmma_acc<warpgroups = 2>>) {
    %x = qla.gemm %h, %a, %z {async, transpose_b} : !qla.tile<128x64xbf16, frag, #qla.wgmma_acc<warpgroups = 2>>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<128x64xf32, frag, #qla.wgmma_acc<warpgroups = 2>> -> !qla.tile<128x64xf32, frag, #qla.wgmma_acc<warpgroups = 2>>
    %y = qla.gemm %h, %a, %x {async, transpose_b} : !qla.tile<128x64xbf16, frag, #qla.wgmma_acc<warpgroups = 2>>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<128x64xf32, frag, #qla.wgmma_acc<warpgroups = 2>> -> !qla.tile<128x64xf32, frag, #qla.wgmma_acc<warpgroups = 2>>
    qla.async_wait 0
    %yh = qla.map %y : !qla.tile<128x64xf32, frag, #qla.wgmma_acc<warpgroups = 2>> -> !qla.tile<128x64xbf16, frag, #qla.wgmma_acc<warpgroups = 2>> {
    ^bb0(%v: f32):
      %t = arith.truncf %v : f32 to bf16
      qla.yield %t : bf16
    }
    %w = qla.gemm %yh, %a, %z {async, transpose_b} : !qla.tile<128x64xbf16, frag, #qla.wgmma_acc<warpgroups = 2>>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<128x64xf32, frag, #qla.wgmma_acc<warpgroups = 2>> -> !qla.tile<128x64xf32, frag, #qla.wgmma_acc<warpgroups = 2>>
    qla.async_wait 0
    %wh = qla.map %w : !qla.tile<128x64xf32, frag, #qla.wgmma_acc<warpgroups = 2>> -> !qla.tile<128x64xbf16, frag, #qla.wgmma_acc<warpgroups = 2>> {
    ^bb0(%v: f32):
      %t = arith.truncf %v : f32 to bf16
      qla.yield %t : bf16
    }
    scf.yield %wh : !qla.tile<128x64xbf16, frag, #qla.wgmma_acc<warpgroups = 2>>
  }
  return
}

// -----

// One warpgroup has no one to take turns with: a remark, nothing inserted.
// CHECK-LABEL: func.func @one_warpgroup(
// CHECK-NOT: qla.warpgroup_turn
// expected-remark @+1 {{qla.warpgroup_turns: 1 warpgroup(s), no turns taken (2 to 7: named barriers 1 + W + wg must stay below 16)}}
func.func @one_warpgroup() attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>, qla.warpgroup_turns} {
  return
}
