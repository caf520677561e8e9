// RUN: qla-opt %s -qla-convert-to-nvvm -cse | FileCheck %s

// qla.warpgroup_turn on two warpgroups (what qla-order-warpgroups leaves): the turns' named barriers are
// 3 + wg (after qla.warpgroup_local's 1 and 2), 256 threads each (the waiting warpgroup and the passing
// one). Before the loop the last warpgroup (1) arrives at 3; in the loop each run of gemms waits at
// 3 + wg and, after its commit, arrives at 3 + (wg + 1) mod 2; after the loop warpgroup 0 waits at 3.
// CHECK-LABEL: func.func @two_runs(
// CHECK: %[[WG:.*]] = arith.divui %{{.*}}, %[[C128:.*]] : i32
// CHECK: %[[LAST:.*]] = arith.cmpi eq, %[[WG]], %c1_i32 : i32
// CHECK-NEXT: scf.if %[[LAST]] {
// CHECK: %[[FIRST_ID:.*]] = arith.addi %[[C3:.*]], %c0_i32{{.*}} : i32
// CHECK-NEXT: nvvm.barrier.arrive id = %[[FIRST_ID]] number_of_threads = %[[C256:.*]]
// CHECK: scf.for
// CHECK: %[[LWG:.*]] = arith.divui %{{.*}}, %[[C128]] : i32
// CHECK-NEXT: %[[MINE:.*]] = arith.addi %[[C3]], %[[LWG]] : i32
// CHECK-NEXT: nvvm.barrier id = %[[MINE]] number_of_threads = %[[C256]]
// CHECK-COUNT-2: nvvm.wgmma.commit.group.sync.aligned
// CHECK: %[[NEXT:.*]] = arith.addi %[[LWG]], %c1_i32 : i32
// CHECK: %[[MOD:.*]] = arith.remui %[[NEXT]], %c2_i32 : i32
// CHECK-NEXT: %[[THEIRS:.*]] = arith.addi %[[C3]], %[[MOD]] : i32
// CHECK-NEXT: nvvm.barrier.arrive id = %[[THEIRS]] number_of_threads = %[[C256]]
// CHECK: nvvm.barrier id = %[[MINE]] number_of_threads = %[[C256]]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.barrier.arrive id = %[[THEIRS]] number_of_threads = %[[C256]]
// CHECK: %[[ZERO:.*]] = arith.cmpi eq, %[[WG]], %c0_i32 : i32
// CHECK-NEXT: scf.if %[[ZERO]] {
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %[[C256]]
  func.func @two_runs() attributes {qla.block = array<i64: 256, 1, 1>, qla.kernel, qla.smem_bytes = 9216 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %0 = qla.smem_alloc {offset = 0 : i64} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
    %1 = qla.fill 0.000000e+00 : f32 : !qla.tile<128x64xf32, frag, #qla.wgmma_acc<warpgroups = 2>>
    %2 = qla.fill 1.000000e+00 : bf16 : !qla.tile<128x64xbf16, frag, #qla.wgmma_acc<warpgroups = 2>>
    qla.warpgroup_turn "begin"
    %3 = scf.for %arg0 = %c0 to %c4 step %c1 iter_args(%arg1 = %2) -> (!qla.tile<128x64xbf16, frag, #qla.wgmma_acc<warpgroups = 2>>) {
      qla.warpgroup_turn "wait"
      %4 = qla.gemm %arg1, %0, %1 {async, transpose_b} : !qla.tile<128x64xbf16, frag, #qla.wgmma_acc<warpgroups = 2>>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<128x64xf32, frag, #qla.wgmma_acc<warpgroups = 2>> -> !qla.tile<128x64xf32, frag, #qla.wgmma_acc<warpgroups = 2>>
      %5 = qla.gemm %arg1, %0, %4 {async, transpose_b} : !qla.tile<128x64xbf16, frag, #qla.wgmma_acc<warpgroups = 2>>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<128x64xf32, frag, #qla.wgmma_acc<warpgroups = 2>> -> !qla.tile<128x64xf32, frag, #qla.wgmma_acc<warpgroups = 2>>
      qla.warpgroup_turn "pass"
      qla.async_wait 0
      %6 = qla.map %5 : !qla.tile<128x64xf32, frag, #qla.wgmma_acc<warpgroups = 2>> -> !qla.tile<128x64xbf16, frag, #qla.wgmma_acc<warpgroups = 2>> {
      ^bb0(%arg2: f32):
        %9 = arith.truncf %arg2 : f32 to bf16
        qla.yield %9 : bf16
      }
      qla.warpgroup_turn "wait"
      %7 = qla.gemm %6, %0, %1 {async, transpose_b} : !qla.tile<128x64xbf16, frag, #qla.wgmma_acc<warpgroups = 2>>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<128x64xf32, frag, #qla.wgmma_acc<warpgroups = 2>> -> !qla.tile<128x64xf32, frag, #qla.wgmma_acc<warpgroups = 2>>
      qla.warpgroup_turn "pass"
      qla.async_wait 0
      %8 = qla.map %7 : !qla.tile<128x64xf32, frag, #qla.wgmma_acc<warpgroups = 2>> -> !qla.tile<128x64xbf16, frag, #qla.wgmma_acc<warpgroups = 2>> {
      ^bb0(%arg2: f32):
        %9 = arith.truncf %arg2 : f32 to bf16
        qla.yield %9 : bf16
      }
      scf.yield %8 : !qla.tile<128x64xbf16, frag, #qla.wgmma_acc<warpgroups = 2>>
    }
    qla.warpgroup_turn "end"
    return
  }
