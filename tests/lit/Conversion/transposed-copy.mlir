// RUN: qla-opt %s -qla-convert-to-nvvm | FileCheck %s

// A transposed copy into an accumulator fragment and a transposed store (states stored [V][K]): tile
// element (i, j) is tensor element (row + j, col + i), so a thread's column pairs are not adjacent in
// the tensor: element by element, no pair loads (inline PTX) and no 2-element stores. The tile's row
// coordinate becomes the tensor's column: multiplied by the stride of dimension 0 (64) is the tile column.
// CHECK-LABEL: func.func @state_v_first(
// CHECK-NOT: llvm.inline_asm
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK-NOT: vector<2xf32>
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<1>
// CHECK-NOT: vector<2xf32>
// CHECK: return
func.func @state_v_first(%h0: !qla.tensor<4096x64xf32>, %ht: !qla.tensor<4096x64xf32>)
    attributes {qla.kernel, qla.grid = array<i64: 1, 1, 1>, qla.block = array<i64: 128, 1, 1>} {
  %row = qla.block_id 0
  %c0 = arith.constant 0 : index
  %s = qla.copy %h0[%row, %c0] {transpose} : !qla.tensor<4096x64xf32> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  qla.store %s, %ht[%row, %c0] {transpose} : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>, !qla.tensor<4096x64xf32>
  return
}
