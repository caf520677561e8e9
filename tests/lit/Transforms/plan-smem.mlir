// RUN: qla-opt %s -qla-plan-smem -split-input-file | FileCheck %s
// RUN: qla-opt %s -qla-plan-smem=budget=1000 -split-input-file -verify-diagnostics -o /dev/null

// Buffers are placed in order at the lowest free offset: swizzled tiles at 1024-byte boundaries (TMA and
// wgmma need it), others at 128. qla.smem_bytes = end of the highest buffer + 1024 bytes of slack, because
// the kernel aligns the dynamic shared-memory base to 1024 bytes at run time. Rings (qla.smem_alloc) live
// for the whole kernel.

// CHECK-LABEL: func.func @placement()
// CHECK-SAME: qla.smem_bytes = 75776 : i64
// expected-error @+1 {{shared memory needed (75776 bytes) exceeds the budget of 1000 bytes; buffers: '!qla.tile<4x128x64xbf16, smem, #qla.swizzle<128>>' (65536 B) '!qla.tile<8x4xf32, smem>' (128 B) '!qla.tile<2x64x32xbf16, smem, #qla.swizzle<64>>' (8192 B) '!qla.tile<3x8xf16, smem, #qla.swizzle<0>>' (48 B)}}
func.func @placement() attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  // [0, 65536)
  // CHECK: qla.smem_alloc {offset = 0 : i64} : !qla.tile<4x128x64xbf16, smem, #qla.swizzle<128>>
  %a = qla.smem_alloc : !qla.tile<4x128x64xbf16, smem, #qla.swizzle<128>>
  // Not swizzled: 128-byte alignment. [65536, 65664)
  // CHECK-NEXT: qla.smem_alloc {offset = 65536 : i64} : !qla.tile<8x4xf32, smem>
  %b = qla.smem_alloc : !qla.tile<8x4xf32, smem>
  // Swizzled: up to the next 1024 boundary. [66560, 74752)
  // CHECK-NEXT: qla.smem_alloc {offset = 66560 : i64} : !qla.tile<2x64x32xbf16, smem, #qla.swizzle<64>>
  %c = qla.smem_alloc : !qla.tile<2x64x32xbf16, smem, #qla.swizzle<64>>
  // swizzle<0> is not swizzled: 128-byte alignment, in the gap before %c: [65664, 65712); 74752 + 1024 = 75776 in all.
  // CHECK-NEXT: qla.smem_alloc {offset = 65664 : i64} : !qla.tile<3x8xf16, smem, #qla.swizzle<0>>
  %d = qla.smem_alloc : !qla.tile<3x8xf16, smem, #qla.swizzle<0>>
  return
}

// -----

// Allocations in nested regions count too; an existing offset is replaced.
// CHECK-LABEL: func.func @nested(
// CHECK-SAME: qla.smem_bytes = 3072 : i64
// expected-error @+1 {{shared memory needed (3072 bytes) exceeds the budget of 1000 bytes}}
func.func @nested(%p: i1) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  // CHECK: qla.smem_alloc {offset = 0 : i64} : !qla.tile<16xf32, smem>
  %a = qla.smem_alloc {offset = 4096 : i64} : !qla.tile<16xf32, smem>
  // CHECK: scf.if
  // CHECK-NEXT: qla.smem_alloc {offset = 1024 : i64} : !qla.tile<16x16xf32, smem, #qla.swizzle<64>>
  scf.if %p {
    %b = qla.smem_alloc : !qla.tile<16x16xf32, smem, #qla.swizzle<64>>
  }
  return
}

// -----

// A kernel without shared buffers needs none (and no slack); functions that are not kernels are not
// planned.
// CHECK-LABEL: func.func @no_buffers()
// CHECK-SAME: qla.smem_bytes = 0 : i64
func.func @no_buffers() attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  return
}
// CHECK-LABEL: func.func @helper()
// CHECK-NOT: qla.smem_bytes
// CHECK: qla.smem_alloc : !qla.tile<64x64xbf16, smem>
func.func @helper() {
  %a = qla.smem_alloc : !qla.tile<64x64xbf16, smem>
  return
}

// -----

// The 227 KiB default budget: 232448 bytes fit exactly (231424 of buffers + 1024 of slack) ...
// CHECK-LABEL: func.func @fits_default_budget()
// CHECK-SAME: qla.smem_bytes = 232448 : i64
// expected-error @+1 {{shared memory needed (232448 bytes) exceeds the budget of 1000 bytes}}
func.func @fits_default_budget() attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %a = qla.smem_alloc : !qla.tile<226x1024xi8, smem>
  return
}

