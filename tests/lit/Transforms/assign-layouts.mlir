// RUN: qla-opt %s -qla-assign-layouts -split-input-file -verify-diagnostics | FileCheck %s
// RUN: qla-opt %s -qla-assign-layouts -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=GONE

// Fragments: 2-D with 8..256 columns and rows a multiple of 64 per warpgroup get the wgmma accumulator
// layout over all of the kernel's (or role's) warpgroups; others are spread round-robin (#qla.strided). Shared tiles: stored K-major for the gemms that read them (transposed when a gemm
// needs it), with the swizzle of their stored row: 32, 64, or 128 for a multiple of 128 bytes, else 0.

// CHECK-LABEL: func.func @swizzles(
func.func @swizzles() attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  // 64 bf16 = 128 bytes.
  // CHECK: qla.smem_alloc : !qla.tile<128x64xbf16, smem, #qla.swizzle<128>>
  %a = qla.smem_alloc : !qla.tile<128x64xbf16, smem>
  // 32 f16 = 64 bytes.
  // CHECK-NEXT: qla.smem_alloc : !qla.tile<64x32xf16, smem, #qla.swizzle<64>>
  %b = qla.smem_alloc : !qla.tile<64x32xf16, smem>
  // 8 f32 = 32 bytes.
  // CHECK-NEXT: qla.smem_alloc : !qla.tile<64x8xf32, smem, #qla.swizzle<32>>
  %c = qla.smem_alloc : !qla.tile<64x8xf32, smem>
  // 48 bf16 = 96 bytes: no swizzle span fits.
  // CHECK-NEXT: qla.smem_alloc : !qla.tile<64x48xbf16, smem, #qla.swizzle<0>>
  %d = qla.smem_alloc : !qla.tile<64x48xbf16, smem>
  // 128 bf16 = 256 bytes: two 128-byte column blocks, each swizzled by 128.
  // CHECK-NEXT: qla.smem_alloc : !qla.tile<64x128xbf16, smem, #qla.swizzle<128>>
  %e = qla.smem_alloc : !qla.tile<64x128xbf16, smem>
  // 96 bf16 = 192 bytes: not a whole number of 128-byte blocks.
  // CHECK-NEXT: qla.smem_alloc : !qla.tile<64x96xbf16, smem, #qla.swizzle<0>>
  %f = qla.smem_alloc : !qla.tile<64x96xbf16, smem>
  // A ring and its slots: the slot's rows (64 bf16 = 128 bytes) decide both.
  // CHECK-NEXT: %[[RING:.*]] = qla.smem_alloc : !qla.tile<3x128x64xbf16, smem, #qla.swizzle<128>>
  // CHECK: qla.slot %[[RING]][%{{.*}}] : !qla.tile<3x128x64xbf16, smem, #qla.swizzle<128>> -> !qla.tile<128x64xbf16, smem, #qla.swizzle<128>>
  %ring = qla.smem_alloc : !qla.tile<3x128x64xbf16, smem>
  %c1 = arith.constant 1 : index
  %s = qla.slot %ring[%c1] : !qla.tile<3x128x64xbf16, smem> -> !qla.tile<128x64xbf16, smem>
  // A layout already chosen is kept.
  // CHECK: qla.smem_alloc : !qla.tile<128x64xbf16, smem, #qla.swizzle<32>>
  %g = qla.smem_alloc : !qla.tile<128x64xbf16, smem, #qla.swizzle<32>>
  return
}

// -----

