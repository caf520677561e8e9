// RUN: qla-opt %s -qla-convert-to-nvvm -split-input-file | FileCheck %s

// A 16-bit accumulator fragment goes to shared memory with stmatrix: per 64-row block, four 8x8
// matrices (two 8-column blocks) an instruction, the thread's elements packed in pairs (4·nb + 2m,
// 4·nb + 2m + 1), between a barrier (earlier readers are done) and a proxy fence plus barrier (wgmma
// reads it next). 64 columns: 8 column blocks, so 4 instructions.
// CHECK-LABEL: func.func @share_rows(
// CHECK: nvvm.barrier0
// CHECK-COUNT-4: nvvm.stmatrix %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
// CHECK-NOT: nvvm.stmatrix
// CHECK-NOT: llvm.store
// CHECK: nvvm.fence.proxy
// CHECK-NEXT: nvvm.barrier0
func.func @share_rows(%A: !qla.tensor<64x64xbf16>)
    attributes {qla.kernel, qla.grid = array<i64: 1, 1, 1>, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 9216 : i64} {
  %f = qla.fill 1.0 : bf16 : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>
  %s = qla.share %f {qla.smem_offset = 0 : i64} : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  return
}

// -----

// Stored transposed (a B operand read K-major): the .trans form (layout col), the lanes addressing
// the fragment's columns. Three column blocks: one x4 and one x2; two 64-row blocks (128 rows): twice.
// CHECK-LABEL: func.func @share_transposed(
// CHECK: nvvm.stmatrix %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {{.*}}layout = #nvvm.mma_layout<col>
// CHECK: nvvm.stmatrix %{{.*}}, %{{.*}}, %{{.*}} {{.*}}layout = #nvvm.mma_layout<col>
// CHECK: nvvm.stmatrix %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {{.*}}layout = #nvvm.mma_layout<col>
// CHECK: nvvm.stmatrix %{{.*}}, %{{.*}}, %{{.*}} {{.*}}layout = #nvvm.mma_layout<col>
// CHECK-NOT: nvvm.stmatrix
func.func @share_transposed(%A: !qla.tensor<64x64xbf16>)
    attributes {qla.kernel, qla.grid = array<i64: 1, 1, 1>, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 9216 : i64} {
  %f = qla.fill 1.0 : bf16 : !qla.tile<128x24xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>
  %s = qla.share %f {qla.smem_offset = 0 : i64} : !qla.tile<128x24xbf16, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<128x24xbf16, smem, #qla.swizzle<0, transposed = true>>
  return
}

// -----

// f32 fragments have no stmatrix form: element stores.
// CHECK-LABEL: func.func @share_f32(
// CHECK-NOT: nvvm.stmatrix
// CHECK: llvm.store
func.func @share_f32(%A: !qla.tensor<64x64xbf16>)
    attributes {qla.kernel, qla.grid = array<i64: 1, 1, 1>, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 17408 : i64} {
  %f = qla.fill 1.0 : f32 : !qla.tile<64x32xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  %s = qla.share %f {qla.smem_offset = 0 : i64} : !qla.tile<64x32xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x32xf32, smem, #qla.swizzle<128>>
  return
}
