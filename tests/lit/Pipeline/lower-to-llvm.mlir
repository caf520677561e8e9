// RUN: qla-opt %s --qla-lower-to-llvm | FileCheck %s --implicit-check-not=func.func --implicit-check-not=scf. --implicit-check-not=nvgpu. --implicit-check-not=cf. --implicit-check-not=unrealized_conversion_cast

// The whole pipeline (the same passes as Pipeline.cpp and `qlac passes`) on a 1024x768x512 GEMM with
// 128x256x64 tiles, 4 stages and 2 warpgroups: tile IR in, LLVM dialect with NVVM ops out. Nothing of
// qla, func, scf, cf or nvgpu is left (see the implicit checks), only the ABI attributes.

// 4 stages x (128x64 + 256x64) bf16 = 196608 bytes, + 1024 of alignment slack.
// CHECK: module attributes {qla.abi = {gemm = {block = array<i64: 256, 1, 1>, grid = array<i64: 3, 8, 1>, params = [
// CHECK-SAME: {box = array<i64: 64, 128>, kind = "tensormap", swizzle = 128 : i64, tensor = 0 : i64},
// CHECK-SAME: {box = array<i64: 64, 256>, kind = "tensormap", swizzle = 128 : i64, tensor = 1 : i64}], smem_bytes = 197632 : i64}}}
// Two rings of 4 mbarriers in static shared memory, and the dynamic shared memory.
// CHECK-DAG: llvm.mlir.global private @__mbarrier{{.*}}() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<4 x i64>
// CHECK-DAG: llvm.mlir.global private @__mbarrier{{.*}}() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<4 x i64>
// CHECK-DAG: llvm.mlir.global external @__qla_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK: llvm.func @gemm(%{{.*}}: !llvm.ptr<1> {qla.name = "A"}, %{{.*}}: !llvm.ptr<1> {qla.name = "B"}, %{{.*}}: !llvm.ptr<1> {qla.name = "C"}, %[[TMA:.*]]: !llvm.ptr, %[[TMB:.*]]: !llvm.ptr) {
// Barrier init: 4 full + 4 empty.
// CHECK-COUNT-8: nvvm.mbarrier.init
// CHECK-NOT: nvvm.mbarrier.init
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.barrier0
// Prologue: 4 stages, each an expect_tx and a TMA load of A and of B.
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[TMA]], %{{.*}}, box[
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[TMB]], %{{.*}}, box[
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global
// Loop: wait for the stage, 4 wgmmas (K = 64 in steps of 16) of m64n256k16 per warpgroup, in one group.
// CHECK: mbarrier.try_wait.parity.shared.b64
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// CHECK-NOT: wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// Release the previous stage, refill it.
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3> -> i64
// CHECK: mbarrier.try_wait.parity.shared.b64
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global
// After the loop: drain the wgmma groups, convert this thread's 128x256 / 256 = 128 elements to bf16
// two at a time (cvt.rn.bf16x2.f32) and store them in 64 column pairs (each with a one-element
// fallback at the right edge). The rings live to the end, so the store is not staged in scratch.
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-64: llvm.call_intrinsic "llvm.nvvm.ff2bf16x2.rn"(%{{.*}}, %{{.*}}) : (f32, f32) -> vector<2xbf16>
// CHECK-NOT: llvm.fptrunc
// CHECK-COUNT-64: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<2xbf16>, !llvm.ptr<1>
// CHECK-NOT: vector<2xbf16>, !llvm.ptr<1>
// CHECK: llvm.return
func.func @gemm(%A: !qla.tensor<1024x512xbf16> {qla.name = "A"}, %B: !qla.tensor<768x512xbf16> {qla.name = "B"},
                %C: !qla.tensor<1024x768xbf16> {qla.name = "C"})
    attributes {qla.kernel, qla.grid = array<i64: 3, 8, 1>, qla.block = array<i64: 256, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %bx = qla.block_id 0
  %by = qla.block_id 1
  %m0 = arith.muli %by, %c128 : index
  %n0 = arith.muli %bx, %c256 : index
  %acc0 = qla.fill 0.0 : f32 : !qla.tile<128x256xf32, frag>
  %acc = qla.for %c0 to %c8 step %c1 iter_args(%acc0 : !qla.tile<128x256xf32, frag>) -> !qla.tile<128x256xf32, frag> {
  ^bb0(%k: index, %a_acc: !qla.tile<128x256xf32, frag>):
    %k0 = arith.muli %k, %c64 : index
    %a = qla.copy %A[%m0, %k0] : !qla.tensor<1024x512xbf16> -> !qla.tile<128x64xbf16, smem>
    %b = qla.copy %B[%n0, %k0] : !qla.tensor<768x512xbf16> -> !qla.tile<256x64xbf16, smem>
    %r = qla.gemm %a, %b, %a_acc {transpose_b} : !qla.tile<128x64xbf16, smem>, !qla.tile<256x64xbf16, smem>, !qla.tile<128x256xf32, frag> -> !qla.tile<128x256xf32, frag>
    qla.yield %r : !qla.tile<128x256xf32, frag>
  } {stages = 4 : i64}
  %o = qla.map %acc : !qla.tile<128x256xf32, frag> -> !qla.tile<128x256xbf16, frag> {
  ^bb0(%x: f32):
    %y = arith.truncf %x : f32 to bf16
    qla.yield %y : bf16
  }
  qla.store %o, %C[%m0, %n0] : !qla.tile<128x256xbf16, frag>, !qla.tensor<1024x768xbf16>
  return
}