// CHECK-LABEL: func.func @two_warpgroups(
func.func @two_warpgroups(%A: !qla.tensor<1024x64xbf16>, %C: !qla.tensor<1024x256xbf16>, %n: index)
    attributes {qla.kernel, qla.block = array<i64: 256, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // 128 rows over 2 warpgroups.
  // CHECK: %[[ACC0:.*]] = qla.fill 0.000000e+00 : f32 : !qla.tile<128x256xf32, frag, #qla.wgmma_acc<warpgroups = 2>>
  %acc0 = qla.fill 0.0 : f32 : !qla.tile<128x256xf32, frag>
  // Loop results and block arguments too; A and Bᵀ are K-major as copied.
  // CHECK: qla.for {{.*}} iter_args(%[[ACC0]] : !qla.tile<128x256xf32, frag, #qla.wgmma_acc<warpgroups = 2>>) -> !qla.tile<128x256xf32, frag, #qla.wgmma_acc<warpgroups = 2>> {
  // CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: !qla.tile<128x256xf32, frag, #qla.wgmma_acc<warpgroups = 2>>):
  // CHECK: qla.copy {{.*}} -> !qla.tile<128x64xbf16, smem, #qla.swizzle<128>>
  // CHECK: qla.copy {{.*}} -> !qla.tile<256x64xbf16, smem, #qla.swizzle<128>>
  // CHECK: qla.gemm {{.*}} : !qla.tile<128x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<256x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<128x256xf32, frag, #qla.wgmma_acc<warpgroups = 2>> -> !qla.tile<128x256xf32, frag, #qla.wgmma_acc<warpgroups = 2>>
  %acc = qla.for %c0 to %n step %c1 iter_args(%acc0 : !qla.tile<128x256xf32, frag>) -> !qla.tile<128x256xf32, frag> {
  ^bb0(%k: index, %a_acc: !qla.tile<128x256xf32, frag>):
    %a = qla.copy %A[%c0, %c0] : !qla.tensor<1024x64xbf16> -> !qla.tile<128x64xbf16, smem>
    %b = qla.copy %A[%c0, %c0] : !qla.tensor<1024x64xbf16> -> !qla.tile<256x64xbf16, smem>
    %r = qla.gemm %a, %b, %a_acc {transpose_b} : !qla.tile<128x64xbf16, smem>, !qla.tile<256x64xbf16, smem>, !qla.tile<128x256xf32, frag> -> !qla.tile<128x256xf32, frag>
    qla.yield %r : !qla.tile<128x256xf32, frag>
  } {stages = 2 : i64}
  // A map's result (same shape) gets the same layout as its input; its scalar body is untouched.
  // CHECK: qla.map %{{.*}} : !qla.tile<128x256xf32, frag, #qla.wgmma_acc<warpgroups = 2>> -> !qla.tile<128x256xbf16, frag, #qla.wgmma_acc<warpgroups = 2>> {
  // CHECK-NEXT: ^bb0(%{{.*}}: f32):
  %o = qla.map %acc : !qla.tile<128x256xf32, frag> -> !qla.tile<128x256xbf16, frag> {
  ^bb0(%x: f32):
    %y = arith.truncf %x : f32 to bf16
    qla.yield %y : bf16
  }
  qla.store %o, %C[%c0, %c0] : !qla.tile<128x256xbf16, frag>, !qla.tensor<1024x256xbf16>
  // 64 rows cannot be split over the block's 2 warpgroups in blocks of 64, and an accumulator layout
  // over one warpgroup would leave the other's threads addressing rows 64..127: round-robin instead.
  // CHECK: qla.fill 0.000000e+00 : f32 : !qla.tile<64x128xf32, frag, #qla.strided<threads = 256>>
  %f1 = qla.fill 0.0 : f32 : !qla.tile<64x128xf32, frag>
  // 192 rows: not a multiple of 128, so round-robin too.
  // CHECK: qla.fill 0.000000e+00 : f32 : !qla.tile<192x64xf32, frag, #qla.strided<threads = 256>>
  %f2 = qla.fill 0.0 : f32 : !qla.tile<192x64xf32, frag>
  // Columns not a multiple of 8, more than 256 columns, 1-D, or rows not a multiple of 64: round-robin
  // over the block's 256 threads.
  // CHECK: qla.fill 0.000000e+00 : f32 : !qla.tile<128x12xf32, frag, #qla.strided<threads = 256>>
  // CHECK: qla.fill 0.000000e+00 : f32 : !qla.tile<128x264xf32, frag, #qla.strided<threads = 256>>
  // CHECK: qla.fill 0.000000e+00 : f32 : !qla.tile<128xf32, frag, #qla.strided<threads = 256>>
  // CHECK: qla.fill 0.000000e+00 : f32 : !qla.tile<96x64xf32, frag, #qla.strided<threads = 256>>
  %f3 = qla.fill 0.0 : f32 : !qla.tile<128x12xf32, frag>
  %f4 = qla.fill 0.0 : f32 : !qla.tile<128x264xf32, frag>
  %f5 = qla.fill 0.0 : f32 : !qla.tile<128xf32, frag>
  %f6 = qla.fill 0.0 : f32 : !qla.tile<96x64xf32, frag>
  return
}

// -----

