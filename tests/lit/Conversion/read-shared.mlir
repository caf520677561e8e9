// RUN: qla-opt %s -qla-convert-to-nvvm | FileCheck %s

// qla.read of a column of a 64x4 f32 shared tile (16-byte rows: no swizzle) as a 1x64 row over 128
// threads: each thread's one element is at byte ((row + j) * 4 + col + i) * 4 of the tile, loaded from
// shared memory under the thread's guard (threads 64..127 hold none); the scalar read is one load by
// every thread, unguarded.
// CHECK-LABEL: func.func @read_column(
// CHECK: scf.if
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: llvm.insertelement
// CHECK-NOT: scf.if
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK-NOT: nvvm.barrier0
// CHECK: return
func.func @read_column(%g: !qla.tensor<?x32xf32>, %o: !qla.tensor<?x64xf32>)
    attributes {qla.kernel, qla.grid = array<i64: 1, 1, 1>, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 1024 : i64} {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %t = qla.smem_alloc {offset = 0 : i64} : !qla.tile<64x4xf32, smem, #qla.swizzle<0>>
  %row = qla.read %t[%c0, %c3] {transpose} : !qla.tile<64x4xf32, smem, #qla.swizzle<0>> -> !qla.tile<1x64xf32, frag, #qla.strided<threads = 128>>
  %s = qla.read %t[%c3, %c3] : !qla.tile<64x4xf32, smem, #qla.swizzle<0>> -> f32
  %scaled = qla.map %row : !qla.tile<1x64xf32, frag, #qla.strided<threads = 128>> -> !qla.tile<1x64xf32, frag, #qla.strided<threads = 128>> {
  ^bb0(%x: f32):
    %y = arith.mulf %x, %s : f32
    qla.yield %y : f32
  }
  qla.store %scaled, %o[%c0, %c0] : !qla.tile<1x64xf32, frag, #qla.strided<threads = 128>>, !qla.tensor<?x64xf32>
  return
}