// -----

// Copies that TMA does not do and qla.share get a buffer too (qla.smem_offset); each op that exchanges a
// fragment through shared memory (broadcast, reduce, cumsum, tri_inverse) gets scratch of 4 bytes per
// element (tri_inverse: twice) live only while it runs (qla.scratch_offset on the op), placed like a buffer.
// CHECK-LABEL: func.func @buffers_and_scratch(
// CHECK-SAME: qla.smem_bytes = 33792 : i64
// expected-error @+1 {{shared memory needed (33792 bytes) exceeds the budget of 1000 bytes; buffers: '!qla.tile<64x64xbf16, smem, #qla.swizzle<128>>' (8192 B) '!qla.tile<64x64xbf16, smem>' (8192 B) and 40960 B of scratch for layout exchanges (each live only during its op)}}
func.func @buffers_and_scratch(%A: !qla.tensor<256x64xbf16>) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  // CHECK: qla.copy %{{.*}} {qla.smem_offset = 0 : i64} : !qla.tensor<256x64xbf16> -> !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  %t = qla.copy %A[%c0, %c0] : !qla.tensor<256x64xbf16> -> !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  %f = qla.fill 1.0 : bf16 : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>
  // Not swizzled: 128-byte alignment, right after the copy's 8192 bytes (%t is still to be read).
  // CHECK: qla.share %{{.*}} {qla.smem_offset = 8192 : i64}
  %s = qla.share %f : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xbf16, smem>
  %acc = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  %use = qla.gemm %s, %t, %acc {transpose_b} : !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  // A copy into registers needs no shared memory.
  // CHECK: qla.copy %{{.*}} : !qla.tensor<256x64xbf16> -> !qla.tile<64x64xbf16, frag
  %r = qla.copy %A[%c0, %c0] : !qla.tensor<256x64xbf16> -> !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>
  // Scratch: cumsum of 64x32 needs 8192 bytes; %t is still to be read, %s is not: the cumsum takes %s's bytes.
  %g = qla.fill 1.0 : f32 : !qla.tile<64x32xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  // CHECK: qla.cumsum %{{.*}}, 1 {qla.scratch_offset = 8192 : i64}
  %c = qla.cumsum %g, 1 : !qla.tile<64x32xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  %use2 = qla.gemm %t, %t, %acc {transpose_b} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  // tri_inverse of 64x64 needs 2 x 16384 = 32768 bytes, from 0: no buffer is live any more.
  // CHECK: qla.tri_inverse %{{.*}} {qla.scratch_offset = 0 : i64}
  %i = qla.tri_inverse %f : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>
  return
}

// -----

// tri_inverse's diagonal 16x16 blocks of an f32 accumulator fragment are inverted inside the warps
// (shuffles): no scratch. Without block = 16 (the whole 64x64: 32768 bytes), or on another layout
// (32x32: 8192), it goes through scratch.
// CHECK-LABEL: func.func @inverse_in_warps(
// CHECK-SAME: qla.smem_bytes = 33792 : i64
// expected-error @+1 {{shared memory needed (33792 bytes) exceeds the budget of 1000 bytes}}
func.func @inverse_in_warps() attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %f = qla.fill 1.0 : f32 : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  // CHECK: qla.tri_inverse %{{.*}} {block = 16 : i64} :
  %i = qla.tri_inverse %f {block = 16} : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  %g = qla.fill 1.0 : f32 : !qla.tile<32x32xf32, frag, #qla.strided<threads = 128>>
  // CHECK: qla.tri_inverse %{{.*}} {block = 16 : i64, qla.scratch_offset = 0 : i64}
  %j = qla.tri_inverse %g {block = 16} : !qla.tile<32x32xf32, frag, #qla.strided<threads = 128>>
  // CHECK: qla.tri_inverse %{{.*}} {qla.scratch_offset = 0 : i64}
  %k = qla.tri_inverse %f : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  return
}

// -----

