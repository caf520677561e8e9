// RUN: qla-opt %s -qla-convert-to-nvvm -split-input-file | FileCheck %s

// A = Xᵀ with X stored row-major [K = 64][M = 128] (128-byte swizzle, two 64-column blocks of 8192 bytes):
// wgmma reads it MN-major (layout col = the transpose bit). Per 64-row block mb of M and 16-step kk of K
// the descriptor starts at mb·8192 + kk·2048; its leading byte offset is the column-block distance
// (8192 >> 4 = 512, bits 16-29), its stride byte offset 1024 (>> 4 = 64, bits 32-45), mode 1 (128-byte
// swizzle, bits 62-63): (512 << 16) | (64 << 32) | (1 << 62) = 4611686293338849280. B (K-major, stored
// [N = 64][K = 64]) keeps layout col and its K-major constant.
// CHECK-LABEL: func.func @a_transposed(
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: %[[MN:.*]] = arith.constant 4611686293338849280 : i64
// CHECK-NEXT: %[[DA:.*]] = arith.ori %{{.*}}, %[[MN]] : i64
// CHECK-NEXT: nvvm.wgmma.mma_async %[[DA]], %{{.*}}, A[<bf16>, <one>, <col>], B[<bf16>, <one>, <col>]
// CHECK-COUNT-7: nvvm.wgmma.mma_async {{.*}} A[<bf16>, <one>, <col>], B[<bf16>, <one>, <col>]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
func.func @a_transposed() attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 33792 : i64} {
  %x = qla.smem_alloc {offset = 0 : i64} : !qla.tile<64x128xbf16, smem, #qla.swizzle<128>>
  %b = qla.smem_alloc {offset = 16384 : i64} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128, transposed = true>>
  %acc = qla.fill 0.0 : f32 : !qla.tile<128x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  %r = qla.gemm %x, %b, %acc {transpose_a} : !qla.tile<64x128xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128, transposed = true>>, !qla.tile<128x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<128x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  return
}

// -----

// B stored row-major [K = 64][N = 64] and read as is (A·B): MN-major B, layout row (the transpose bit).
// The accumulator is a zero fill: the first k-step scales it by zero (D <zero>) instead of reading
// zeroed registers; the other steps accumulate (D <one>).
// CHECK-LABEL: func.func @b_row_major(
// CHECK: nvvm.wgmma.mma_async {{.*}} D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}} D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK-NOT: nvvm.wgmma.mma_async
func.func @b_row_major() attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 17408 : i64} {
  %a = qla.smem_alloc {offset = 0 : i64} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  %b = qla.smem_alloc {offset = 8192 : i64} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  %acc = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  %r = qla.gemm %a, %b, %acc : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  return
}

// -----

// A non-zero accumulator is read by every k-step.
// CHECK-LABEL: func.func @ones_acc(
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} D[<f32>, <one>]
// CHECK-NOT: nvvm.wgmma.mma_async
func.func @ones_acc() attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 17408 : i64} {
  %a = qla.smem_alloc {offset = 0 : i64} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  %b = qla.smem_alloc {offset = 8192 : i64} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  %acc = qla.fill 1.0 : f32 : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  %r = qla.gemm %a, %b, %acc : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  return
}

// -----

// A from registers (a bf16 fragment spread like the accumulator): wgmma's register form through inline
// PTX, one per 16-step of K (four for K = 64), each taking A's elements 8kk .. 8kk+7 as four 32-bit
// registers and B by descriptor. A zero accumulator is scaled by zero on the first step only. A's
// registers are all packed before the fence (written after it, ptxas would serialise the wgmmas).
// CHECK-LABEL: func.func @register_a(
// CHECK-COUNT-16: llvm.bitcast %{{.*}} : vector<2xbf16> to i32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-NOT: llvm.bitcast
// CHECK: llvm.inline_asm has_side_effects {{.*}}"{\0A.reg .pred p;\0Asetp.ne.b32 p, $69, 0;\0Awgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0, $1,{{.*}}$31}, {$64, $65, $66, $67}, $68, p, 1, 1, 0;\0A}", "=f,{{.*}},0,1,{{.*}},31,r,r,r,r,l,r"
// CHECK-COUNT-3: llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK-NOT: llvm.inline_asm
// CHECK: nvvm.wgmma.commit.group.sync.aligned
func.func @register_a() attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 9216 : i64} {
  %a = qla.fill 1.0 : bf16 : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>
  %b = qla.smem_alloc {offset = 0 : i64} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  %acc = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  %r = qla.gemm %a, %b, %acc {transpose_b} : !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  return
}

// -----

// k_slices = [1, 3]: only K's 16-wide slices 1 and 3 are issued (two wgmma, not four). B (MN-major)
// starts at 1·16 rows of 128 bytes (2048) and 3·16 (6144), A (K-major) 32 and 96 bytes into its rows;
// the first issued step, not slice 0, scales the zero accumulator by zero.
// CHECK-LABEL: func.func @k_slices(
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: arith.constant 2048 : i64
// CHECK: arith.constant 32 : i64
// CHECK: nvvm.wgmma.mma_async {{.*}} D[<f32>, <zero>]
// CHECK: arith.constant 6144 : i64
// CHECK: arith.constant 96 : i64
// CHECK: nvvm.wgmma.mma_async {{.*}} D[<f32>, <one>]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
func.func @k_slices() attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 17408 : i64} {
  %a = qla.smem_alloc {offset = 0 : i64} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  %b = qla.smem_alloc {offset = 8192 : i64} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  %acc = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  %r = qla.gemm %a, %b, %acc {k_slices = array<i64: 1, 3>} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  return
}