// Four warpgroups: 256 rows take all four; 128 rows cannot span them and go round-robin.
// CHECK-LABEL: func.func @four_warpgroups(
// CHECK: !qla.tile<256x64xf32, frag, #qla.wgmma_acc<warpgroups = 4>>
// CHECK: !qla.tile<128x64xf32, frag, #qla.strided<threads = 512>>
func.func @four_warpgroups() attributes {qla.kernel, qla.block = array<i64: 512, 1, 1>} {
  %a = qla.fill 0.0 : f32 : !qla.tile<256x64xf32, frag>
  %b = qla.fill 0.0 : f32 : !qla.tile<128x64xf32, frag>
  return
}

// -----

// Gemm roles decide how shared tiles are stored: as is, and read MN-major in a transposed role (a
// non-transposed B (K x N), a transposed A (K x M)) when the rows are a multiple of 128 bytes; else
// K-major for that role: stored transposed, and copied twice when also read as is.
// CHECK-LABEL: func.func @gemm_roles(
func.func @gemm_roles(%A: !qla.tensor<1024x128xbf16>) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  // CHECK: %[[A:.*]] = qla.copy {{.*}} -> !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  // B is 64 (K) x 128 (N), rows of 256 bytes: stored as is, read MN-major.
  // CHECK-NEXT: %[[B:.*]] = qla.copy {{.*}} -> !qla.tile<64x128xbf16, smem, #qla.swizzle<128>>
  // CHECK-NEXT: %[[BOTH:.*]] = qla.copy {{.*}} -> !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  // 64-byte rows: no MN-major read, so twice.
  // CHECK-NEXT: %[[BOTH32:.*]] = qla.copy {{.*}} -> !qla.tile<64x32xbf16, smem, #qla.swizzle<64>>
  // CHECK-NEXT: %[[BOTH32T:.*]] = qla.copy {{.*}} -> !qla.tile<64x32xbf16, smem, #qla.swizzle<128, transposed = true>>
  // Read as Aᵀ only (64 = K by 32 = M): stored transposed, once, as 32 rows of K = 64 bf16 (128 bytes).
  // CHECK-NEXT: %[[AT:.*]] = qla.copy {{.*}} -> !qla.tile<64x32xbf16, smem, #qla.swizzle<128, transposed = true>>
  %a = qla.copy %A[%c0, %c0] : !qla.tensor<1024x128xbf16> -> !qla.tile<64x64xbf16, smem>
  %b = qla.copy %A[%c0, %c0] : !qla.tensor<1024x128xbf16> -> !qla.tile<64x128xbf16, smem>
  %both = qla.copy %A[%c0, %c0] : !qla.tensor<1024x128xbf16> -> !qla.tile<64x64xbf16, smem>
  %both32 = qla.copy %A[%c0, %c0] : !qla.tensor<1024x128xbf16> -> !qla.tile<64x32xbf16, smem>
  %at = qla.copy %A[%c0, %c0] : !qla.tensor<1024x128xbf16> -> !qla.tile<64x32xbf16, smem>
  %acc = qla.fill 0.0 : f32 : !qla.tile<64x128xf32, frag>
  %acc2 = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag>
  %acc3 = qla.fill 0.0 : f32 : !qla.tile<32x64xf32, frag>
  // CHECK: qla.gemm %[[A]], %[[B]], %{{.*}} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x128xbf16, smem, #qla.swizzle<128>>
  %r = qla.gemm %a, %b, %acc : !qla.tile<64x64xbf16, smem>, !qla.tile<64x128xbf16, smem>, !qla.tile<64x128xf32, frag> -> !qla.tile<64x128xf32, frag>
  // CHECK: qla.gemm %[[BOTH]], %[[BOTH]], %{{.*}} {transpose_b}
  %r2 = qla.gemm %both, %both, %acc2 {transpose_b} : !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
  // CHECK: qla.gemm %[[BOTH]], %[[BOTH]], %{{.*}} :
  %r3 = qla.gemm %both, %both, %acc2 : !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
  // CHECK: qla.gemm %[[AT]], %[[BOTH]], %{{.*}} {transpose_a, transpose_b}
  %r4 = qla.gemm %at, %both, %acc3 {transpose_a, transpose_b} : !qla.tile<64x32xbf16, smem>, !qla.tile<64x64xbf16, smem>, !qla.tile<32x64xf32, frag> -> !qla.tile<32x64xf32, frag>
  // CHECK: qla.gemm %[[BOTH32]], %[[BOTH32]], %{{.*}} {transpose_b}
  %r6 = qla.gemm %both32, %both32, %acc2 {transpose_b} : !qla.tile<64x32xbf16, smem>, !qla.tile<64x32xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
  // CHECK: qla.gemm %[[A]], %[[BOTH32T]], %{{.*}} :
  %acc4 = qla.fill 0.0 : f32 : !qla.tile<64x32xf32, frag>
  %r7 = qla.gemm %a, %both32, %acc4 : !qla.tile<64x64xbf16, smem>, !qla.tile<64x32xbf16, smem>, !qla.tile<64x32xf32, frag> -> !qla.tile<64x32xf32, frag>
  // A register A spread like its accumulator stays in registers (wgmma reads it from there) ...
  // CHECK: %[[P:.*]] = qla.fill 1.000000e+00 : bf16 : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>
  // CHECK-NEXT: qla.gemm %[[P]], %[[BOTH]], %{{.*}} {transpose_b} : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>
  %p = qla.fill 1.0 : bf16 : !qla.tile<64x64xbf16, frag>
  %r5 = qla.gemm %p, %both, %acc2 {transpose_b} : !qla.tile<64x64xbf16, frag>, !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
  // ... one with K not a multiple of 16 is written to shared memory first.
  // CHECK: %[[Q:.*]] = qla.fill 1.000000e+00 : bf16 : !qla.tile<64x8xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>
  // CHECK: %[[QS:.*]] = qla.share %[[Q]] : !qla.tile<64x8xbf16, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x8xbf16, smem, #qla.swizzle<0>>
  // CHECK-NEXT: qla.gemm %[[QS]], %{{.*}}, %{{.*}} {transpose_b} : !qla.tile<64x8xbf16, smem, #qla.swizzle<0>>
  %q = qla.fill 1.0 : bf16 : !qla.tile<64x8xbf16, frag>
  %b8 = qla.smem_alloc : !qla.tile<64x8xbf16, smem>
  %r8 = qla.gemm %q, %b8, %acc2 {transpose_b} : !qla.tile<64x8xbf16, frag>, !qla.tile<64x8xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
  return
}

