// RUN: qla-opt %s -qla-pipeline -split-input-file -verify-diagnostics | FileCheck %s

// A warp-specialized K loop (what qla-warp-specialize makes of a GEMM with a producer warpgroup and a
// two-warpgroup "mma" role), three stages, the loop from 0 to 10: the copies the producer puts into
// channels 0 and 1 become two rings of three slots with one pair of mbarrier rings (full: 1 arrive with
// expect_tx of 2 x 128x64 bf16 = 32768 bytes; empty: 2 arrives, one per consumer warpgroup),
// initialised by thread 0 before the role regions. The producer's first thread (thread 0 here) waits
// for each slot to be empty with the parity opposite to the iteration's ((i / 3) & 1 xor 1: a fresh
// barrier passes it), then fills it; the consumers wait for full with parity (i / 3) & 1, read the
// slots, keep one asynchronous gemm group in flight and release the previous iteration's slot.
// CHECK-LABEL: func.func @producer_and_two_consumers(
// CHECK: %[[FULL:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 3>
// CHECK-NEXT: %[[EMPTY:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 3>
// CHECK-NEXT: %[[RA:.*]] = qla.smem_alloc : !qla.tile<3x128x64xbf16, smem>
// CHECK-NEXT: %[[RB:.*]] = qla.smem_alloc : !qla.tile<3x128x64xbf16, smem>
// CHECK: scf.if
// CHECK-COUNT-3: nvgpu.mbarrier.init %[[FULL]][%{{.*}}], %[[ONE:.*]] : {{.*}}
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.barrier0
// CHECK: qla.role_region "loads" {
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x
// CHECK: %[[ISSUER:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : index
// CHECK: scf.if %[[ISSUER]] {
// CHECK: scf.for %[[IV:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[SLOT:.*]] = arith.remui %[[ITER:.*]], %[[S3:.*]] : index
// CHECK: %[[ROUND:.*]] = arith.divui %[[ITER]], %[[S3]] : index
// CHECK: %[[PHASE:.*]] = arith.remui %[[ROUND]], %{{.*}} : index
// CHECK: %[[PAR:.*]] = arith.index_cast %[[PHASE]] : index to i1
// CHECK: %[[REL:.*]] = arith.xori %[[PAR]], %true : i1
// CHECK: nvgpu.mbarrier.try_wait.parity %[[EMPTY]][%[[SLOT]]], %[[REL]]
// CHECK: %[[TX:.*]] = arith.constant 32768 : index
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[FULL]][%[[SLOT]]], %[[TX]]
// CHECK: qla.slot %[[RA]][%[[SLOT]]]
// CHECK: qla.tma_load
// CHECK: qla.slot %[[RB]][%[[SLOT]]]
// CHECK: qla.tma_load
// CHECK-NOT: qla.channel_put
// CHECK: qla.role_region "mma" {
// CHECK: scf.for {{.*}} iter_args
// CHECK: %[[CSLOT:.*]] = arith.remui
// CHECK: nvgpu.mbarrier.try_wait.parity %[[FULL]][%[[CSLOT]]]
// CHECK: %[[SA:.*]] = qla.slot %[[RA]][%[[CSLOT]]]
// CHECK: %[[SB:.*]] = qla.slot %[[RB]][%[[CSLOT]]]
// CHECK: qla.gemm %[[SA]], %[[SB]], %{{.*}} {async
// CHECK: qla.async_wait 1
// CHECK: scf.if
// CHECK-NEXT: nvgpu.mbarrier.arrive %[[EMPTY]][%{{.*}}]
// CHECK: qla.async_wait 0
// CHECK-NOT: qla.channel_get
// CHECK: return
!acc = !qla.tile<128x128xf32, frag>
func.func @producer_and_two_consumers(%A: !qla.tensor<1024x640xbf16>, %B: !qla.tensor<1024x640xbf16>)
    attributes {qla.kernel, qla.block = array<i64: 384, 1, 1>,
                qla.roles = [#qla.role<"loads", warpgroups = 1, registers = 40, producer = true>,
                             #qla.role<"mma", warpgroups = 2, registers = 232>]} {
  qla.role_region "loads" {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c10 = arith.constant 10 : index
    %c64 = arith.constant 64 : index
    qla.for %c0 to %c10 step %c1 {
    ^bb0(%k: index):
      %k0 = arith.muli %k, %c64 : index
      %a = qla.copy %A[%c0, %k0] {qla.role = "loads"} : !qla.tensor<1024x640xbf16> -> !qla.tile<128x64xbf16, smem>
      qla.channel_put %a {channel = 0 : i64} : !qla.tile<128x64xbf16, smem>
      %b = qla.copy %B[%c0, %k0] {qla.role = "loads"} : !qla.tensor<1024x640xbf16> -> !qla.tile<128x64xbf16, smem>
      qla.channel_put %b {channel = 1 : i64} : !qla.tile<128x64xbf16, smem>
    } {stages = 3 : i64}
  }
  qla.role_region "mma" {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c10 = arith.constant 10 : index
    %z = qla.fill 0.0 : f32 {qla.role = "mma"} : !acc
    %r = qla.for %c0 to %c10 step %c1 iter_args(%z : !acc) -> !acc {
    ^bb0(%k: index, %acc: !acc):
      %a = qla.channel_get {channel = 0 : i64} : !qla.tile<128x64xbf16, smem>
      %b = qla.channel_get {channel = 1 : i64} : !qla.tile<128x64xbf16, smem>
      %x = qla.gemm %a, %b, %acc {qla.role = "mma", transpose_b} : !qla.tile<128x64xbf16, smem>, !qla.tile<128x64xbf16, smem>, !acc -> !acc
      qla.yield %x : !acc
    } {stages = 3 : i64}
  }
  return
}

// -----

// A register tile from another role read by anything but a gemm operand: a clear error at the reader.
func.func @fragment_channel(%O: !qla.tensor<4096x64xf32>)
    attributes {qla.kernel, qla.block = array<i64: 256, 1, 1>,
                qla.roles = [#qla.role<"a", warpgroups = 1>, #qla.role<"b", warpgroups = 1>]} {
  qla.role_region "a" {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c10 = arith.constant 10 : index
    qla.for %c0 to %c10 step %c1 {
    ^bb0(%k: index):
      %f = qla.fill 1.0 : f32 {qla.role = "a"} : !qla.tile<64x64xf32, frag>
      qla.channel_put %f {channel = 0 : i64} : !qla.tile<64x64xf32, frag>
    } {stages = 2 : i64}
  }
  qla.role_region "b" {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c10 = arith.constant 10 : index
    qla.for %c0 to %c10 step %c1 {
    ^bb0(%k: index):
      %f = qla.channel_get {channel = 0 : i64} : !qla.tile<64x64xf32, frag>
      // expected-error @+1 {{reads a register tile of another role: only gemm operands (A or B) can, for now}}
      qla.store %f, %O[%c0, %c0] {qla.role = "b"} : !qla.tile<64x64xf32, frag>, !qla.tensor<4096x64xf32>
    } {stages = 2 : i64}
  }
  return
}

// -----

// A register tile crossing roles (what the GDN state role hands the output role each chunk): a ring of
// two 64x64 bf16 slots with its own mbarriers (full: the 128 writing threads arrive; empty: the reader's
// one warpgroup). The writer waits for the slot with the opposite parity, writes it (qla.share_into) and
// arrives; the reader waits for full where it got the tile, its gemm reads the slot, and it releases the
// slot at the end of the iteration after the gemm is done.
// CHECK-LABEL: func.func @register_tile_channel(
// CHECK: %[[FULL:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
// CHECK-NEXT: %[[EMPTY:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
// CHECK-NEXT: %[[RING:.*]] = qla.smem_alloc : !qla.tile<2x64x64xbf16, smem>
// CHECK: %[[WRITERS:.*]] = arith.constant 128 : index
// CHECK: nvgpu.mbarrier.init %[[FULL]][%{{.*}}], %[[WRITERS]]
// CHECK: qla.role_region "state" {
// CHECK: %[[T:.*]] = qla.fill
// CHECK: %[[PAR:.*]] = arith.index_cast %{{.*}} : index to i1
// CHECK: %[[REL:.*]] = arith.xori %[[PAR]], %{{.*}} : i1
// CHECK: nvgpu.mbarrier.try_wait.parity %[[EMPTY]][%[[S:.*]]], %[[REL]]
// CHECK-NEXT: %[[DST:.*]] = qla.slot %[[RING]][%[[S]]]
// CHECK-NEXT: qla.share_into %[[T]], %[[DST]]
// CHECK-NEXT: nvgpu.mbarrier.arrive %[[FULL]][%[[S]]]
// CHECK-NOT: qla.channel_put
// CHECK: qla.role_region "output" {
// CHECK: %[[RPAR:.*]] = arith.index_cast %{{.*}} : index to i1
// CHECK-NEXT: %[[C:.*]] = arith.constant 10000000 : index
// CHECK-NEXT: nvgpu.mbarrier.try_wait.parity %[[FULL]][%[[RS:.*]]], %[[RPAR]]
// CHECK-NEXT: %[[SRC:.*]] = qla.slot %[[RING]][%[[RS]]]
// CHECK: qla.gemm %[[SRC]], %{{.*}}, %{{.*}}
// CHECK: qla.async_wait 0
// CHECK: scf.if
// CHECK-NEXT: nvgpu.mbarrier.arrive %[[EMPTY]][%[[RS]]]
// CHECK-NOT: qla.channel_get
// CHECK: return
func.func @register_tile_channel(%X: !qla.tensor<4096x64xbf16>, %O: !qla.tensor<4096x64xf32>, %n: index)
    attributes {qla.kernel, qla.block = array<i64: 256, 1, 1>,
                qla.roles = [#qla.role<"state", warpgroups = 1>, #qla.role<"output", warpgroups = 1>]} {
  qla.role_region "state" {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    qla.for %c0 to %n step %c1 {
    ^bb0(%i: index):
      %t = qla.fill 1.0 : bf16 {qla.role = "state"} : !qla.tile<64x64xbf16, frag>
      qla.channel_put %t {channel = 0 : i64} : !qla.tile<64x64xbf16, frag>
    } {stages = 2 : i64}
  }
  qla.role_region "output" {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    qla.for %c0 to %n step %c1 {
    ^bb0(%i: index):
      %g = qla.channel_get {channel = 0 : i64} : !qla.tile<64x64xbf16, frag>
      %z = qla.fill 0.0 : f32 {qla.role = "output"} : !qla.tile<64x64xf32, frag>
      %row = arith.muli %i, %c64 : index
      %b = qla.copy %X[%row, %c0] {qla.role = "output"} : !qla.tensor<4096x64xbf16> -> !qla.tile<64x64xbf16, smem>
      %y = qla.gemm %g, %b, %z {qla.role = "output", transpose_b} : !qla.tile<64x64xbf16, frag>, !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
      qla.store %y, %O[%row, %c0] {qla.role = "output"} : !qla.tile<64x64xf32, frag>, !qla.tensor<4096x64xf32>
    } {stages = 2 : i64}
  }
  return
}

// -----

// A tile the writing role shares (qla.share) and puts (what the fused GDN forward's aux role hands the
// state role: a gemm's B operand, which the DSL makes shared where it is built): the share's register
// tile is written into the ring's slot in its place and the share goes; the reader's gemm reads the slot.
// CHECK-LABEL: func.func @shared_tile_channel(
// CHECK: %[[RING:.*]] = qla.smem_alloc : !qla.tile<2x64x64xbf16, smem>
// CHECK: qla.role_region "aux" {
// CHECK: %[[T:.*]] = qla.fill
// CHECK-NOT: qla.share %
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK-NEXT: %[[DST:.*]] = qla.slot %[[RING]][%{{.*}}]
// CHECK-NEXT: qla.share_into %[[T]], %[[DST]]
// CHECK-NEXT: nvgpu.mbarrier.arrive
// CHECK-NOT: qla.channel_put
// CHECK: qla.role_region "state" {
// CHECK: %[[SRC:.*]] = qla.slot %[[RING]][%{{.*}}]
// CHECK: qla.gemm %{{.*}}, %[[SRC]], %{{.*}}
// CHECK-NOT: qla.channel_get
// CHECK: return
func.func @shared_tile_channel(%X: !qla.tensor<4096x64xbf16>, %O: !qla.tensor<4096x64xf32>, %n: index)
    attributes {qla.kernel, qla.block = array<i64: 256, 1, 1>,
                qla.roles = [#qla.role<"aux", warpgroups = 1>, #qla.role<"state", warpgroups = 1>]} {
  qla.role_region "aux" {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    qla.for %c0 to %n step %c1 {
    ^bb0(%i: index):
      %t = qla.fill 1.0 : bf16 {qla.role = "aux"} : !qla.tile<64x64xbf16, frag>
      %s = qla.share %t {qla.role = "aux"} : !qla.tile<64x64xbf16, frag> -> !qla.tile<64x64xbf16, smem>
      qla.channel_put %s {channel = 0 : i64} : !qla.tile<64x64xbf16, smem>
    } {stages = 2 : i64}
  }
  qla.role_region "state" {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    qla.for %c0 to %n step %c1 {
    ^bb0(%i: index):
      %g = qla.channel_get {channel = 0 : i64} : !qla.tile<64x64xbf16, smem>
      %z = qla.fill 0.0 : f32 {qla.role = "state"} : !qla.tile<64x64xf32, frag>
      %row = arith.muli %i, %c64 : index
      %a = qla.copy %X[%row, %c0] {qla.role = "state"} : !qla.tensor<4096x64xbf16> -> !qla.tile<64x64xbf16, smem>
      %y = qla.gemm %a, %g, %z {qla.role = "state", transpose_b} : !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
      qla.store %y, %O[%row, %c0] {qla.role = "state"} : !qla.tile<64x64xf32, frag>, !qla.tensor<4096x64xf32>
    } {stages = 2 : i64}
  }
  return
}

// -----

// A loop that reads a producer's copies and relays a shared tile that is neither a copy nor a share
// (here the slot it got): a clear error, before any loop is rewritten (rewriting the reader first would
// leave the checks looking at an erased loop: a crash before).
func.func @relayed_shared_tile(%X: !qla.tensor<4096x64xbf16>, %O: !qla.tensor<4096x64xf32>, %n: index)
    attributes {qla.kernel, qla.block = array<i64: 384, 1, 1>,
                qla.roles = [#qla.role<"loads", warpgroups = 1, registers = 0, producer = true>, #qla.role<"aux", warpgroups = 1>,
                             #qla.role<"state", warpgroups = 1>]} {
  qla.role_region "loads" {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    qla.for %c0 to %n step %c1 {
    ^bb0(%i: index):
      %row = arith.muli %i, %c64 : index
      %a = qla.copy %X[%row, %c0] {qla.role = "loads"} : !qla.tensor<4096x64xbf16> -> !qla.tile<64x64xbf16, smem>
      qla.channel_put %a {channel = 0 : i64} : !qla.tile<64x64xbf16, smem>
    } {stages = 2 : i64}
  }
  qla.role_region "aux" {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    qla.for %c0 to %n step %c1 {
    ^bb0(%i: index):
      // expected-error @+1 {{the producer's loop may only compute offsets and put copies into channels for now}}
      %g = qla.channel_get {channel = 0 : i64} : !qla.tile<64x64xbf16, smem>
      qla.channel_put %g {channel = 1 : i64} : !qla.tile<64x64xbf16, smem>
    } {stages = 2 : i64}
  }
  qla.role_region "state" {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    qla.for %c0 to %n step %c1 {
    ^bb0(%i: index):
      %g = qla.channel_get {channel = 1 : i64} : !qla.tile<64x64xbf16, smem>
      %z = qla.fill 0.0 : f32 {qla.role = "state"} : !qla.tile<64x64xf32, frag>
      %y = qla.gemm %g, %g, %z {qla.role = "state", transpose_b} : !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
      %row = arith.muli %i, %c64 : index
      qla.store %y, %O[%row, %c0] {qla.role = "state"} : !qla.tile<64x64xf32, frag>, !qla.tensor<4096x64xf32>
    } {stages = 2 : i64}
  }
  return
}

// -----

// A producer's slot that a consumer role reads with qla.read (plain shared-memory loads: a wgmma wait no
// longer covers every read of it): every consumer's warps release the slots one by one, so empty[s]
// counts the consumers' warps (a gemm role of one warpgroup and a reading role of two: 12); each warp
// syncs, then its lane 0 arrives.
// CHECK-LABEL: func.func @slot_read_by_a_role(
// CHECK: %[[FULL:.*]] = nvgpu.mbarrier.create
// CHECK-NEXT: %[[EMPTY:.*]] = nvgpu.mbarrier.create
// CHECK: %[[TWELVE:.*]] = arith.constant 12 : index
// CHECK-COUNT-2: nvgpu.mbarrier.init %[[EMPTY]][%{{.*}}], %[[TWELVE]]
// CHECK: qla.role_region "mma" {
// CHECK: arith.remui %{{.*}}, %c32 : index
// CHECK: qla.gemm
// CHECK: nvvm.bar.warp.sync
// CHECK-NEXT: arith.andi
// CHECK-NEXT: scf.if
// CHECK-NEXT: nvgpu.mbarrier.arrive %[[EMPTY]]
// CHECK: qla.role_region "gates" {
// CHECK: arith.remui %{{.*}}, %c32 : index
// CHECK: qla.read
// CHECK: nvvm.bar.warp.sync
// CHECK-NEXT: arith.andi
// CHECK-NEXT: scf.if
// CHECK-NEXT: nvgpu.mbarrier.arrive %[[EMPTY]]
func.func @slot_read_by_a_role(%A: !qla.tensor<1024x640xbf16>, %G: !qla.tensor<1024x4xf32>, %O: !qla.tensor<1024x64xf32>)
    attributes {qla.kernel, qla.block = array<i64: 512, 1, 1>,
                qla.roles = [#qla.role<"loads", warpgroups = 1, registers = 40, producer = true>,
                             #qla.role<"mma", warpgroups = 1, registers = 168>,
                             #qla.role<"gates", warpgroups = 2, registers = 96>]} {
  qla.role_region "loads" {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c10 = arith.constant 10 : index
    %c64 = arith.constant 64 : index
    qla.for %c0 to %c10 step %c1 {
    ^bb0(%k: index):
      %k0 = arith.muli %k, %c64 : index
      %a = qla.copy %A[%c0, %k0] {qla.role = "loads"} : !qla.tensor<1024x640xbf16> -> !qla.tile<64x64xbf16, smem>
      qla.channel_put %a {channel = 0 : i64} : !qla.tile<64x64xbf16, smem>
      %g = qla.copy %G[%k0, %c0] {qla.role = "loads"} : !qla.tensor<1024x4xf32> -> !qla.tile<64x4xf32, smem>
      qla.channel_put %g {channel = 1 : i64} : !qla.tile<64x4xf32, smem>
    } {stages = 2 : i64}
  }
  qla.role_region "mma" {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c10 = arith.constant 10 : index
    %z = qla.fill 0.0 : f32 {qla.role = "mma"} : !qla.tile<64x64xf32, frag>
    %r = qla.for %c0 to %c10 step %c1 iter_args(%z : !qla.tile<64x64xf32, frag>) -> !qla.tile<64x64xf32, frag> {
    ^bb0(%k: index, %acc: !qla.tile<64x64xf32, frag>):
      %a = qla.channel_get {channel = 0 : i64} : !qla.tile<64x64xbf16, smem>
      %x = qla.gemm %a, %a, %acc {qla.role = "mma", transpose_b} : !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
      qla.yield %x : !qla.tile<64x64xf32, frag>
    } {stages = 2 : i64}
  }
  qla.role_region "gates" {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c10 = arith.constant 10 : index
    qla.for %c0 to %c10 step %c1 {
    ^bb0(%k: index):
      %g = qla.channel_get {channel = 1 : i64} : !qla.tile<64x4xf32, smem>
      %x = qla.read %g[%c0, %c3] {qla.role = "gates"} : !qla.tile<64x4xf32, smem> -> !qla.tile<64x1xf32, frag>
      qla.store %x, %O[%c0, %c0] {qla.role = "gates"} : !qla.tile<64x1xf32, frag>, !qla.tensor<1024x64xf32>
    } {stages = 2 : i64}
  }
  return
}
