// RUN: qla-opt %s -qla-pipeline -split-input-file -verify-diagnostics | FileCheck %s

// When qla-pipeline declines a loop it says why in a remark and leaves the loop as it was.

// A 257-row tile exceeds TMA's box limit of 256 in any dimension.
// CHECK-LABEL: func.func @box_too_tall
// CHECK-NOT: nvgpu.mbarrier
// CHECK: qla.for
// CHECK: qla.copy
// CHECK: } {stages = 3 : i64}
func.func @box_too_tall(%A: !qla.tensor<1024x64xbf16>, %n: index)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  qla.for %c0 to %n step %c1 {
  ^bb0(%k: index):
    // expected-remark @+1 {{copy cannot use TMA: a tile dimension of 257 exceeds the TMA box limit of 256; the loop is not pipelined}}
    %a = qla.copy %A[%k, %c0] : !qla.tensor<1024x64xbf16> -> !qla.tile<257x64xbf16, smem>
    qla.yield
  } {stages = 3 : i64}
  return
}

// -----

// Rows of 96 bf16 are 192 bytes: wider than the 128-byte swizzle span that TMA and wgmma share, and
// not a whole number of spans (256-byte rows are two column blocks, and fine).
// CHECK-LABEL: func.func @rows_not_whole_spans
// CHECK-NOT: nvgpu.mbarrier
// CHECK: qla.copy
func.func @rows_not_whole_spans(%A: !qla.tensor<1024x1024xbf16>, %n: index)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  qla.for %c0 to %n step %c1 {
  ^bb0(%k: index):
    // expected-remark @+1 {{copy cannot use TMA: the tile's rows are 192 bytes: wider than a swizzle span (128 bytes) but not a whole number of spans; the loop is not pipelined}}
    %a = qla.copy %A[%k, %c0] : !qla.tensor<1024x1024xbf16> -> !qla.tile<64x96xbf16, smem>
    qla.yield
  } {stages = 2 : i64}
  return
}

// -----

// Rows of 4 bf16 are 8 bytes; a TMA box row must be a multiple of 16 bytes.
// CHECK-LABEL: func.func @rows_not_16_bytes
// CHECK-NOT: nvgpu.mbarrier
// CHECK: qla.copy
func.func @rows_not_16_bytes(%A: !qla.tensor<1024x64xbf16>, %n: index)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  qla.for %c0 to %n step %c1 {
  ^bb0(%k: index):
    // expected-remark @+1 {{copy cannot use TMA: the tile's rows are 8 bytes, not a multiple of 16; the loop is not pipelined}}
    %a = qla.copy %A[%k, %c0] : !qla.tensor<1024x64xbf16> -> !qla.tile<64x4xbf16, smem>
    qla.yield
  } {stages = 2 : i64}
  return
}

// -----

// A row-major 100-column bf16 tensor has a row stride of 200 bytes; TMA needs multiples of 16.
// CHECK-LABEL: func.func @stride_not_16_bytes
// CHECK-NOT: nvgpu.mbarrier
// CHECK: qla.copy
func.func @stride_not_16_bytes(%A: !qla.tensor<1024x100xbf16>, %n: index)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  qla.for %c0 to %n step %c1 {
  ^bb0(%k: index):
    // expected-remark @+1 {{copy cannot use TMA: a tensor stride of 200 bytes is not a multiple of 16; the loop is not pipelined}}
    %a = qla.copy %A[%k, %c0] : !qla.tensor<1024x100xbf16> -> !qla.tile<64x64xbf16, smem>
    qla.yield
  } {stages = 2 : i64}
  return
}

// -----

// A column-major tensor: the innermost dimension is not contiguous.
// CHECK-LABEL: func.func @not_contiguous
// CHECK-NOT: nvgpu.mbarrier
// CHECK: qla.copy
func.func @not_contiguous(%A: !qla.tensor<1024x64xbf16, strides = [1, 1024]>, %n: index)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  qla.for %c0 to %n step %c1 {
  ^bb0(%k: index):
    // expected-remark @+1 {{copy cannot use TMA: the innermost dimension of the tensor is not contiguous (stride must be 1); the loop is not pipelined}}
    %a = qla.copy %A[%k, %c0] : !qla.tensor<1024x64xbf16, strides = [1, 1024]> -> !qla.tile<64x64xbf16, smem>
    qla.yield
  } {stages = 2 : i64}
  return
}

// -----

