// RUN: qla-opt %s -allow-unregistered-dialect -qla-pipeline -cse -split-input-file | FileCheck %s

// -cse only merges the pass's constants into the ones defined at the top of each kernel, so that the
// checks below can name them ("test.keep" keeps those alive until then).

// Three warpgroups, four stages, a loop from 64 to 640 step 64 (nine iterations): every number the
// pass derives differs from the others.
// CHECK-LABEL: func.func @three_warpgroups_four_stages(
// CHECK-SAME: %[[A:[^:]*]]: !qla.tensor<1000x640xbf16>, %[[B:[^:]*]]: !qla.tensor<512x640xbf16>, %[[C:[^:]*]]: !qla.tensor<1000x512xf32>)
func.func @three_warpgroups_four_stages(%A: !qla.tensor<1000x640xbf16>, %B: !qla.tensor<512x640xbf16>,
                                        %C: !qla.tensor<1000x512xf32>)
    attributes {qla.kernel, qla.grid = array<i64: 4, 6, 1>, qla.block = array<i64: 384, 1, 1>} {
  // CHECK: %[[C0:.*]] = arith.constant 0 : index
  // CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
  // CHECK-NEXT: %[[C2:.*]] = arith.constant 2 : index
  // CHECK-NEXT: %[[C3:.*]] = arith.constant 3 : index
  // CHECK-NEXT: %[[C4:.*]] = arith.constant 4 : index
  // CHECK-NEXT: %[[C64:.*]] = arith.constant 64 : index
  // CHECK-NEXT: %[[C128:.*]] = arith.constant 128 : index
  // CHECK-NEXT: %[[C192:.*]] = arith.constant 192 : index
  // CHECK-NEXT: %[[C640:.*]] = arith.constant 640 : index
  // CHECK-NEXT: %[[TX:.*]] = arith.constant 40960 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c192 = arith.constant 192 : index
  %c640 = arith.constant 640 : index
  %c40960 = arith.constant 40960 : index  // 192x64 + 128x64 bf16 = 24576 + 16384 bytes per stage
  "test.keep"(%c0, %c1, %c2, %c3, %c4, %c40960) : (index, index, index, index, index, index) -> ()
  %bx = qla.block_id 0
  %by = qla.block_id 1
  // CHECK-NEXT: "test.keep"
  // CHECK: %[[M0:.*]] = arith.muli %{{.*}}, %[[C192]] : index
  // CHECK-NEXT: %[[N0:.*]] = arith.muli %{{.*}}, %[[C128]] : index
  // CHECK-NEXT: %[[ACC0:.*]] = qla.fill
  %m0 = arith.muli %by, %c192 : index
  %n0 = arith.muli %bx, %c128 : index
  %acc0 = qla.fill 0.0 : f32 : !qla.tile<192x128xf32, frag>

  // Two rings of `stages` mbarriers (full, empty) and one ring of `stages` slots per copy.
  // CHECK-NEXT: %[[FULL:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 4>
  // CHECK-NEXT: %[[EMPTY:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 4>
  // CHECK-NEXT: %[[RA:.*]] = qla.smem_alloc : !qla.tile<4x192x64xbf16, smem>
  // CHECK-NEXT: %[[RB:.*]] = qla.smem_alloc : !qla.tile<4x128x64xbf16, smem>
  // Thread 0 issues TMA; thread 0 of each warpgroup releases slots; trip count = ceil((ub - lb) / step).
  // CHECK-NEXT: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
  // CHECK-NEXT: %[[TIDX:.*]] = arith.index_castui %[[TID]] : i32 to index
  // CHECK-NEXT: %[[LEADER:.*]] = arith.cmpi eq, %[[TIDX]], %[[C0]] : index
  // CHECK-NEXT: %[[INWG:.*]] = arith.remui %[[TIDX]], %[[C128]] : index
  // CHECK-NEXT: %[[WGLEADER:.*]] = arith.cmpi eq, %[[INWG]], %[[C0]] : index
  // CHECK-NEXT: %[[SPAN:.*]] = arith.subi %[[C640]], %[[C64]] : index
  // CHECK-NEXT: %[[TRIPS:.*]] = arith.ceildivsi %[[SPAN]], %[[C64]] : index

  // Barrier init by thread 0: full[s] expects 1 arrival (the expect_tx), empty[s] one per warpgroup (3).
  // CHECK-NEXT: scf.if %[[LEADER]] {
  // CHECK-NEXT: nvgpu.mbarrier.init %[[FULL]][%[[C0]]], %[[C1]] :
  // CHECK-NEXT: nvgpu.mbarrier.init %[[EMPTY]][%[[C0]]], %[[C3]] :
  // CHECK-NEXT: nvgpu.mbarrier.init %[[FULL]][%[[C1]]], %[[C1]] :
  // CHECK-NEXT: nvgpu.mbarrier.init %[[EMPTY]][%[[C1]]], %[[C3]] :
  // CHECK-NEXT: nvgpu.mbarrier.init %[[FULL]][%[[C2]]], %[[C1]] :
  // CHECK-NEXT: nvgpu.mbarrier.init %[[EMPTY]][%[[C2]]], %[[C3]] :
  // CHECK-NEXT: nvgpu.mbarrier.init %[[FULL]][%[[C3]]], %[[C1]] :
  // CHECK-NEXT: nvgpu.mbarrier.init %[[EMPTY]][%[[C3]]], %[[C3]] :
  // CHECK-NEXT: nvvm.fence.mbarrier.init
  // CHECK-NEXT: }
  // CHECK-NEXT: nvvm.barrier0

  // Prologue: iteration s (iv = lb + s * step) into slot s, if s < trip count; expect_tx = 40960 bytes.
  // CHECK-NEXT: %[[IN0:.*]] = arith.cmpi slt, %[[C0]], %[[TRIPS]] : index
  // CHECK-NEXT: %[[GO0:.*]] = arith.andi %[[LEADER]], %[[IN0]] : i1
  // CHECK-NEXT: scf.if %[[GO0]] {
  // CHECK-NEXT: %[[X0:.*]] = arith.muli %[[C0]], %[[C64]] : index
  // CHECK-NEXT: %[[IV0:.*]] = arith.addi %[[C64]], %[[X0]] : index
  // CHECK-NEXT: nvgpu.mbarrier.arrive.expect_tx %[[FULL]][%[[C0]]], %[[TX]] :
  // CHECK-NEXT: %[[SA0:.*]] = qla.slot %[[RA]][%[[C0]]] : !qla.tile<4x192x64xbf16, smem> -> !qla.tile<192x64xbf16, smem>
  // CHECK-NEXT: qla.tma_load %[[A]][%[[M0]], %[[IV0]]], %[[SA0]], %[[FULL]][%[[C0]]] : !qla.tensor<1000x640xbf16>, !qla.tile<192x64xbf16, smem>,
  // CHECK-NEXT: %[[SB0:.*]] = qla.slot %[[RB]][%[[C0]]] : !qla.tile<4x128x64xbf16, smem> -> !qla.tile<128x64xbf16, smem>
  // CHECK-NEXT: qla.tma_load %[[B]][%[[N0]], %[[IV0]]], %[[SB0]], %[[FULL]][%[[C0]]] : !qla.tensor<512x640xbf16>, !qla.tile<128x64xbf16, smem>,
  // CHECK-NEXT: }
  // CHECK-NEXT: %[[IN1:.*]] = arith.cmpi slt, %[[C1]], %[[TRIPS]] : index
  // CHECK-NEXT: %[[GO1:.*]] = arith.andi %[[LEADER]], %[[IN1]] : i1
  // CHECK-NEXT: scf.if %[[GO1]] {
  // CHECK-NEXT: %[[X1:.*]] = arith.muli %[[C1]], %[[C64]] : index
  // CHECK-NEXT: %[[IV1:.*]] = arith.addi %[[C64]], %[[X1]] : index
  // CHECK-NEXT: nvgpu.mbarrier.arrive.expect_tx %[[FULL]][%[[C1]]], %[[TX]] :
  // CHECK-NEXT: %[[SA1:.*]] = qla.slot %[[RA]][%[[C1]]]
  // CHECK-NEXT: qla.tma_load %[[A]][%[[M0]], %[[IV1]]], %[[SA1]], %[[FULL]][%[[C1]]]
  // CHECK-NEXT: %[[SB1:.*]] = qla.slot %[[RB]][%[[C1]]]
  // CHECK-NEXT: qla.tma_load %[[B]][%[[N0]], %[[IV1]]], %[[SB1]], %[[FULL]][%[[C1]]]
  // CHECK-NEXT: }
  // CHECK-NEXT: %[[IN2:.*]] = arith.cmpi slt, %[[C2]], %[[TRIPS]] : index
  // CHECK-NEXT: %[[GO2:.*]] = arith.andi %[[LEADER]], %[[IN2]] : i1
  // CHECK-NEXT: scf.if %[[GO2]] {
  // CHECK-NEXT: %[[X2:.*]] = arith.muli %[[C2]], %[[C64]] : index
  // CHECK-NEXT: %[[IV2:.*]] = arith.addi %[[C64]], %[[X2]] : index
  // CHECK-NEXT: nvgpu.mbarrier.arrive.expect_tx %[[FULL]][%[[C2]]], %[[TX]] :
  // CHECK-NEXT: %[[SA2:.*]] = qla.slot %[[RA]][%[[C2]]]
  // CHECK-NEXT: qla.tma_load %[[A]][%[[M0]], %[[IV2]]], %[[SA2]], %[[FULL]][%[[C2]]]
  // CHECK-NEXT: %[[SB2:.*]] = qla.slot %[[RB]][%[[C2]]]
  // CHECK-NEXT: qla.tma_load %[[B]][%[[N0]], %[[IV2]]], %[[SB2]], %[[FULL]][%[[C2]]]
  // CHECK-NEXT: }
  // CHECK-NEXT: %[[IN3:.*]] = arith.cmpi slt, %[[C3]], %[[TRIPS]] : index
  // CHECK-NEXT: %[[GO3:.*]] = arith.andi %[[LEADER]], %[[IN3]] : i1
  // CHECK-NEXT: scf.if %[[GO3]] {
  // CHECK-NEXT: %[[X3:.*]] = arith.muli %[[C3]], %[[C64]] : index
  // CHECK-NEXT: %[[IV3:.*]] = arith.addi %[[C64]], %[[X3]] : index
  // CHECK-NEXT: nvgpu.mbarrier.arrive.expect_tx %[[FULL]][%[[C3]]], %[[TX]] :
  // CHECK-NEXT: %[[SA3:.*]] = qla.slot %[[RA]][%[[C3]]]
  // CHECK-NEXT: qla.tma_load %[[A]][%[[M0]], %[[IV3]]], %[[SA3]], %[[FULL]][%[[C3]]]
  // CHECK-NEXT: %[[SB3:.*]] = qla.slot %[[RB]][%[[C3]]]
  // CHECK-NEXT: qla.tma_load %[[B]][%[[N0]], %[[IV3]]], %[[SB3]], %[[FULL]][%[[C3]]]
  // CHECK-NEXT: }
  // No fifth prologue load.
  // CHECK-NOT: arith.cmpi slt, %[[C4]], %[[TRIPS]]

  // Steady state: iteration i = (iv - lb) / step waits on full[i % 4] with parity (i / 4) % 2.
  // CHECK-NEXT: %[[RES:.*]] = scf.for %[[IV:.*]] = %[[C64]] to %[[C640]] step %[[C64]] iter_args(%[[ACC:.*]] = %[[ACC0]]) -> (!qla.tile<192x128xf32, frag>) {
  // CHECK-NEXT: %[[D:.*]] = arith.subi %[[IV]], %[[C64]] : index
  // CHECK-NEXT: %[[ITER:.*]] = arith.divsi %[[D]], %[[C64]] : index
  // CHECK-NEXT: %[[SLOT:.*]] = arith.remui %[[ITER]], %[[C4]] : index
  // CHECK-NEXT: %[[ROUND:.*]] = arith.divui %[[ITER]], %[[C4]] : index
  // CHECK-NEXT: %[[PHASE:.*]] = arith.remui %[[ROUND]], %[[C2]] : index
  // CHECK-NEXT: %[[PARITY:.*]] = arith.index_cast %[[PHASE]] : index to i1
  // CHECK-NEXT: %[[TICKS:.*]] = arith.constant 10000000 : index
  // CHECK-NEXT: nvgpu.mbarrier.try_wait.parity %[[FULL]][%[[SLOT]]], %[[PARITY]], %[[TICKS]] :
  // CHECK-NEXT: %[[SA:.*]] = qla.slot %[[RA]][%[[SLOT]]] : !qla.tile<4x192x64xbf16, smem> -> !qla.tile<192x64xbf16, smem>
  // CHECK-NEXT: %[[SB:.*]] = qla.slot %[[RB]][%[[SLOT]]] : !qla.tile<4x128x64xbf16, smem> -> !qla.tile<128x64xbf16, smem>
  // The gemm becomes asynchronous; one wgmma group (this iteration's) stays in flight.
  // CHECK-NEXT: %[[R:.*]] = qla.gemm %[[SA]], %[[SB]], %[[ACC]] {async, transpose_b}
  // CHECK-NEXT: qla.async_wait 1
  // Iteration i-1's gemms have retired: each warpgroup leader arrives on empty[(i-1) % 4] (from i = 1 on).
  // CHECK-NEXT: %[[PREV:.*]] = arith.subi %[[ITER]], %[[C1]] : index
  // CHECK-NEXT: %[[PSLOT:.*]] = arith.remui %[[PREV]], %[[C4]] : index
  // CHECK-NEXT: %[[HASPREV:.*]] = arith.cmpi sgt, %[[ITER]], %[[C0]] : index
  // CHECK-NEXT: %[[RELEASE:.*]] = arith.andi %[[HASPREV]], %[[WGLEADER]] : i1
  // CHECK-NEXT: scf.if %[[RELEASE]] {
  // CHECK-NEXT: nvgpu.mbarrier.arrive %[[EMPTY]][%[[PSLOT]]] :
  // CHECK-NEXT: }
  // Thread 0 refills that slot with iteration i-1+4 once empty[(i-1) % 4] completes phase ((i-1) / 4) % 2.
  // CHECK-NEXT: %[[NEXT:.*]] = arith.addi %[[PREV]], %[[C4]] : index
  // CHECK-NEXT: %[[NEXTIN:.*]] = arith.cmpi slt, %[[NEXT]], %[[TRIPS]] : index
  // CHECK-NEXT: %[[T:.*]] = arith.andi %[[HASPREV]], %[[NEXTIN]] : i1
  // CHECK-NEXT: %[[REFILL:.*]] = arith.andi %[[LEADER]], %[[T]] : i1
  // CHECK-NEXT: scf.if %[[REFILL]] {
  // CHECK-NEXT: %[[PROUND:.*]] = arith.divui %[[PREV]], %[[C4]] : index
  // CHECK-NEXT: %[[PPHASE:.*]] = arith.remui %[[PROUND]], %[[C2]] : index
  // CHECK-NEXT: %[[PPARITY:.*]] = arith.index_cast %[[PPHASE]] : index to i1
  // CHECK-NEXT: nvgpu.mbarrier.try_wait.parity %[[EMPTY]][%[[PSLOT]]], %[[PPARITY]], %[[TICKS]] :
  // CHECK-NEXT: %[[Y:.*]] = arith.muli %[[NEXT]], %[[C64]] : index
  // CHECK-NEXT: %[[NIV:.*]] = arith.addi %[[C64]], %[[Y]] : index
  // CHECK-NEXT: nvgpu.mbarrier.arrive.expect_tx %[[FULL]][%[[PSLOT]]], %[[TX]] :
  // CHECK-NEXT: %[[NA:.*]] = qla.slot %[[RA]][%[[PSLOT]]]
  // CHECK-NEXT: qla.tma_load %[[A]][%[[M0]], %[[NIV]]], %[[NA]], %[[FULL]][%[[PSLOT]]]
  // CHECK-NEXT: %[[NB:.*]] = qla.slot %[[RB]][%[[PSLOT]]]
  // CHECK-NEXT: qla.tma_load %[[B]][%[[N0]], %[[NIV]]], %[[NB]], %[[FULL]][%[[PSLOT]]]
  // CHECK-NEXT: }
  // CHECK-NEXT: scf.yield %[[R]] : !qla.tile<192x128xf32, frag>
  // CHECK-NEXT: }
  // All gemms retire after the loop.
  // CHECK-NEXT: qla.async_wait 0
  // CHECK-NEXT: qla.store %[[RES]], %[[C]][%[[M0]], %[[N0]]]
  // CHECK-NOT: qla.copy
  // CHECK-NOT: qla.for
  %acc = qla.for %c64 to %c640 step %c64 iter_args(%acc0 : !qla.tile<192x128xf32, frag>) -> !qla.tile<192x128xf32, frag> {
  ^bb0(%k: index, %a_acc: !qla.tile<192x128xf32, frag>):
    %a = qla.copy %A[%m0, %k] : !qla.tensor<1000x640xbf16> -> !qla.tile<192x64xbf16, smem>
    %b = qla.copy %B[%n0, %k] : !qla.tensor<512x640xbf16> -> !qla.tile<128x64xbf16, smem>
    %r = qla.gemm %a, %b, %a_acc {transpose_b} : !qla.tile<192x64xbf16, smem>, !qla.tile<128x64xbf16, smem>, !qla.tile<192x128xf32, frag> -> !qla.tile<192x128xf32, frag>
    qla.yield %r : !qla.tile<192x128xf32, frag>
  } {stages = 4 : i64}
  qla.store %acc, %C[%m0, %n0] : !qla.tile<192x128xf32, frag>, !qla.tensor<1000x512xf32>
  return
}

