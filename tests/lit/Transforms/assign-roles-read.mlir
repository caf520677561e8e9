// RUN: qla-opt %s -qla-assign-roles | FileCheck %s

// A scalar qla.read (no tile result) takes the role of its reader, like every op that needs one.
// CHECK-LABEL: func.func @roles(
// CHECK: qla.read %{{.*}}[%{{.*}}, %{{.*}}] {qla.role = "state"} : !qla.tile<64x4xf32, smem> -> f32
!acc = !qla.tile<64x64xf32, frag>
!sm = !qla.tile<64x64xbf16, smem>
func.func @roles(%A: !qla.tensor<4096x64xbf16> {qla.name = "A"}, %G: !qla.tensor<4096x32xf32> {qla.name = "G"}, %O: !qla.tensor<4096x64xf32> {qla.name = "O"})
    attributes {qla.kernel, qla.grid = array<i64: 1, 1, 1>, qla.block = array<i64: 256, 1, 1>,
                qla.roles = [#qla.role<"loads", warpgroups = 1, registers = 40, producer = true>,
                             #qla.role<"state", warpgroups = 1, registers = 232>]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %h0 = qla.fill 0.0 : f32 : !acc
  %hN = qla.for %c0 to %c8 step %c1 iter_args(%h0 : !acc) -> !acc {
  ^bb0(%i: index, %h: !acc):
    %row = arith.muli %i, %c64 : index
    %a = qla.copy %A[%row, %c0] : !qla.tensor<4096x64xbf16> -> !sm
    %g = qla.copy %G[%row, %c0] : !qla.tensor<4096x32xf32> -> !qla.tile<64x4xf32, smem>
    %s = qla.read %g[%c3, %c3] : !qla.tile<64x4xf32, smem> -> f32
    %x = qla.gemm %a, %a, %h : !sm, !sm, !acc -> !acc
    %y = qla.map %x : !acc -> !acc {
    ^bb0(%e: f32):
      %d = arith.mulf %e, %s : f32
      qla.yield %d : f32
    }
    qla.yield %y : !acc
  } {stages = 2 : i64}
  qla.store %hN, %O[%c0, %c0] : !acc, !qla.tensor<4096x64xf32>
  return
}
