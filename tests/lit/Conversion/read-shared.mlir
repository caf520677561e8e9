// RUN: qla-opt %s -qla-convert-to-nvvm | FileCheck %s
// RUN: qla-opt %s -qla-convert-to-nvvm -canonicalize | FileCheck %s --check-prefix=ADDR

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
// The addresses, folded: thread t's element (t < 64) at byte (t % 64) * 16 + 3 * 4 (16-byte rows, one
// 16-byte column block); the scalar [3, 3] at byte 3 * 16 + 3 * 4 = 60.
// ADDR-LABEL: func.func @read_column(
// ADDR: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x
// ADDR: %[[ROW:.*]] = arith.remui %[[TID]], %c64_i32
// ADDR: %[[COL:.*]] = arith.addi %{{.*}}, %c3_i32
// ADDR: scf.if
// ADDR: %[[COLB:.*]] = arith.muli %[[COL]], %c4_i32
// ADDR: %[[INROW:.*]] = arith.remui %[[COLB]], %c16_i32
// ADDR: %[[ROWB:.*]] = arith.muli %[[ROW]], %c16_i32
// ADDR: arith.addi %[[ROWB]], %[[INROW]]
// ADDR: llvm.getelementptr %{{.*}}[60] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
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


// A 64x128 bf16 tile with the 128-byte swizzle is two 64x64 blocks of 8 KiB (128-byte rows); a 16-byte
// chunk c of row r sits at chunk c ^ (r % 8). The scalar [5, 70]: block 1 (8192), row 5 (640), byte 12 of
// chunk 0, which moves to chunk 5 (80): 8924. The column read at col 70 (+ tid / 64) computes the same
// in registers: block = 2 col / 128 times 8192, plus row 128 + 2 col % 128, then xor ((x >> 7) & 7) << 4.
// ADDR-LABEL: func.func @read_swizzled(
// ADDR: llvm.getelementptr %{{.*}}[8924] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// ADDR: scf.if
// ADDR: %[[BYTE:.*]] = arith.muli %{{.*}}, %c2_i32
// ADDR: %[[BLK:.*]] = arith.divui %[[BYTE]], %c128_i32
// ADDR: %[[BO:.*]] = arith.muli %[[BLK]], %c8192_i32
// ADDR: %[[LIN:.*]] = arith.addi %[[BO]], %{{.*}}
// ADDR: %[[SH:.*]] = arith.shrui %[[LIN]], %c7_i32
// ADDR: %[[M:.*]] = arith.andi %[[SH]], %c7_i32
// ADDR: %[[X:.*]] = arith.shli %[[M]], %c4_i32
// ADDR: arith.xori %[[LIN]], %[[X]]
// ADDR: llvm.load %{{.*}} : !llvm.ptr<3> -> bf16
func.func @read_swizzled(%o: !qla.tensor<?x64xf32>)
    attributes {qla.kernel, qla.grid = array<i64: 1, 1, 1>, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 16384 : i64} {
  %c0 = arith.constant 0 : index
  %c5 = arith.constant 5 : index
  %c70 = arith.constant 70 : index
  %t = qla.smem_alloc {offset = 0 : i64} : !qla.tile<64x128xbf16, smem, #qla.swizzle<128>>
  %s = qla.read %t[%c5, %c70] : !qla.tile<64x128xbf16, smem, #qla.swizzle<128>> -> bf16
  %f = arith.extf %s : bf16 to f32
  %row = qla.read %t[%c0, %c70] {transpose} : !qla.tile<64x128xbf16, smem, #qla.swizzle<128>> -> !qla.tile<1x64xbf16, frag, #qla.strided<threads = 128>>
  %scaled = qla.map %row : !qla.tile<1x64xbf16, frag, #qla.strided<threads = 128>> -> !qla.tile<1x64xf32, frag, #qla.strided<threads = 128>> {
  ^bb0(%x: bf16):
    %xf = arith.extf %x : bf16 to f32
    %y = arith.mulf %xf, %f : f32
    qla.yield %y : f32
  }
  qla.store %scaled, %o[%c0, %c0] : !qla.tile<1x64xf32, frag, #qla.strided<threads = 128>>, !qla.tensor<?x64xf32>
  return
}
