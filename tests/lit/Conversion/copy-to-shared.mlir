// RUN: qla-opt %s -qla-convert-to-nvvm -split-input-file | FileCheck %s

// A row-major copy into shared memory that TMA does not perform (it has bounds): when the column offset
// is at a 16-byte piece boundary, every thread issues its pieces with cp.async (src-size = the bytes
// inside the bounds, the rest zero-filled; a piece outside reads nothing from the tensor's start), then
// waits once; otherwise 16-byte register loads. 64x128 bf16 = 1024 pieces: 8 a thread.
// CHECK-LABEL: func.func @bounded_copy(
// CHECK: nvvm.barrier0
// CHECK: scf.if
// CHECK-COUNT-8: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
// CHECK-NOT: nvvm.cp.async.wait.group
// CHECK: } else {
// CHECK-NOT: nvvm.cp.async
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: nvvm.barrier0
func.func @bounded_copy(%q: !qla.tensor<?x2048xbf16>)
    attributes {qla.kernel, qla.grid = array<i64: 1, 1, 1>, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 17408 : i64} {
  %row = qla.block_id 0
  %col = qla.block_id 1
  %end = qla.block_id 2
  %t = qla.copy %q[%row, %col] bounds [%end, %end] {qla.smem_offset = 0 : i64} : !qla.tensor<?x2048xbf16> -> !qla.tile<64x128xbf16, smem, #qla.swizzle<128>>
  return
}

// -----

// Stored transposed: pieces are not contiguous in shared memory, so no cp.async.
// CHECK-LABEL: func.func @transposed_copy(
// CHECK-NOT: nvvm.cp.async
// CHECK: return
func.func @transposed_copy(%q: !qla.tensor<?x2048xbf16>)
    attributes {qla.kernel, qla.grid = array<i64: 1, 1, 1>, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 17408 : i64} {
  %row = qla.block_id 0
  %col = qla.block_id 1
  %t = qla.copy %q[%row, %col] {qla.smem_offset = 0 : i64} : !qla.tensor<?x2048xbf16> -> !qla.tile<64x128xbf16, smem, #qla.swizzle<128, transposed = true>>
  return
}

// -----

// Consecutive copies into shared memory, with only index arithmetic and register loads between them,
// synchronise once: one barrier before the first, each issues its own cp.async group, and the last one
// waits for all of them, fences and ends with the barrier.
// CHECK-LABEL: func.func @copy_run(
// CHECK: nvvm.barrier0
// CHECK-NOT: nvvm.barrier0
// CHECK-NOT: nvvm.cp.async.wait.group
// CHECK: nvvm.cp.async.commit.group
// CHECK-NOT: nvvm.barrier0
// CHECK-NOT: nvvm.cp.async.wait.group
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK-NOT: nvvm.barrier0
// CHECK-NOT: nvvm.cp.async.wait.group
// CHECK: nvvm.cp.async.commit.group
// CHECK-NOT: nvvm.barrier0
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: nvvm.barrier0
// CHECK-NOT: nvvm.cp.async
// CHECK: return
func.func @copy_run(%q: !qla.tensor<?x2048xbf16>, %g: !qla.tensor<?x4xf32>)
    attributes {qla.kernel, qla.grid = array<i64: 1, 1, 1>, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 33792 : i64} {
  %row = qla.block_id 0
  %end = qla.block_id 2
  %c64 = arith.constant 64 : index
  %t = qla.copy %q[%row, %c64] bounds [%end, %end] {qla.smem_offset = 0 : i64} : !qla.tensor<?x2048xbf16> -> !qla.tile<64x128xbf16, smem, #qla.swizzle<128>>
  %x = qla.load %g[%row, %row] : !qla.tensor<?x4xf32> -> f32
  %next = arith.addi %row, %c64 : index
  %u = qla.copy %q[%next, %c64] bounds [%end, %end] {qla.smem_offset = 16384 : i64} : !qla.tensor<?x2048xbf16> -> !qla.tile<64x128xbf16, smem, #qla.swizzle<128>>
  return
}

// -----

// An op with scratch between two copies (here a transposed copy into registers through scratch) ends
// the run even though it is pure: the second copy may reuse the scratch bytes, so it starts with a
// barrier of its own (the first copy's run ends with its wait, fence and barrier).
// CHECK-LABEL: func.func @scratch_ends_run(
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: nvvm.barrier0
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: nvvm.barrier0
// CHECK: nvvm.cp.async.commit.group
// CHECK: return
func.func @scratch_ends_run(%q: !qla.tensor<?x2048xbf16>, %h: !qla.tensor<4096x64xf32>)
    attributes {qla.kernel, qla.grid = array<i64: 1, 1, 1>, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 50176 : i64} {
  %row = qla.block_id 0
  %end = qla.block_id 2
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %t = qla.copy %q[%row, %c64] bounds [%end, %end] {qla.smem_offset = 0 : i64} : !qla.tensor<?x2048xbf16> -> !qla.tile<64x128xbf16, smem, #qla.swizzle<128>>
  %s = qla.copy %h[%row, %c0] {transpose, qla.scratch_offset = 16384 : i64} : !qla.tensor<4096x64xf32> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  %u = qla.copy %q[%row, %c64] bounds [%end, %end] {qla.smem_offset = 16384 : i64} : !qla.tensor<?x2048xbf16> -> !qla.tile<64x128xbf16, smem, #qla.swizzle<128>>
  qla.store %s, %h[%row, %c0] : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>, !qla.tensor<4096x64xf32>
  return
}