// -----

// A TMA ring is filled as the tensor is laid out: in a transposed role it is read MN-major (rows of
// 128 bytes and more) ...
// CHECK-LABEL: func.func @pipelined_tile_mn_major(
// CHECK: qla.slot {{.*}} -> !qla.tile<64x128xbf16, smem, #qla.swizzle<128>>
func.func @pipelined_tile_mn_major() attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %ring = qla.smem_alloc : !qla.tile<2x64x128xbf16, smem>
  %b = qla.slot %ring[%c0] : !qla.tile<2x64x128xbf16, smem> -> !qla.tile<64x128xbf16, smem>
  %a = qla.smem_alloc : !qla.tile<64x64xbf16, smem>
  %acc = qla.fill 0.0 : f32 : !qla.tile<64x128xf32, frag>
  %r = qla.gemm %a, %b, %acc : !qla.tile<64x64xbf16, smem>, !qla.tile<64x128xbf16, smem>, !qla.tile<64x128xf32, frag> -> !qla.tile<64x128xf32, frag>
  return
}

// -----

// ... and with shorter rows it cannot be read in a transposed role at all.
func.func @pipelined_tile_transposed() attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %ring = qla.smem_alloc : !qla.tile<2x64x32xbf16, smem>
  %b = qla.slot %ring[%c0] : !qla.tile<2x64x32xbf16, smem> -> !qla.tile<64x32xbf16, smem>
  %a = qla.smem_alloc : !qla.tile<64x64xbf16, smem>
  %acc = qla.fill 0.0 : f32 : !qla.tile<64x32xf32, frag>
  // expected-error @+1 {{'qla.gemm' op reads a TMA-pipelined tile in a transposed role (Aᵀ or a non-transposed B), which wgmma reads MN-major only with 16-bit elements and rows of a multiple of 128 bytes: load that tile without pipelining, or transpose the other operand}}
  %r = qla.gemm %a, %b, %acc : !qla.tile<64x64xbf16, smem>, !qla.tile<64x32xbf16, smem>, !qla.tile<64x32xf32, frag> -> !qla.tile<64x32xf32, frag>
  return
}

// -----

// Only kernels (qla.kernel) are touched.
// CHECK-LABEL: func.func @not_a_kernel(
// CHECK: qla.smem_alloc : !qla.tile<128x64xbf16, smem>
// CHECK-NEXT: qla.fill 0.000000e+00 : f32 : !qla.tile<128x64xf32, frag>
func.func @not_a_kernel() {
  %a = qla.smem_alloc : !qla.tile<128x64xbf16, smem>
  %b = qla.fill 0.0 : f32 : !qla.tile<128x64xf32, frag>
  return
}

