// RUN: qla-opt %s -qla-drop-loop-outputs | FileCheck %s

// The state-only kernel of a context split: the per-iteration output (a gemm, a map and a store) goes,
// the state's update and the store of the final state after the loop stay.
// CHECK-LABEL: func.func @state_only(
// CHECK: %[[H:.*]] = qla.for {{.*}} iter_args(
// CHECK: %[[A:.*]] = qla.copy
// CHECK-NEXT: %[[X:.*]] = qla.gemm %[[A]], %[[A]], %{{.*}} {transpose_b}
// CHECK-NEXT: qla.yield %[[X]]
// CHECK-NEXT: }
// CHECK-NEXT: qla.store %[[H]]
// CHECK-NOT: qla.map
// CHECK: return
!acc = !qla.tile<64x64xf32, frag>
!sm = !qla.tile<64x64xbf16, smem>
func.func @state_only(%A: !qla.tensor<4096x64xbf16>, %O: !qla.tensor<4096x64xf32>, %S: !qla.tensor<64x64xf32>, %n: index)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %h0 = qla.fill 0.0 : f32 : !acc
  %hN = qla.for %c0 to %n step %c1 iter_args(%h0 : !acc) -> !acc {
  ^bb0(%i: index, %h: !acc):
    %row = arith.muli %i, %c64 : index
    %a = qla.copy %A[%row, %c0] : !qla.tensor<4096x64xbf16> -> !sm
    %x = qla.gemm %a, %a, %h {transpose_b} : !sm, !sm, !acc -> !acc
    %z = qla.fill 0.0 : f32 : !acc
    %y = qla.gemm %a, %a, %z {transpose_b} : !sm, !sm, !acc -> !acc
    %o = qla.map %y, %h : !acc, !acc -> !acc {
    ^bb0(%e: f32, %f: f32):
      %s = arith.addf %e, %f : f32
      qla.yield %s : f32
    }
    qla.store %o, %O[%row, %c0] : !acc, !qla.tensor<4096x64xf32>
    qla.yield %x : !acc
  }
  qla.store %hN, %S[%c0, %c0] : !acc, !qla.tensor<64x64xf32>
  return
}