// One stage means no overlap: nothing to pipeline.
// CHECK-LABEL: func.func @one_stage
// CHECK-NOT: nvgpu.mbarrier
// CHECK: qla.for
// CHECK: qla.copy
// CHECK: qla.gemm
// CHECK-NOT: async
// CHECK: qla.yield
func.func @one_stage(%A: !qla.tensor<1024x64xbf16>, %B: !qla.tensor<1024x64xbf16>, %n: index)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %acc0 = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag>
  // expected-remark @+1 {{not pipelined: stages = 1 (ask for at least 2)}}
  %acc = qla.for %c0 to %n step %c1 iter_args(%acc0 : !qla.tile<64x64xf32, frag>) -> !qla.tile<64x64xf32, frag> {
  ^bb0(%k: index, %a_acc: !qla.tile<64x64xf32, frag>):
    %a = qla.copy %A[%k, %c0] : !qla.tensor<1024x64xbf16> -> !qla.tile<64x64xbf16, smem>
    %b = qla.copy %B[%k, %c0] : !qla.tensor<1024x64xbf16> -> !qla.tile<64x64xbf16, smem>
    %r = qla.gemm %a, %b, %a_acc {transpose_b} : !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
    qla.yield %r : !qla.tile<64x64xf32, frag>
  }
  return
}

// -----

// A pipelined slot is reused after the gemms that read it retire; other readers are not tracked.
// CHECK-LABEL: func.func @copy_feeds_store
// CHECK-NOT: nvgpu.mbarrier
// CHECK: qla.copy
func.func @copy_feeds_store(%A: !qla.tensor<1024x64xbf16>, %C: !qla.tensor<1024x64xbf16>, %n: index)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  qla.for %c0 to %n step %c1 {
  ^bb0(%k: index):
    %a = qla.copy %A[%k, %c0] : !qla.tensor<1024x64xbf16> -> !qla.tile<64x64xbf16, smem>
    // expected-remark @+1 {{not pipelined: a pipelined copy may only feed qla.gemm and qla.read, found qla.store}}
    qla.store %a, %C[%k, %c0] : !qla.tile<64x64xbf16, smem>, !qla.tensor<1024x64xbf16>
    qla.yield
  } {stages = 2 : i64}
  return
}

// -----

// TMA clips a box only at the tensor's end, not at bounds inside it (e.g. a sequence end in a packed
// batch).
// CHECK-LABEL: func.func @copy_with_bounds
// CHECK-NOT: nvgpu.mbarrier
// CHECK: qla.copy
func.func @copy_with_bounds(%A: !qla.tensor<1024x64xbf16>, %end: index, %n: index)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  qla.for %c0 to %n step %c1 {
  ^bb0(%k: index):
    // expected-remark @+1 {{copy cannot use TMA: it has bounds inside the tensor (TMA clips only at the tensor's end); the loop is not pipelined}}
    %a = qla.copy %A[%k, %c0] bounds [%end, %c64] : !qla.tensor<1024x64xbf16> -> !qla.tile<64x64xbf16, smem>
    qla.yield
  } {stages = 2 : i64}
  return
}

// -----

// A loop inside another loop is not pipelined: each run of the outer loop would initialise the
// barriers and refill the slots again while slower warpgroups may still read them.
// CHECK-LABEL: func.func @nested(
func.func @nested(%A: !qla.tensor<4096x64xbf16>, %n: index) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  qla.for %c0 to %n step %c1 {
  ^bb0(%i: index):
    // expected-remark @+1 {{not pipelined: the loop is inside another loop}}
    qla.for %c0 to %n step %c1 {
    ^bb0(%j: index):
      %a = qla.copy %A[%j, %c0] : !qla.tensor<4096x64xbf16> -> !qla.tile<64x64xbf16, smem>
      %z = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag>
      %x = qla.gemm %a, %a, %z {transpose_b} : !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
    } {stages = 2 : i64}
  }
  return
}

// -----