// -----

// One warpgroup, two stages, offsets computed in the loop body: the offset arithmetic is cloned into
// every load with the induction variable of the iteration it loads.
// CHECK-LABEL: func.func @one_warpgroup_two_stages(
// CHECK-SAME: %[[A:[^:]*]]: !qla.tensor<64x256xf16>, %[[B:[^:]*]]: !qla.tensor<64x256xf16>
func.func @one_warpgroup_two_stages(%A: !qla.tensor<64x256xf16>, %B: !qla.tensor<64x256xf16>,
                                    %C: !qla.tensor<64x64xf32>, %n: index)
    attributes {qla.kernel, qla.grid = array<i64: 1, 1, 1>, qla.block = array<i64: 128, 1, 1>} {
  // CHECK: %[[C0:.*]] = arith.constant 0 : index
  // CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
  // CHECK-NEXT: %[[C2:.*]] = arith.constant 2 : index
  // CHECK-NEXT: %[[C32:.*]] = arith.constant 32 : index
  // CHECK-NEXT: %[[TX:.*]] = arith.constant 8192 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %c8192 = arith.constant 8192 : index // two 64x32 f16 tiles
  "test.keep"(%c2, %c8192) : (index, index) -> ()
  %acc0 = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag>
  // CHECK: %[[FULL:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
  // CHECK-NEXT: %[[EMPTY:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
  // CHECK-NEXT: %[[RA:.*]] = qla.smem_alloc : !qla.tile<2x64x32xf16, smem>
  // CHECK-NEXT: %[[RB:.*]] = qla.smem_alloc : !qla.tile<2x64x32xf16, smem>
  // CHECK: %[[TRIPS:.*]] = arith.ceildivsi %{{.*}}, %[[C1]] : index
  // One warpgroup: empty[s] expects one arrival.
  // CHECK: nvgpu.mbarrier.init %[[FULL]][%[[C0]]], %[[C1]] :
  // CHECK-NEXT: nvgpu.mbarrier.init %[[EMPTY]][%[[C0]]], %[[C1]] :
  // CHECK-NEXT: nvgpu.mbarrier.init %[[FULL]][%[[C1]]], %[[C1]] :
  // CHECK-NEXT: nvgpu.mbarrier.init %[[EMPTY]][%[[C1]]], %[[C1]] :
  // CHECK-NEXT: nvvm.fence.mbarrier.init
  // CHECK: scf.if
  // CHECK-NEXT: %[[X0:.*]] = arith.muli %[[C0]], %[[C1]] : index
  // CHECK-NEXT: %[[IV0:.*]] = arith.addi %[[C0]], %[[X0]] : index
  // CHECK-NEXT: nvgpu.mbarrier.arrive.expect_tx %[[FULL]][%[[C0]]], %[[TX]] :
  // CHECK-NEXT: %[[K0:.*]] = arith.muli %[[IV0]], %[[C32]] : index
  // CHECK-NEXT: %[[S0:.*]] = qla.slot %[[RA]][%[[C0]]]
  // CHECK-NEXT: qla.tma_load %[[A]][%[[C0]], %[[K0]]], %[[S0]], %[[FULL]][%[[C0]]]
  // CHECK-NEXT: %[[T0:.*]] = qla.slot %[[RB]][%[[C0]]]
  // CHECK-NEXT: qla.tma_load %[[B]][%[[C0]], %[[K0]]], %[[T0]], %[[FULL]][%[[C0]]]
  // CHECK-NEXT: }
  // CHECK: scf.if
  // CHECK-NEXT: %[[X1:.*]] = arith.muli %[[C1]], %[[C1]] : index
  // CHECK-NEXT: %[[IV1:.*]] = arith.addi %[[C0]], %[[X1]] : index
  // CHECK-NEXT: nvgpu.mbarrier.arrive.expect_tx %[[FULL]][%[[C1]]], %[[TX]] :
  // CHECK-NEXT: %[[K1:.*]] = arith.muli %[[IV1]], %[[C32]] : index
  // CHECK-NEXT: %[[S1:.*]] = qla.slot %[[RA]][%[[C1]]]
  // CHECK-NEXT: qla.tma_load %[[A]][%[[C0]], %[[K1]]], %[[S1]], %[[FULL]][%[[C1]]]
  // CHECK: scf.for %[[IV:.*]] = %[[C0]] to %{{.*}} step %[[C1]]
  // CHECK: %[[SLOT:.*]] = arith.remui %[[ITER:.*]], %[[C2]] : index
  // CHECK-NEXT: %[[ROUND:.*]] = arith.divui %[[ITER]], %[[C2]] : index
  // CHECK-NEXT: %[[PHASE:.*]] = arith.remui %[[ROUND]], %[[C2]] : index
  // CHECK: nvgpu.mbarrier.try_wait.parity %[[FULL]][%[[SLOT]]]
  // The body's own offset arithmetic stays (CSE would drop it later if unused).
  // CHECK: qla.gemm {{.*}} {async, transpose_b}
  // CHECK-NEXT: qla.async_wait 1
  // CHECK: arith.addi %{{.*}}, %[[C2]] : index
  // CHECK: nvgpu.mbarrier.arrive.expect_tx %[[FULL]][%[[PSLOT:.*]]], %[[TX]]
  // CHECK-NEXT: %[[KN:.*]] = arith.muli %{{.*}}, %[[C32]] : index
  // CHECK-NEXT: qla.slot %[[RA]][%[[PSLOT]]]
  // CHECK-NEXT: qla.tma_load %[[A]][%[[C0]], %[[KN]]]
  // CHECK: qla.async_wait 0
  %acc = qla.for %c0 to %n step %c1 iter_args(%acc0 : !qla.tile<64x64xf32, frag>) -> !qla.tile<64x64xf32, frag> {
  ^bb0(%k: index, %a_acc: !qla.tile<64x64xf32, frag>):
    %k0 = arith.muli %k, %c32 : index
    %a = qla.copy %A[%c0, %k0] : !qla.tensor<64x256xf16> -> !qla.tile<64x32xf16, smem>
    %b = qla.copy %B[%c0, %k0] : !qla.tensor<64x256xf16> -> !qla.tile<64x32xf16, smem>
    %r = qla.gemm %a, %b, %a_acc {transpose_b} : !qla.tile<64x32xf16, smem>, !qla.tile<64x32xf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
    qla.yield %r : !qla.tile<64x64xf32, frag>
  } {stages = 2 : i64}
  qla.store %acc, %C[%c0, %c0] : !qla.tile<64x64xf32, frag>, !qla.tensor<64x64xf32>
  return
}

