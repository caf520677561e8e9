// RUN: qla-opt %s -qla-convert-to-nvvm | FileCheck %s

// Inside a loop the thread index and the shared-memory base are read once, at the top of the body,
// through an opaque move that takes the induction variable (so LLVM cannot hoist the addresses made
// from them out of the loop); every use in the iteration shares the two reads, and the base is masked
// to its 16-byte alignment so shared accesses can still be vectorised.
// CHECK-LABEL: func.func @two_shares(
// CHECK: scf.for %[[IV:.*]] =
// CHECK-DAG: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-DAG: llvm.inline_asm {qla_per_iteration_tid} "mov.b32 $0, $1;", "=r,r,r" %[[TID]]
// CHECK-DAG: %[[BASE:.*]] = llvm.inline_asm {qla_per_iteration_smem} "mov.b32 $0, $1;", "=r,r,r"
// CHECK-NOT: llvm.inline_asm
// CHECK: arith.andi %[[BASE]], %{{.*}} : i32
// CHECK-NOT: llvm.inline_asm
// CHECK-NOT: nvvm.read.ptx.sreg.tid.x
// CHECK: arith.andi %[[BASE]], %{{.*}} : i32
// CHECK-NOT: llvm.inline_asm
// CHECK-NOT: nvvm.read.ptx.sreg.tid.x
// CHECK: return
func.func @two_shares(%A: !qla.tensor<?x64xbf16>) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 33792 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = qla.dim %A, 0 : !qla.tensor<?x64xbf16>
  qla.for %c0 to %n step %c1 {
  ^bb0(%i: index):
    %f = qla.fill 1.0 : bf16 : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>
    %a = qla.share %f {qla.smem_offset = 0 : i64} : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
    %b = qla.share %f {qla.smem_offset = 8192 : i64} : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
    qla.yield
  }
  return
}
