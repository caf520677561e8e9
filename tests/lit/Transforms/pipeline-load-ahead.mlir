// RUN: qla-opt %s -allow-unregistered-dialect -qla-pipeline=load-ahead=true -cse | FileCheck %s
// RUN: qla-opt %s -allow-unregistered-dialect -qla-pipeline -cse | FileCheck %s --check-prefix=OFF

// A pipelined loop from 3 to %n: the small register copy of G (64 elements on 128 threads) and the scalar
// load of G are issued one iteration ahead, carried by the loop; the copy of A into registers (32
// elements a thread) and the copy of W (which the kernel stores into) stay where they are.
// CHECK-LABEL: func.func @load_ahead(
// CHECK-SAME: %[[A:[^:]*]]: !qla.tensor<4096x64xbf16>, %[[G:[^:]*]]: !qla.tensor<4096x4xf32>, %[[W:[^:]*]]: !qla.tensor<4096x4xf32>, %[[N:[^:]*]]: index)
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// The last iteration: 3 + (ceil((n - 3) / 1) - 1) * 1.
// CHECK: %[[SPAN:.*]] = arith.subi %[[N]], %[[C3]] : index
// CHECK-NEXT: %[[TRIPS:.*]] = arith.ceildivsi %[[SPAN]], %[[C1]] : index
// CHECK-NEXT: %[[TM1:.*]] = arith.subi %[[TRIPS]], %[[C1]] : index
// CHECK-NEXT: %[[SCALED:.*]] = arith.muli %[[TM1]], %[[C1]] : index
// CHECK-NEXT: %[[LAST:.*]] = arith.addi %[[C3]], %[[SCALED]] : index
// The first iteration's values, where the loop runs.
// CHECK-NEXT: %[[RUNS:.*]] = arith.cmpi slt, %[[C3]], %[[N]] : index
// CHECK-NEXT: %[[G0:.*]] = scf.if %[[RUNS]] -> (!qla.tile<64x1xf32, frag>) {
// CHECK-NEXT: %[[ROW0:.*]] = arith.muli %[[C3]], %[[C64]] : index
// CHECK-NEXT: %[[COPY0:.*]] = qla.copy %[[G]][%[[ROW0]], %{{.*}}] bounds[%[[N]], %[[C1]]]
// CHECK-NEXT: scf.yield %[[COPY0]]
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[ZERO:.*]] = qla.fill 0.000000e+00 : f32 : !qla.tile<64x1xf32, frag>
// CHECK-NEXT: scf.yield %[[ZERO]]
// CHECK: %[[S0:.*]] = scf.if %[[RUNS]] -> (f32) {
// CHECK-NEXT: %[[ROW0S:.*]] = arith.muli %[[C3]], %[[C64]] : index
// CHECK-NEXT: %[[LOAD0:.*]] = qla.load %[[G]][%[[ROW0S]], %[[C3]]]
// CHECK-NEXT: scf.yield %[[LOAD0]] : f32
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[ZEROS:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: scf.yield %[[ZEROS]] : f32
// CHECK: scf.for %[[I:.*]] = %[[C3]] to %[[N]] step %[[C1]] iter_args(%[[H:.*]] = %{{.*}}, %[[GI:.*]] = %[[G0]], %[[SI:.*]] = %[[S0]]) -> (!qla.tile<64x64xf32, frag>, !qla.tile<64x1xf32, frag>, f32)
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: qla.slot
// Iteration i + 1's position, clamped to the last iteration; its loads come after this iteration's last
// use of the values.
// CHECK-NEXT: %[[NEXT:.*]] = arith.addi %[[I]], %[[C1]] : index
// CHECK-NEXT: %[[AT:.*]] = arith.minsi %[[NEXT]], %[[LAST]] : index
// CHECK-NEXT: %[[ROW:.*]] = arith.muli %[[I]], %[[C64]] : index
// CHECK-NEXT: %[[BIG:.*]] = qla.copy %[[A]][%[[ROW]], %{{.*}}] : !qla.tensor<4096x64xbf16> -> !qla.tile<64x64xbf16, frag>
// CHECK-NEXT: %[[WT:.*]] = qla.copy %[[W]][%[[ROW]], %{{.*}}] :
// CHECK: "test.use"(%[[GI]], %[[SI]], %[[BIG]], %[[WT]])
// CHECK-NEXT: %[[ROWN:.*]] = arith.muli %[[AT]], %[[C64]] : index
// CHECK-NEXT: %[[SN:.*]] = qla.load %[[G]][%[[ROWN]], %[[C3]]]
// CHECK-NEXT: %[[GN:.*]] = qla.copy %[[G]][%[[ROWN]], %{{.*}}] bounds[%[[N]], %[[C1]]]
// CHECK: scf.yield %{{.*}}, %[[GN]], %[[SN]] : !qla.tile<64x64xf32, frag>, !qla.tile<64x1xf32, frag>, f32

// OFF-LABEL: func.func @load_ahead(
// OFF-NOT: scf.if %{{.*}} -> (
// OFF: scf.for %{{.*}} iter_args(%{{[^)]*}}) -> (!qla.tile<64x64xf32, frag>) {
// OFF: qla.copy %{{.*}} bounds
// OFF: qla.load
// OFF-NOT: arith.minsi
func.func @load_ahead(%A: !qla.tensor<4096x64xbf16>, %G: !qla.tensor<4096x4xf32>, %W: !qla.tensor<4096x4xf32>,
                      %n: index)
    attributes {qla.kernel, qla.grid = array<i64: 1, 1, 1>, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c64 = arith.constant 64 : index
  %h0 = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag>
  %r = qla.for %c3 to %n step %c1 iter_args(%h0 : !qla.tile<64x64xf32, frag>) -> !qla.tile<64x64xf32, frag> {
  ^bb0(%i: index, %hh: !qla.tile<64x64xf32, frag>):
    %row = arith.muli %i, %c64 : index
    %a = qla.copy %A[%row, %c0] : !qla.tensor<4096x64xbf16> -> !qla.tile<64x64xbf16, smem>
    %g = qla.copy %G[%row, %c0] bounds[%n, %c1] : !qla.tensor<4096x4xf32> -> !qla.tile<64x1xf32, frag>
    %s = qla.load %G[%row, %c3] : !qla.tensor<4096x4xf32> -> f32
    %big = qla.copy %A[%row, %c0] : !qla.tensor<4096x64xbf16> -> !qla.tile<64x64xbf16, frag>
    %w = qla.copy %W[%row, %c0] : !qla.tensor<4096x4xf32> -> !qla.tile<64x1xf32, frag>
    %x = qla.gemm %a, %a, %hh {transpose_b} : !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
    "test.use"(%g, %s, %big, %w) : (!qla.tile<64x1xf32, frag>, f32, !qla.tile<64x64xbf16, frag>, !qla.tile<64x1xf32, frag>) -> ()
    qla.store %w, %W[%row, %c1] : !qla.tile<64x1xf32, frag>, !qla.tensor<4096x4xf32>
    qla.yield %x : !qla.tile<64x64xf32, frag>
  } {stages = 2 : i64}
  "test.keep"(%r) : (!qla.tile<64x64xf32, frag>) -> ()
  return
}

// A loaded value the loop yields as it is: the yield carries this iteration's value (the block
// argument), and the next iteration's load goes before the yield.
// CHECK-LABEL: func.func @yielded_load(
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %[[SI:.*]] = %{{.*}}) -> (!qla.tile<64x64xf32, frag>, f32, f32)
// CHECK: %[[SN:.*]] = qla.load
// CHECK: scf.yield %{{.*}}, %[[SI]], %[[SN]] : !qla.tile<64x64xf32, frag>, f32, f32
func.func @yielded_load(%A: !qla.tensor<4096x64xbf16>, %G: !qla.tensor<4096x4xf32>, %n: index)
    attributes {qla.kernel, qla.grid = array<i64: 1, 1, 1>, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c64 = arith.constant 64 : index
  %h0 = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag>
  %f0 = arith.constant 0.0 : f32
  %r:2 = qla.for %c3 to %n step %c1 iter_args(%h0, %f0 : !qla.tile<64x64xf32, frag>, f32) -> !qla.tile<64x64xf32, frag>, f32 {
  ^bb0(%i: index, %hh: !qla.tile<64x64xf32, frag>, %ff: f32):
    %row = arith.muli %i, %c64 : index
    %a = qla.copy %A[%row, %c0] : !qla.tensor<4096x64xbf16> -> !qla.tile<64x64xbf16, smem>
    %s = qla.load %G[%row, %c3] : !qla.tensor<4096x4xf32> -> f32
    %x = qla.gemm %a, %a, %hh {transpose_b} : !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
    qla.yield %x, %s : !qla.tile<64x64xf32, frag>, f32
  } {stages = 2 : i64}
  "test.keep"(%r#0, %r#1) : (!qla.tile<64x64xf32, frag>, f32) -> ()
  return
}