// -----

// qla.slice_broadcasts: a vector a broadcast spreads into an accumulator fragment is made again in
// #qla.acc_slice (rows: along = 0, columns: along = 1). The copy from a read-only tensor goes right
// after the original and is shared by both broadcasts of its rows; the map goes right before its
// broadcast; the originals, read by nothing else, go. The attribute is consumed.
// CHECK-LABEL: func.func @slices(
// CHECK-NOT: qla.slice_broadcasts
// GONE-LABEL: func.func @slices(
// GONE-NOT: #qla.strided
// GONE: return
// CHECK-DAG: %[[ROWS:.*]] = qla.copy %{{.*}} : !qla.tensor<64x1xf32> -> !qla.tile<64x1xf32, frag, #qla.acc_slice<warpgroups = 1, along = 0>>
// CHECK-DAG: %[[COLS:.*]] = qla.copy %{{.*}} : !qla.tensor<64x1xf32> -> !qla.tile<64x1xf32, frag, #qla.acc_slice<warpgroups = 1, along = 1>>
// CHECK-NOT: #qla.strided
// CHECK: qla.broadcast %[[ROWS]] {dims = array<i64: 0, 1>} : !qla.tile<64x1xf32, frag, #qla.acc_slice<warpgroups = 1, along = 0>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
// CHECK: qla.broadcast %[[COLS]] {dims = array<i64: 1, 0>} : !qla.tile<64x1xf32, frag, #qla.acc_slice<warpgroups = 1, along = 1>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
// CHECK: %[[E:.*]] = qla.map %[[ROWS]] : !qla.tile<64x1xf32, frag, #qla.acc_slice<warpgroups = 1, along = 0>> -> !qla.tile<64x1xf32, frag, #qla.acc_slice<warpgroups = 1, along = 0>>
// CHECK: qla.broadcast %[[E]] {dims = array<i64: 0, 1>}
func.func @slices(%g: !qla.tensor<64x1xf32>, %o: !qla.tensor<64x64xf32>) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>, qla.slice_broadcasts} {
  %c0 = arith.constant 0 : index
  %v = qla.copy %g[%c0, %c0] : !qla.tensor<64x1xf32> -> !qla.tile<64x1xf32, frag>
  %r = qla.broadcast %v {dims = array<i64: 0, 1>} : !qla.tile<64x1xf32, frag> -> !qla.tile<64x64xf32, frag>
  %c = qla.broadcast %v {dims = array<i64: 1, 0>} : !qla.tile<64x1xf32, frag> -> !qla.tile<64x64xf32, frag>
  %e = qla.map %v : !qla.tile<64x1xf32, frag> -> !qla.tile<64x1xf32, frag> {
  ^bb0(%x: f32):
    %y = math.exp %x : f32
    qla.yield %y : f32
  }
  %er = qla.broadcast %e {dims = array<i64: 0, 1>} : !qla.tile<64x1xf32, frag> -> !qla.tile<64x64xf32, frag>
  %s = qla.map %r, %c, %er : !qla.tile<64x64xf32, frag>, !qla.tile<64x64xf32, frag>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag> {
  ^bb0(%a: f32, %b: f32, %d: f32):
    %t = arith.subf %a, %b : f32
    %u = arith.addf %t, %d : f32
    qla.yield %u : f32
  }
  qla.store %s, %o[%c0, %c0] : !qla.tile<64x64xf32, frag>, !qla.tensor<64x64xf32>
  return
}

// -----

