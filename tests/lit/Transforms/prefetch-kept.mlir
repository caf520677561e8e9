// RUN: qla-opt %s -canonicalize -cse | FileCheck %s

// qla.prefetch has no result and declares no memory effect, so it counts as having unknown effects:
// canonicalize does not erase it as dead and CSE does not merge two identical ones.
// CHECK-LABEL: func.func @kept(
// CHECK: qla.for
// CHECK-COUNT-2: qla.prefetch %{{.*}}[%{{.*}}, %{{.*}}] {shape = array<i64: 64, 1>}
func.func @kept(%A: !qla.tensor<4096x64xbf16>, %n: index) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  qla.for %c0 to %n step %c1 {
  ^bb0(%i: index):
    %row = arith.muli %i, %c64 : index
    qla.prefetch %A[%row, %c0] {shape = array<i64: 64, 1>} : !qla.tensor<4096x64xbf16>
    qla.prefetch %A[%row, %c0] {shape = array<i64: 64, 1>} : !qla.tensor<4096x64xbf16>
  }
  return
}
