// RUN: qla-opt %s -qla-convert-to-nvvm | FileCheck %s

// Role regions of a 384-thread kernel: a producer warpgroup with 40 registers, a two-warpgroup "math"
// role with 232. The kernel starts every thread with 65536 / 384 = 170 -> 168 registers (.maxnreg, in
// qla.abi as max_registers); each region becomes a branch on the thread index that only its
// warpgroups take, starting with setmaxnreg (down to 40, up to 232). Inside "math" the thread index
// counts from the role's first thread (128), and the exchange's barriers are named barrier 2 over the
// role's 256 threads, not bar.sync 0 (the producer never reaches them).
// CHECK: qla.abi = {roles = {block = array<i64: 384, 1, 1>, grid = array<i64: 1, 1, 1>, max_registers = 168 : i64,
// CHECK-LABEL: func.func @roles(
// CHECK: %[[T0:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: arith.cmpi uge, %[[T0]], %{{.*}} : i32
// CHECK: arith.cmpi ult, %[[T0]], %{{.*}} : i32
// CHECK: scf.if
// CHECK-NEXT: nvvm.setmaxregister  decrease 40
// CHECK-NEXT: } {qla.role_group = array<i64: 0, 128, 1>}
// CHECK: %[[T1:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[FROM:.*]] = arith.constant 128 : i32
// CHECK-NEXT: arith.cmpi uge, %[[T1]], %[[FROM]] : i32
// CHECK: %[[TO:.*]] = arith.constant 384 : i32
// CHECK-NEXT: arith.cmpi ult, %[[T1]], %[[TO]] : i32
// CHECK: scf.if
// CHECK-NEXT: nvvm.setmaxregister  increase 232
// CHECK: %[[RAW:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-NEXT: %[[FIRST:.*]] = arith.constant 128 : i32
// CHECK-NEXT: arith.subi %[[RAW]], %[[FIRST]] : i32
// CHECK: %[[ID:.*]] = arith.constant 2 : i32
// CHECK-NEXT: %[[N:.*]] = arith.constant 256 : i32
// CHECK-NEXT: nvvm.barrier id = %[[ID]] number_of_threads = %[[N]]
// CHECK-NOT: nvvm.barrier0
// CHECK: } {qla.role_group = array<i64: 128, 256, 2>}
func.func @roles(%o: !qla.tensor<64x64xf32>)
    attributes {qla.kernel, qla.grid = array<i64: 1, 1, 1>, qla.block = array<i64: 384, 1, 1>, qla.smem_bytes = 17408 : i64,
                qla.roles = [#qla.role<"loads", warpgroups = 1, registers = 40, producer = true>,
                             #qla.role<"math", warpgroups = 2, registers = 232>]} {
  qla.role_region "loads" {
  }
  qla.role_region "math" {
    %c0 = arith.constant 0 : index
    %t = qla.fill 1.0 : f32 : !qla.tile<128x64xf32, frag, #qla.wgmma_acc<warpgroups = 2>>
    %r = qla.cumsum %t, 1 {qla.scratch_offset = 0 : i64} : !qla.tile<128x64xf32, frag, #qla.wgmma_acc<warpgroups = 2>>
    qla.store %r, %o[%c0, %c0] : !qla.tile<128x64xf32, frag, #qla.wgmma_acc<warpgroups = 2>>, !qla.tensor<64x64xf32>
  }
  return
}
