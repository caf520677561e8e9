// RUN: qla-opt %s -qla-assign-layouts -split-input-file | FileCheck %s

// Shared tiles get the swizzle equal to their row size in bytes (128, 64 or 32), else 0; 2-D fragments
// get the wgmma accumulator layout over as many of the kernel's warpgroups as divide their rows in
// blocks of 64.

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
  // 128 bf16 = 256 bytes: wider than any span.
  // CHECK-NEXT: qla.smem_alloc : !qla.tile<64x128xbf16, smem, #qla.swizzle<0>>
  %e = qla.smem_alloc : !qla.tile<64x128xbf16, smem>
  // The ring's slot rows decide: 64 bf16 = 128 bytes, and the slot gets the same layout.
  // CHECK-NEXT: %[[RING:.*]] = qla.smem_alloc : !qla.tile<3x128x64xbf16, smem, #qla.swizzle<128>>
  // CHECK: qla.slot %[[RING]][%{{.*}}] : !qla.tile<3x128x64xbf16, smem, #qla.swizzle<128>> -> !qla.tile<128x64xbf16, smem, #qla.swizzle<128>>
  %ring = qla.smem_alloc : !qla.tile<3x128x64xbf16, smem>
  %c1 = arith.constant 1 : index
  %s = qla.slot %ring[%c1] : !qla.tile<3x128x64xbf16, smem> -> !qla.tile<128x64xbf16, smem>
  // A layout already chosen is kept.
  // CHECK: qla.smem_alloc : !qla.tile<128x64xbf16, smem, #qla.swizzle<32>>
  %f = qla.smem_alloc : !qla.tile<128x64xbf16, smem, #qla.swizzle<32>>
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
  // Loop results and block arguments too, and the gemm's smem operands.
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
  // 64 rows cannot be split over 2 warpgroups in blocks of 64: one warpgroup.
  // CHECK: qla.fill 0.000000e+00 : f32 : !qla.tile<64x128xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  %f1 = qla.fill 0.0 : f32 : !qla.tile<64x128xf32, frag>
  // 192 rows: 192 is not a multiple of 128, so one warpgroup owns all three 64-row blocks.
  // CHECK: qla.fill 0.000000e+00 : f32 : !qla.tile<192x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  %f2 = qla.fill 0.0 : f32 : !qla.tile<192x64xf32, frag>
  // Columns not a multiple of 8, more than 256 columns, 1-D, or rows not a multiple of 64: no layout.
  // CHECK: qla.fill 0.000000e+00 : f32 : !qla.tile<128x12xf32, frag>
  // CHECK: qla.fill 0.000000e+00 : f32 : !qla.tile<128x264xf32, frag>
  // CHECK: qla.fill 0.000000e+00 : f32 : !qla.tile<128xf32, frag>
  // CHECK: qla.fill 0.000000e+00 : f32 : !qla.tile<96x64xf32, frag>
  %f3 = qla.fill 0.0 : f32 : !qla.tile<128x12xf32, frag>
  %f4 = qla.fill 0.0 : f32 : !qla.tile<128x264xf32, frag>
  %f5 = qla.fill 0.0 : f32 : !qla.tile<128xf32, frag>
  %f6 = qla.fill 0.0 : f32 : !qla.tile<96x64xf32, frag>
  return
}

// -----

// Four warpgroups: 256 rows take all four; 128 rows take two.
// CHECK-LABEL: func.func @four_warpgroups(
// CHECK: !qla.tile<256x64xf32, frag, #qla.wgmma_acc<warpgroups = 4>>
// CHECK: !qla.tile<128x64xf32, frag, #qla.wgmma_acc<warpgroups = 2>>
func.func @four_warpgroups() attributes {qla.kernel, qla.block = array<i64: 512, 1, 1>} {
  %a = qla.fill 0.0 : f32 : !qla.tile<256x64xf32, frag>
  %b = qla.fill 0.0 : f32 : !qla.tile<128x64xf32, frag>
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
