// RUN: qla-opt %s -qla-pipeline | FileCheck %s

// A ring slot read by qla.read (plain shared-memory loads, not a wgmma that its warpgroup waits for) is
// released a warp at a time: empty[s] counts the block's warps (4), each warp syncs, then its lane 0
// arrives; the slot is read through qla.slot.
// CHECK-LABEL: func.func @readonly(
// CHECK: %[[LANE:.*]] = arith.remui %{{.*}}, %c32 : index
// CHECK: %[[WARPLEAD:.*]] = arith.cmpi eq, %[[LANE]], %{{.*}} : index
// CHECK: nvgpu.mbarrier.init %[[EMPTY:[0-9]+]][%{{.*}}], %c4
// CHECK: scf.for
// CHECK: %[[SLOT:.*]] = qla.slot
// CHECK: qla.read %[[SLOT]]
// CHECK: nvvm.bar.warp.sync
// CHECK-NEXT: arith.andi %{{.*}}, %[[WARPLEAD]]
// CHECK-NEXT: scf.if
// CHECK-NEXT: nvgpu.mbarrier.arrive %[[EMPTY]]
// A pipelined loop whose only use of the ring is qla.read (no gemm): release protocol.
func.func @readonly(%g: !qla.tensor<?x32xf32> {qla.name = "g"}, %o: !qla.tensor<?x64xf32> {qla.name = "o"}, %n: index)
    attributes {qla.kernel, qla.grid = array<i64: 1, 1, 1>, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c64 = arith.constant 64 : index
  %z = qla.fill 0.0 : f32 : !qla.tile<1x64xf32, frag>
  %r = qla.for %c0 to %n step %c1 iter_args(%z : !qla.tile<1x64xf32, frag>) -> !qla.tile<1x64xf32, frag> {
  ^bb0(%i: index, %acc: !qla.tile<1x64xf32, frag>):
    %row = arith.muli %i, %c64 : index
    %t = qla.copy %g[%row, %c0] : !qla.tensor<?x32xf32> -> !qla.tile<64x4xf32, smem>
    %x = qla.read %t[%c0, %c3] {transpose} : !qla.tile<64x4xf32, smem> -> !qla.tile<1x64xf32, frag>
    %s = qla.map %acc, %x : !qla.tile<1x64xf32, frag>, !qla.tile<1x64xf32, frag> -> !qla.tile<1x64xf32, frag> {
    ^bb0(%a: f32, %b: f32):
      %y = arith.addf %a, %b : f32
      qla.yield %y : f32
    }
    qla.yield %s : !qla.tile<1x64xf32, frag>
  } {stages = 2 : i64}
  qla.store %r, %o[%c0, %c0] : !qla.tile<1x64xf32, frag>, !qla.tensor<?x64xf32>
  return
}
