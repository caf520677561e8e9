// RUN: qla-opt %s -qla-convert-to-nvvm | FileCheck %s

// qla.stash parks a 64x64 f32 accumulator fragment (32 elements a thread) in 16-byte pieces, thread-major:
// one barrier (the bytes may be an earlier buffer's), then 8 stores of vector<4xf32>; qla.unstash reads
// them back with 8 loads and no barrier (each thread reads only what it wrote).
// CHECK-LABEL: func.func @stash(
// CHECK: nvvm.barrier0
// CHECK-COUNT-8: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
// CHECK-NOT: nvvm.barrier0
// CHECK-COUNT-8: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK-NOT: nvvm.barrier0
// CHECK: return
func.func @stash(%A: !qla.tensor<64x64xf32>)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 17408 : i64} {
  %c0 = arith.constant 0 : index
  %a = qla.copy %A[%c0, %c0] : !qla.tensor<64x64xf32> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  %s = qla.stash %a {qla.smem_offset = 0 : i64} : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xf32, smem>
  %b = qla.unstash %s : !qla.tile<64x64xf32, smem> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  qla.store %b, %A[%c0, %c0] : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>, !qla.tensor<64x64xf32>
  return
}