// Buffers whose contents are no longer read share bytes: in the loop, %b takes %a's place once the gemm
// that reads %a is done; %k, read inside the loop, lives across all of it; %c is read by an asynchronous
// gemm, so it lives to the end of the loop body and %d, after it, gets bytes of its own.
// CHECK-LABEL: func.func @reuse(
// CHECK-SAME: qla.smem_bytes = 25600 : i64
// expected-error @+1 {{shared memory needed (25600 bytes) exceeds the budget of 1000 bytes}}
func.func @reuse(%A: !qla.tensor<256x64xbf16>, %n: index) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = qla.fill 1.0 : bf16 : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>
  %acc = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  // CHECK: qla.copy %{{.*}} {qla.smem_offset = 0 : i64}
  %k = qla.copy %A[%c0, %c0] : !qla.tensor<256x64xbf16> -> !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  qla.for %c0 to %n step %c1 {
  ^bb0(%i: index):
    // CHECK: qla.share %{{.*}} {qla.smem_offset = 8192 : i64}
    %a = qla.share %f : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
    %r1 = qla.gemm %a, %k, %acc {transpose_b} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
    // CHECK: qla.share %{{.*}} {qla.smem_offset = 8192 : i64}
    %b = qla.share %f : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
    %r2 = qla.gemm %b, %k, %acc {transpose_b} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
    // CHECK: qla.share %{{.*}} {qla.smem_offset = 8192 : i64}
    %c = qla.share %f : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
    %r3 = qla.gemm %c, %k, %acc {async, transpose_b} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
    // CHECK: qla.share %{{.*}} {qla.smem_offset = 16384 : i64}
    %d = qla.share %f : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
    %r4 = qla.gemm %d, %k, %acc {transpose_b} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
    qla.async_wait 0
    qla.yield
  }
  return
}

// -----

// A tile read by an asynchronous gemm lives until the qla.async_wait 0 after it (qla-overlap-gemms puts
// one before the first reader): %b, made after the wait, takes %a's bytes; %c, made while the gemm
// reading %b is in flight, gets bytes of its own.
// CHECK-LABEL: func.func @async_until_wait(
// CHECK-SAME: qla.smem_bytes = 17408 : i64
// expected-error @+1 {{shared memory needed (17408 bytes) exceeds the budget of 1000 bytes}}
func.func @async_until_wait(%f: !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %acc = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  // CHECK: qla.share %{{.*}} {qla.smem_offset = 0 : i64}
  %a = qla.share %f : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  %r1 = qla.gemm %a, %a, %acc {async, transpose_b} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  qla.async_wait 0
  // CHECK: qla.share %{{.*}} {qla.smem_offset = 0 : i64}
  %b = qla.share %f : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  %r2 = qla.gemm %b, %b, %acc {async, transpose_b} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  // CHECK: qla.share %{{.*}} {qla.smem_offset = 8192 : i64}
  %c = qla.share %f : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  qla.async_wait 0
  return
}

// -----

// A partial wait ends a tile's life when enough gemms were issued after the one reading it:
// `qla.async_wait 1` after two gemms completes the first (%a's bytes are free for %c) but not the
// second (%b keeps its bytes, so %d, made before the next wait, gets bytes of its own).
// CHECK-LABEL: func.func @partial_wait(
// CHECK-SAME: qla.smem_bytes = 25600 : i64
// expected-error @+1 {{shared memory needed (25600 bytes) exceeds the budget of 1000 bytes}}
func.func @partial_wait(%f: !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %acc = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  // CHECK: qla.share %{{.*}} {qla.smem_offset = 0 : i64}
  %a = qla.share %f : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  %r1 = qla.gemm %a, %a, %acc {async, transpose_b} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  // CHECK: qla.share %{{.*}} {qla.smem_offset = 8192 : i64}
  %b = qla.share %f : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  %r2 = qla.gemm %b, %b, %acc {async, transpose_b} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  qla.async_wait 1
  // CHECK: qla.share %{{.*}} {qla.smem_offset = 0 : i64}
  %c = qla.share %f : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  %r3 = qla.gemm %c, %c, %acc {async, transpose_b} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  // CHECK: qla.share %{{.*}} {qla.smem_offset = 16384 : i64}
  %d = qla.share %f : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  qla.async_wait 0
  return
}

// -----