// Without the attribute, broadcasts read strided vectors (exchanged through shared memory). A copy from
// a tensor the kernel writes is remade too (right after the original: no write comes between); the
// original stays for the store that reads it. A chain with a part that cannot be remade (a cumsum, an
// exchange) stays strided, and the clones made for its other parts go.
// CHECK-LABEL: func.func @no_slices(
// CHECK: qla.copy %{{.*}} -> !qla.tile<64x1xf32, frag, #qla.strided<threads = 128>>
// CHECK-LABEL: func.func @written_source(
// CHECK: qla.copy %{{.*}} -> !qla.tile<64x1xf32, frag, #qla.strided<threads = 128>>
// CHECK-NEXT: qla.copy %{{.*}} -> !qla.tile<64x1xf32, frag, #qla.acc_slice<warpgroups = 1, along = 0>>
// CHECK-LABEL: func.func @not_remade(
// CHECK-NOT: acc_slice
// CHECK: return
func.func @no_slices(%g: !qla.tensor<64x1xf32>, %o: !qla.tensor<64x64xf32>) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %v = qla.copy %g[%c0, %c0] : !qla.tensor<64x1xf32> -> !qla.tile<64x1xf32, frag>
  %r = qla.broadcast %v {dims = array<i64: 0, 1>} : !qla.tile<64x1xf32, frag> -> !qla.tile<64x64xf32, frag>
  qla.store %r, %o[%c0, %c0] : !qla.tile<64x64xf32, frag>, !qla.tensor<64x64xf32>
  return
}
func.func @written_source(%g: !qla.tensor<64x1xf32>, %o: !qla.tensor<64x64xf32>) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>, qla.slice_broadcasts} {
  %c0 = arith.constant 0 : index
  %v = qla.copy %g[%c0, %c0] : !qla.tensor<64x1xf32> -> !qla.tile<64x1xf32, frag>
  %r = qla.broadcast %v {dims = array<i64: 0, 1>} : !qla.tile<64x1xf32, frag> -> !qla.tile<64x64xf32, frag>
  qla.store %r, %o[%c0, %c0] : !qla.tile<64x64xf32, frag>, !qla.tensor<64x64xf32>
  qla.store %v, %g[%c0, %c0] : !qla.tile<64x1xf32, frag>, !qla.tensor<64x1xf32>
  return
}
func.func @not_remade(%g: !qla.tensor<64x1xf32>, %o: !qla.tensor<64x64xf32>) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>, qla.slice_broadcasts} {
  %c0 = arith.constant 0 : index
  %v = qla.copy %g[%c0, %c0] : !qla.tensor<64x1xf32> -> !qla.tile<64x1xf32, frag>
  %s = qla.cumsum %v, 0 : !qla.tile<64x1xf32, frag>
  %m = qla.map %v, %s : !qla.tile<64x1xf32, frag>, !qla.tile<64x1xf32, frag> -> !qla.tile<64x1xf32, frag> {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %a, %b : f32
    qla.yield %t : f32
  }
  %r = qla.broadcast %m {dims = array<i64: 0, 1>} : !qla.tile<64x1xf32, frag> -> !qla.tile<64x64xf32, frag>
  qla.store %r, %o[%c0, %c0] : !qla.tile<64x64xf32, frag>, !qla.tensor<64x64xf32>
  return
}

// -----

// A read of a shared tile (a column, transposed to a row) is remade like a copy: right after the
// original, so a ring slot it reads is not released before it; the map on it right before its broadcast.
// CHECK-LABEL: func.func @read_slices(
// CHECK: %[[T:.*]] = qla.smem_alloc
// CHECK-NEXT: %[[R:.*]] = qla.read %[[T]][%{{.*}}, %{{.*}}] {transpose} : !qla.tile<64x4xf32, smem, #qla.swizzle<0>> -> !qla.tile<1x64xf32, frag, #qla.acc_slice<warpgroups = 1, along = 1>>
// CHECK: %[[E:.*]] = qla.map %[[R]] : !qla.tile<1x64xf32, frag, #qla.acc_slice<warpgroups = 1, along = 1>>
// CHECK: qla.broadcast %[[E]] {dims = array<i64: 0, 1>} : !qla.tile<1x64xf32, frag, #qla.acc_slice<warpgroups = 1, along = 1>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
// GONE-LABEL: func.func @read_slices(
// GONE-NOT: #qla.strided
// GONE: return
func.func @read_slices(%o: !qla.tensor<64x64xf32>) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>, qla.slice_broadcasts, qla.smem_bytes = 1024 : i64} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %t = qla.smem_alloc {offset = 0 : i64} : !qla.tile<64x4xf32, smem, #qla.swizzle<0>>
  %g = qla.read %t[%c0, %c2] {transpose} : !qla.tile<64x4xf32, smem, #qla.swizzle<0>> -> !qla.tile<1x64xf32, frag>
  %e = qla.map %g : !qla.tile<1x64xf32, frag> -> !qla.tile<1x64xf32, frag> {
  ^bb0(%x: f32):
    %y = math.exp %x : f32
    qla.yield %y : f32
  }
  %b = qla.broadcast %e {dims = array<i64: 0, 1>} : !qla.tile<1x64xf32, frag> -> !qla.tile<64x64xf32, frag>
  qla.store %b, %o[%c0, %c0] : !qla.tile<64x64xf32, frag>, !qla.tensor<64x64xf32>
  return
}