// -----

// A loop without copies is left alone.
// CHECK-LABEL: func.func @no_copies(
// CHECK-NOT: nvgpu.mbarrier.create
// CHECK: qla.for
// CHECK: } {stages = 3 : i64}
func.func @no_copies(%C: !qla.tensor<64x64xf32>, %n: index) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %acc0 = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag>
  %acc = qla.for %c0 to %n step %c1 iter_args(%acc0 : !qla.tile<64x64xf32, frag>) -> !qla.tile<64x64xf32, frag> {
  ^bb0(%k: index, %a_acc: !qla.tile<64x64xf32, frag>):
    qla.yield %a_acc : !qla.tile<64x64xf32, frag>
  } {stages = 3 : i64}
  qla.store %acc, %C[%c0, %c0] : !qla.tile<64x64xf32, frag>, !qla.tensor<64x64xf32>
  return
}

// -----

// A body that reads a gemm result elementwise (a recurrence, not a K loop): its gemms stay synchronous
// (qla-overlap-gemms places their waits later), and at the end of each iteration every gemm is waited
// for, each warpgroup's thread 0 releases this iteration's slot, and thread 0 refills it for iteration
// iter + stages once empty[slot] completes (this iteration's parity).
// CHECK-LABEL: func.func @recurrence_body(
// CHECK: scf.for
// CHECK: nvgpu.mbarrier.try_wait.parity %[[FULL:[0-9]+]][%[[SLOT:[0-9]+]]], %[[PARITY:[0-9]+]],
// CHECK: qla.slot
// CHECK: qla.gemm
// CHECK-NOT: async
// CHECK: qla.map
// CHECK: qla.async_wait 0
// CHECK-NEXT: scf.if
// CHECK-NEXT: nvgpu.mbarrier.arrive %[[EMPTY:[0-9]+]][%[[SLOT]]]
// CHECK: %[[NEXT:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: scf.if
// CHECK-NEXT: nvgpu.mbarrier.try_wait.parity %[[EMPTY]][%[[SLOT]]], %[[PARITY]],
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[FULL]][%[[SLOT]]]
// CHECK: qla.tma_load
// CHECK: scf.yield
// CHECK-NOT: qla.async_wait 1
func.func @recurrence_body(%A: !qla.tensor<4096x64xbf16>, %n: index)
    attributes {qla.kernel, qla.grid = array<i64: 1, 1, 1>, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %h0 = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag>
  %r = qla.for %c0 to %n step %c1 iter_args(%h0 : !qla.tile<64x64xf32, frag>) -> !qla.tile<64x64xf32, frag> {
  ^bb0(%i: index, %hh: !qla.tile<64x64xf32, frag>):
    %row = arith.muli %i, %c64 : index
    %a = qla.copy %A[%row, %c0] : !qla.tensor<4096x64xbf16> -> !qla.tile<64x64xbf16, smem>
    %x = qla.gemm %a, %a, %hh {transpose_b} : !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
    %y = qla.map %x : !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag> {
    ^bb0(%e: f32):
      %d = arith.mulf %e, %e : f32
      qla.yield %d : f32
    }
    qla.yield %y : !qla.tile<64x64xf32, frag>
  } {stages = 2 : i64}
  "test.keep"(%r) : (!qla.tile<64x64xf32, frag>) -> ()
  return
}