// A store of a 2-byte accumulator fragment may go through scratch (16-byte pieces instead of 4-byte
// pairs), but only where staging does not lower occupancy: in the bytes the kernel needs anyway, or past
// them where shared memory still holds as many blocks an SM. %early's 8192 bytes fit in the tri_inverse's
// 32768 (dead by then). %late would need a second 8192 next to the live copy %t in a kernel of 9216: a
// 128-thread block runs 16 to an SM, and 9216 bytes let 22 fit but 17408 only 12 (each block also
// takes 1 KiB of alignment slack and 1 KiB the system reserves), so it stays element by element.
// CHECK-LABEL: func.func @optional_staging(
// CHECK-SAME: qla.smem_bytes = 33792 : i64
// expected-error @+1 {{shared memory needed (33792 bytes) exceeds the budget of 1000 bytes}}
func.func @optional_staging(%A: !qla.tensor<256x64xbf16>, %o: !qla.tensor<256x64xbf16>) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %f = qla.fill 1.0 : f32 : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  // CHECK: qla.tri_inverse %{{.*}} {qla.scratch_offset = 0 : i64}
  %i = qla.tri_inverse %f : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  %early = qla.fill 1.0 : bf16 : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>
  // CHECK: qla.store %{{.*}} {qla.scratch_offset = 0 : i64}
  qla.store %early, %o[%c0, %c0] : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>, !qla.tensor<256x64xbf16>
  // CHECK: qla.store %{{.*}} {qla.scratch_offset = 0 : i64, transpose}
  qla.store %early, %o[%c0, %c0] {transpose} : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>, !qla.tensor<256x64xbf16>
  return
}

// CHECK-LABEL: func.func @staging_would_grow(
// CHECK-SAME: qla.smem_bytes = 9216 : i64
// expected-error @+1 {{shared memory needed (9216 bytes) exceeds the budget of 1000 bytes}}
func.func @staging_would_grow(%A: !qla.tensor<256x64xbf16>, %o: !qla.tensor<256x64xbf16>) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %t = qla.copy %A[%c0, %c0] : !qla.tensor<256x64xbf16> -> !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  %late = qla.fill 1.0 : bf16 : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>
  // CHECK: qla.store
  // CHECK-NOT: qla.scratch_offset
  // CHECK-SAME: !qla.tensor<256x64xbf16>
  qla.store %late, %o[%c0, %c0] : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>, !qla.tensor<256x64xbf16>
  %acc = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  %use = qla.gemm %t, %t, %acc {transpose_b} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  return
}

// -----

// Role regions run at the same time: scratch of two roles never shares bytes, even though each is live
// only during its op and the ops come one after the other in the IR (the state role's broadcast takes
// bytes 0..255, the output role's 256..511). The output role's store comes after its broadcast and
// stages at 256; the 8192 bytes it adds cost no occupancy: a 256-thread block runs 8 to an SM, and
// 9472 bytes still let 21 fit. Under the second RUN's budget of 1000 bytes it does not fit: no staging,
// and the error names the 1536 bytes the broadcasts need.
// CHECK-LABEL: func.func @scratch_of_two_roles(
// CHECK-SAME: qla.smem_bytes = 9472 : i64
// CHECK: qla.role_region "state"
// CHECK: qla.broadcast %{{.*}} {dims = array<i64: 0, 1>, qla.role = "state", qla.scratch_offset = 0 : i64}
// CHECK: qla.role_region "output"
// CHECK: qla.broadcast %{{.*}} {dims = array<i64: 0, 1>, qla.role = "output", qla.scratch_offset = 256 : i64}
// CHECK: qla.store %{{.*}} {qla.role = "output", qla.scratch_offset = 256 : i64, transpose}
// expected-error @+1 {{shared memory needed (1536 bytes) exceeds the budget of 1000 bytes}}
func.func @scratch_of_two_roles(%o: !qla.tensor<4096x64xbf16>)
    attributes {qla.kernel, qla.block = array<i64: 256, 1, 1>,
                qla.roles = [#qla.role<"state", warpgroups = 1>, #qla.role<"output", warpgroups = 1>]} {
  qla.role_region "state" {
    %r = qla.fill 1.0 : f32 {qla.role = "state"} : !qla.tile<1x64xf32, frag, #qla.strided<threads = 128>>
    %b = qla.broadcast %r {dims = array<i64: 0, 1>, qla.role = "state"} : !qla.tile<1x64xf32, frag, #qla.strided<threads = 128>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  }
  qla.role_region "output" {
    %c0 = arith.constant 0 : index
    %r = qla.fill 1.0 : f32 {qla.role = "output"} : !qla.tile<1x64xf32, frag, #qla.strided<threads = 128>>
    %b = qla.broadcast %r {dims = array<i64: 0, 1>, qla.role = "output"} : !qla.tile<1x64xf32, frag, #qla.strided<threads = 128>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
    %t = qla.fill 1.0 : bf16 {qla.role = "output"} : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>
    qla.store %t, %o[%c0, %c0] {transpose, qla.role = "output"} : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>, !qla.tensor<4096x64xbf16>
  }
  return
}
