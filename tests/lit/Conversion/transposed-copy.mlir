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

// With scratch (qla-plan-smem gives a transposed store some when the tensor's rows come in 16-byte
// pieces): barrier, the 16-bit accumulator written to scratch as the tensor's rows with stmatrix.trans
// (32 elements a thread: four x4 instructions, no 2-byte stores; the pieces swizzled by row), barrier,
// then 16-byte pieces of those rows: 64 rows x 8 pieces = 512 pieces, four a thread, each one 16-byte
// load from scratch and one 16-byte global store when inside the bounds and aligned.
// CHECK-LABEL: func.func @output_through_scratch(
// CHECK: nvvm.barrier0
// CHECK-NOT: bf16, !llvm.ptr<3>
// CHECK: arith.xori
// CHECK-COUNT-4: nvvm.stmatrix %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>
// CHECK-NOT: bf16, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK-COUNT-4: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// CHECK-NOT: vector<8xbf16>, !llvm.ptr<1>
// CHECK: return
func.func @output_through_scratch(%o: !qla.tensor<?x512xbf16>)
    attributes {qla.kernel, qla.grid = array<i64: 1, 1, 1>, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 9216 : i64} {
  %c0 = arith.constant 0 : index
  %c512 = arith.constant 512 : index
  %eos = qla.block_id 0
  %t = qla.fill 1.0 : bf16 : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>
  qla.store %t, %o[%c0, %c0] bounds[%eos, %c512] {transpose, qla.scratch_offset = 0 : i64} : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>, !qla.tensor<?x512xbf16>
  return
}

// A transposed copy into registers with scratch: barrier, 16-byte pieces of the tensor's rows (64 rows x
// 16 pieces of four f32 = 1024 pieces, eight a thread: a loop, not eight copies) into scratch, barrier,
// then every element read back transposed (32 scalar shared loads a thread).
// CHECK-LABEL: func.func @state_through_scratch(
// CHECK: nvvm.barrier0
// CHECK: scf.for
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK-COUNT-32: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: return
func.func @state_through_scratch(%h0: !qla.tensor<4096x64xf32>, %ht: !qla.tensor<4096x64xf32>)
    attributes {qla.kernel, qla.grid = array<i64: 1, 1, 1>, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 17408 : i64} {
  %row = qla.block_id 0
  %c0 = arith.constant 0 : index
  %s = qla.copy %h0[%row, %c0] {transpose, qla.scratch_offset = 0 : i64} : !qla.tensor<4096x64xf32> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  qla.store %s, %ht[%row, %c0] : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>, !qla.tensor<4096x64xf32>
  return
}

// A store of a 2-byte accumulator fragment with scratch, not transposed: the column pairs go to scratch
// as one 4-byte store each (16 a thread), the 16-byte pieces of row r at piece index p ^ (r mod 8)
// (an xor in the addresses), then four 16-byte pieces a thread to global memory.
// CHECK-LABEL: func.func @pairs_through_scratch(
// CHECK: nvvm.barrier0
// CHECK: arith.xori
// CHECK-COUNT-16: llvm.store %{{.*}}, %{{.*}} : vector<2xbf16>, !llvm.ptr<3>
// CHECK-NOT: !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK-COUNT-4: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// CHECK-NOT: vector<8xbf16>, !llvm.ptr<1>
// CHECK: return
func.func @pairs_through_scratch(%o: !qla.tensor<?x512xbf16>)
    attributes {qla.kernel, qla.grid = array<i64: 1, 1, 1>, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 9216 : i64} {
  %c0 = arith.constant 0 : index
  %c512 = arith.constant 512 : index
  %eos = qla.block_id 0
  %t = qla.fill 1.0 : bf16 : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>
  qla.store %t, %o[%c0, %c0] bounds[%eos, %c512] {qla.scratch_offset = 0 : i64} : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>, !qla.tensor<?x512xbf16>
  return
}
