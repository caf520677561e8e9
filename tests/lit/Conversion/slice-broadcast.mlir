// RUN: qla-opt %s -qla-convert-to-nvvm -split-input-file | FileCheck %s

// A broadcast of an #qla.acc_slice vector into its accumulator fragment moves no data: one
// shufflevector picks, for each of the thread's 32 elements (8-column group nb, q), the slice element
// of its row (q / 2: rows l/4 and l/4 + 8) or its column (nb, q % 2). No shared memory, no barrier. The
// slices' copies load each thread's own rows (2) or columns (16) element by element.
// CHECK-LABEL: func.func @rows_and_columns(
// CHECK-NOT: nvvm.barrier0
// CHECK: llvm.shufflevector %{{.*}}, %{{.*}} [0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1] : vector<2xf32>
// CHECK: llvm.shufflevector %{{.*}}, %{{.*}} [0, 1, 0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7, 8, 9, 8, 9, 10, 11, 10, 11, 12, 13, 12, 13, 14, 15, 14, 15] : vector<16xf32>
// CHECK-NOT: nvvm.barrier0
// CHECK: return
func.func @rows_and_columns(%g: !qla.tensor<64x1xf32>, %o: !qla.tensor<64x64xf32>)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 1024 : i64} {
  %c0 = arith.constant 0 : index
  %r = qla.copy %g[%c0, %c0] : !qla.tensor<64x1xf32> -> !qla.tile<64x1xf32, frag, #qla.acc_slice<warpgroups = 1, along = 0>>
  %c = qla.copy %g[%c0, %c0] : !qla.tensor<64x1xf32> -> !qla.tile<64x1xf32, frag, #qla.acc_slice<warpgroups = 1, along = 1>>
  %br = qla.broadcast %r {dims = array<i64: 0, 1>} : !qla.tile<64x1xf32, frag, #qla.acc_slice<warpgroups = 1, along = 0>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  %bc = qla.broadcast %c {dims = array<i64: 1, 0>} : !qla.tile<64x1xf32, frag, #qla.acc_slice<warpgroups = 1, along = 1>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  %s = qla.map %br, %bc : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>, !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>> {
  ^bb0(%a: f32, %b: f32):
    %t = arith.subf %a, %b : f32
    qla.yield %t : f32
  }
  qla.store %s, %o[%c0, %c0] : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>, !qla.tensor<64x64xf32>
  return
}