// A loop over at most one item from its lower bound (upper bound min(lb + 1, n), as a block's share of
// a range) asks for three stages and gets a ring of one slot: more would never be filled.
// CHECK-LABEL: func.func @at_most_one_iteration
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>>
// CHECK: qla.smem_alloc : !qla.tile<1x64x64xbf16, smem>
func.func @at_most_one_iteration(%A: !qla.tensor<1024x64xbf16>, %C: !qla.tensor<1024x64xf32>, %first: index, %n: index)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %next = arith.addi %first, %c1 : index
  %last = arith.minsi %next, %n : index
  // expected-remark @+1 {{ring of 1 slot: the loop runs at most 1 iteration}}
  qla.for %first to %last step %c1 {
  ^bb0(%k: index):
    %row = arith.muli %k, %c64 : index
    %a = qla.copy %A[%row, %c0] : !qla.tensor<1024x64xbf16> -> !qla.tile<64x64xbf16, smem>
    %z = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag>
    %y = qla.gemm %a, %a, %z {transpose_b} : !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
    qla.store %y, %C[%row, %c0] : !qla.tile<64x64xf32, frag>, !qla.tensor<1024x64xf32>
    qla.yield
  } {stages = 3 : i64}
  return
}

// -----

// Constant bounds: two iterations, two slots of the three asked for.
// CHECK-LABEL: func.func @two_iterations
// CHECK: qla.smem_alloc : !qla.tile<2x64x64xbf16, smem>
func.func @two_iterations(%A: !qla.tensor<1024x64xbf16>, %C: !qla.tensor<1024x64xf32>)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  // expected-remark @+1 {{ring of 2 slots: the loop runs at most 2 iterations}}
  qla.for %c0 to %c2 step %c1 {
  ^bb0(%k: index):
    %row = arith.muli %k, %c64 : index
    %a = qla.copy %A[%row, %c0] : !qla.tensor<1024x64xbf16> -> !qla.tile<64x64xbf16, smem>
    %z = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag>
    %y = qla.gemm %a, %a, %z {transpose_b} : !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
    qla.store %y, %C[%row, %c0] : !qla.tile<64x64xf32, frag>, !qla.tensor<1024x64xf32>
    qla.yield
  } {stages = 3 : i64}
  return
}

// -----

// Declined for another reason (a loop inside a loop): one remark, the reason; no ring is sized.
// CHECK-LABEL: func.func @nested_short_loop
// CHECK-NOT: nvgpu.mbarrier
func.func @nested_short_loop(%A: !qla.tensor<1024x64xbf16>, %C: !qla.tensor<1024x64xf32>, %n: index)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  qla.for %c0 to %n step %c1 {
  ^bb0(%j: index):
    // expected-remark @+1 {{not pipelined: the loop is inside another loop}}
    qla.for %c0 to %c2 step %c1 {
    ^bb0(%k: index):
      %row = arith.muli %k, %c64 : index
      %a = qla.copy %A[%row, %c0] : !qla.tensor<1024x64xbf16> -> !qla.tile<64x64xbf16, smem>
      %z = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag>
      %y = qla.gemm %a, %a, %z {transpose_b} : !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
      qla.store %y, %C[%row, %c0] : !qla.tile<64x64xf32, frag>, !qla.tensor<1024x64xf32>
      qla.yield
    } {stages = 3 : i64}
    qla.yield
  } {stages = 1 : i64}
  return
}

// -----

// An accumulating loop (the GEMM's K loop) of one iteration: one slot, filled in the prologue; the
// steady state's release of the previous slot never runs (iteration 0 has none), so nothing waits for a
// refill that is never issued.
// CHECK-LABEL: func.func @accumulate_once
// CHECK: qla.smem_alloc : !qla.tile<1x64x64xbf16, smem>
// CHECK: scf.for
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: qla.gemm {{.*}} {async, transpose_b}
func.func @accumulate_once(%A: !qla.tensor<64x64xbf16>, %C: !qla.tensor<64x64xf32>)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %acc0 = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag>
  // expected-remark @+1 {{ring of 1 slot: the loop runs at most 1 iteration}}
  %acc = qla.for %c0 to %c1 step %c1 iter_args(%acc0 : !qla.tile<64x64xf32, frag>) -> !qla.tile<64x64xf32, frag> {
  ^bb0(%k: index, %a_acc: !qla.tile<64x64xf32, frag>):
    %a = qla.copy %A[%c0, %c0] : !qla.tensor<64x64xbf16> -> !qla.tile<64x64xbf16, smem>
    %r = qla.gemm %a, %a, %a_acc {transpose_b} : !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
    qla.yield %r : !qla.tile<64x64xf32, frag>
  } {stages = 4 : i64}
  qla.store %acc, %C[%c0, %c0] : !qla.tile<64x64xf32, frag>, !qla.tensor<64x64xf32>
  return
}
