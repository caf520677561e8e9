// RUN: qla-opt %s -qla-convert-to-nvvm | FileCheck %s

// qla.prefetch: element e of the box (row-major) goes to thread e mod the block's threads. A 64x1
// column over 128 threads: one round, threads 0..63, each prefetching the line of element
// (row + e, col) when it is inside the bounds (rows below %end) and the box (e < 64).
// CHECK-LABEL: func.func @column(
// CHECK: nvvm.read.ptx.sreg.tid.x
// CHECK: arith.remui %{{.*}}, %c1_i32
// CHECK: arith.divui %{{.*}}, %c1_i32
// CHECK: arith.remui %{{.*}}, %c64_i32
// CHECK: arith.cmpi slt
// CHECK: llvm.getelementptr
// CHECK: arith.cmpi ult, %{{.*}}, %c64_i32
// CHECK: scf.if
// CHECK-NEXT: llvm.inline_asm has_side_effects "prefetch.global.L2 [$0];", "l"
// CHECK-NOT: prefetch.global.L2
// CHECK: return
func.func @column(%g: !qla.tensor<4096x32xf32>, %cu: !qla.tensor<8xi64>)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %heads = arith.constant 32 : index
  %row = qla.load %cu[%c0] : !qla.tensor<8xi64> -> index
  %end = qla.load %cu[%c1] : !qla.tensor<8xi64> -> index
  %col = arith.addi %c5, %c0 : index
  qla.prefetch %g[%row, %col] bounds[%end, %heads] {shape = array<i64: 64, 1>} : !qla.tensor<4096x32xf32>
  return
}

// A box of 64x4 = 256 elements over 128 threads takes two rounds: two prefetches a thread.
// CHECK-LABEL: func.func @two_rounds(
// CHECK-COUNT-2: prefetch.global.L2
// CHECK-NOT: prefetch.global.L2
// CHECK: return
func.func @two_rounds(%g: !qla.tensor<4096x32xf32>)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %row = arith.constant 64 : index
  %col = arith.constant 4 : index
  qla.prefetch %g[%row, %col] {shape = array<i64: 64, 4>} : !qla.tensor<4096x32xf32>
  return
}
