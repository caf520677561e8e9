// RUN: qla-opt %s -qla-convert-to-nvvm -split-input-file | FileCheck %s

// A 64x32 cumsum along rows over 128 threads: the input goes to scratch (barrier, stores, barrier);
// one thread a column (tid < 32, and within the fragment's 128) scans its line in place — all 64 loads first, then 63 adds, each sum
// stored — a barrier, and every thread reads its results back. No loops: the line is unrolled.
// CHECK-LABEL: func.func @columns(
// CHECK-COUNT-2: nvvm.barrier0
// CHECK: %[[LINES:.*]] = arith.constant 32 : i32
// CHECK: %[[ISLINE:.*]] = arith.cmpi ult, %{{.*}}, %[[LINES]] : i32
// CHECK: %[[THREADS:.*]] = arith.constant 128 : i32
// CHECK-NEXT: %[[MINE:.*]] = arith.cmpi ult, %{{.*}}, %[[THREADS]] : i32
// CHECK-NEXT: %[[BOTH:.*]] = arith.andi %[[ISLINE]], %[[MINE]] : i1
// CHECK-NEXT: scf.if %[[BOTH]]
// CHECK-COUNT-64: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK-NOT: llvm.load
// CHECK-COUNT-63: llvm.store %{{.*}} : f32, !llvm.ptr<3>
// CHECK-NOT: llvm.store
// CHECK: nvvm.barrier0
// CHECK-NOT: scf.for
// CHECK-NOT: nvvm.barrier0
// CHECK: return
func.func @columns(%A: !qla.tensor<64x32xf32>)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 8192 : i64} {
  %c0 = arith.constant 0 : index
  %a = qla.copy %A[%c0, %c0] : !qla.tensor<64x32xf32> -> !qla.tile<64x32xf32, frag, #qla.strided<threads = 128>>
  %s = qla.cumsum %a, 0 {qla.scratch_offset = 0 : i64} : !qla.tile<64x32xf32, frag, #qla.strided<threads = 128>>
  qla.store %s, %A[%c0, %c0] : !qla.tile<64x32xf32, frag, #qla.strided<threads = 128>>, !qla.tensor<64x32xf32>
  return
}

// -----

// Rank 3 along the middle dimension: 4x8x16 has 4·16 = 64 lines of 8 elements, 16 apart; line l starts
// at (l / 16)·128 + l % 16. Threads 0..63 take one each (8 loads, 7 sums stored).
// CHECK-LABEL: func.func @middle(
// CHECK-COUNT-2: nvvm.barrier0
// CHECK: %[[LINES:.*]] = arith.constant 64 : i32
// CHECK: arith.cmpi ult, %{{.*}}, %[[LINES]] : i32
// CHECK: scf.if
// CHECK: %[[INNER:.*]] = arith.constant 16 : i32
// CHECK-NEXT: %[[OUTER:.*]] = arith.divui %{{.*}}, %[[INNER]] : i32
// CHECK: arith.remui %{{.*}}, %{{.*}} : i32
// CHECK: %[[PLANE:.*]] = arith.constant 128 : i32
// CHECK-NEXT: arith.muli %[[OUTER]], %[[PLANE]] : i32
// CHECK-COUNT-8: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK-NOT: llvm.load
// CHECK-COUNT-7: llvm.store %{{.*}} : f32, !llvm.ptr<3>
// CHECK-NOT: llvm.store
// CHECK: nvvm.barrier0
func.func @middle(%A: !qla.tensor<4x8x16xf32>)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 2048 : i64} {
  %c0 = arith.constant 0 : index
  %a = qla.copy %A[%c0, %c0, %c0] : !qla.tensor<4x8x16xf32> -> !qla.tile<4x8x16xf32, frag, #qla.strided<threads = 128>>
  %s = qla.cumsum %a, 1 {qla.scratch_offset = 0 : i64} : !qla.tile<4x8x16xf32, frag, #qla.strided<threads = 128>>
  qla.store %s, %A[%c0, %c0, %c0] : !qla.tile<4x8x16xf32, frag, #qla.strided<threads = 128>>, !qla.tensor<4x8x16xf32>
  return
}
