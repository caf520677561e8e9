// RUN: qla-opt %s -qla-convert-to-nvvm -cse | FileCheck %s

// A qla.warpgroup_local kernel (what qla-assign-layouts and qla-plan-smem leave): the gate row is held
// by each warpgroup (#qla.strided copies = 2). Its broadcast spills into the warpgroup's own copy of the
// scratch (256 bytes a copy: byte wg·256) between barriers of that warpgroup alone (named barrier
// wg + 1, 128 threads), and the in-loop transposed store (qla.scratch_per_warpgroup) stages each
// warpgroup's 64 fragment rows, the tensor's columns wg·64 .. wg·64 + 63, on the same barrier. No block
// barrier in the loop; the store after it is block-wide again.
// CHECK-LABEL: func.func @copies_per_warpgroup(
// CHECK: scf.for
// CHECK: %[[TID:.*]] = llvm.inline_asm {qla_per_iteration_tid}
// CHECK: %[[C128:.*]] = arith.constant 128 : i32
// CHECK: %[[C64:.*]] = arith.constant 64 : i32
// CHECK-NOT: nvvm.barrier0
// CHECK: %[[WG:.*]] = arith.divui %[[TID]], %[[C128]] : i32
// CHECK-NEXT: %[[C256:.*]] = arith.constant 256 : i32
// CHECK-NEXT: arith.muli %[[WG]], %[[C256]] : i32
// CHECK: %[[ID:.*]] = arith.addi %[[WG]], %{{.*}} : i32
// CHECK-NEXT: nvvm.barrier id = %[[ID]] number_of_threads = %[[C128]]
// CHECK: llvm.store %{{.*}} : f32, !llvm.ptr<3>
// CHECK: nvvm.barrier id = %[[ID]] number_of_threads = %[[C128]]
// CHECK: arith.muli %[[WG]], %[[C64]] : i32
// CHECK: nvvm.barrier id = %[[ID]] number_of_threads = %[[C128]]
// CHECK-COUNT-4: nvvm.stmatrix
// CHECK-NEXT: nvvm.barrier id = %[[ID]] number_of_threads = %[[C128]]
// CHECK-NOT: nvvm.barrier0
// CHECK: llvm.store %{{.*}} : vector<8xbf16>, !llvm.ptr<1>
// CHECK-NOT: nvvm.barrier id
// CHECK: nvvm.read.ptx.sreg.tid.x
// CHECK-NOT: nvvm.barrier id
// CHECK: nvvm.barrier0
// CHECK: nvvm.stmatrix
// CHECK: nvvm.barrier0
func.func @copies_per_warpgroup(%g: !qla.tensor<1x64xf32>, %o: !qla.tensor<4096x128xbf16>)
    attributes {qla.block = array<i64: 256, 1, 1>, qla.kernel, qla.smem_bytes = 17920 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %r = qla.copy %g[%c0, %c0] : !qla.tensor<1x64xf32> -> !qla.tile<1x64xf32, frag, #qla.strided<threads = 128, copies = 2>>
    %b = qla.broadcast %r {dims = array<i64: 0, 1>, qla.scratch_offset = 0 : i64} : !qla.tile<1x64xf32, frag, #qla.strided<threads = 128, copies = 2>> -> !qla.tile<128x64xf32, frag, #qla.wgmma_acc<warpgroups = 2>>
    %h = qla.map %b : !qla.tile<128x64xf32, frag, #qla.wgmma_acc<warpgroups = 2>> -> !qla.tile<128x64xbf16, frag, #qla.wgmma_acc<warpgroups = 2>> {
    ^bb0(%a: f32):
      %t = arith.truncf %a : f32 to bf16
      qla.yield %t : bf16
    }
    qla.store %h, %o[%i, %c0] {qla.scratch_offset = 512 : i64, qla.scratch_per_warpgroup, transpose} : !qla.tile<128x64xbf16, frag, #qla.wgmma_acc<warpgroups = 2>>, !qla.tensor<4096x128xbf16>
  }
  %z = qla.fill 1.0 : bf16 : !qla.tile<128x64xbf16, frag, #qla.wgmma_acc<warpgroups = 2>>
  qla.store %z, %o[%c0, %c0] {qla.scratch_offset = 0 : i64, transpose} : !qla.tile<128x64xbf16, frag, #qla.wgmma_acc<warpgroups = 2>>, !qla.tensor<4096x128xbf16>
  return
}
