// RUN: qla-opt %s | qla-opt | FileCheck %s
// RUN: qla-opt %s -mlir-print-op-generic | qla-opt | FileCheck %s

// Every qla type, attribute and op survives print -> parse -> print (custom and generic form).

// CHECK: module attributes {qla.abi = {k = {block = array<i64: 128, 1, 1>, params = []}}}
module attributes {qla.abi = {k = {block = array<i64: 128, 1, 1>, params = []}}} {

// CHECK-LABEL: func.func @types(
// CHECK-SAME: %{{.*}}: !qla.tensor<?x128xbf16>
// CHECK-SAME: %{{.*}}: !qla.tensor<4x8x16xf16, strides = [256, 32, 1]>
// CHECK-SAME: %{{.*}}: !qla.tensor<?x?xf32, strides = [?, 1]>
// CHECK-SAME: %{{.*}}: !qla.tensor<8xf64>
// CHECK-SAME: %{{.*}}: !qla.tensor<8x8xi32>
// CHECK-SAME: %{{.*}}: !qla.tensor<1x2x3x4x64xi8>
// CHECK-SAME: attributes {qla.block = array<i64: 256, 1, 1>, qla.grid = array<i64: 4, 2, 1>, qla.kernel, qla.smem_bytes = 65536 : i64, swz = #qla.swizzle<64>, wg = #qla.wgmma_acc<warpgroups = 3>}
func.func @types(%a: !qla.tensor<?x128xbf16>, %b: !qla.tensor<4x8x16xf16, strides = [256, 32, 1]>,
                 %c: !qla.tensor<?x?xf32, strides = [?, 1]>, %d: !qla.tensor<8xf64>,
                 %e: !qla.tensor<8x8xi32>, %f: !qla.tensor<1x2x3x4x64xi8>)
    attributes {qla.kernel, qla.grid = array<i64: 4, 2, 1>, qla.block = array<i64: 256, 1, 1>,
                qla.smem_bytes = 65536 : i64, swz = #qla.swizzle<64>, wg = #qla.wgmma_acc<warpgroups = 3>} {
  // CHECK: qla.smem_alloc {offset = 1024 : i64} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  %t0 = qla.smem_alloc {offset = 1024 : i64} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  // CHECK: qla.smem_alloc : !qla.tile<2x64x32xbf16, smem, #qla.swizzle<64>>
  %t1 = qla.smem_alloc : !qla.tile<2x64x32xbf16, smem, #qla.swizzle<64>>
  // CHECK: qla.smem_alloc : !qla.tile<16x16xf16, smem, #qla.swizzle<32>>
  %t2 = qla.smem_alloc : !qla.tile<16x16xf16, smem, #qla.swizzle<32>>
  // CHECK: qla.smem_alloc : !qla.tile<8x4xf32, smem, #qla.swizzle<0>>
  %t3 = qla.smem_alloc : !qla.tile<8x4xf32, smem, #qla.swizzle<0>>
  // CHECK: qla.smem_alloc : !qla.tile<1x2x3x4xi8, smem>
  %t4 = qla.smem_alloc : !qla.tile<1x2x3x4xi8, smem>
  // CHECK: qla.fill 1.500000e+00 : f32 : !qla.tile<192x64xf32, frag, #qla.wgmma_acc<warpgroups = 3>>
  %f0 = qla.fill 1.5 : f32 : !qla.tile<192x64xf32, frag, #qla.wgmma_acc<warpgroups = 3>>
  // CHECK: qla.fill 7 : i32 : !qla.tile<16xi32, frag>
  %f1 = qla.fill 7 : i32 : !qla.tile<16xi32, frag>
  // CHECK: qla.fill 2.500000e-01 : f64 : !qla.tile<4x4xf64, frag>
  %f2 = qla.fill 0.25 : f64 : !qla.tile<4x4xf64, frag>
  // CHECK: qla.fill 0.000000e+00 : f32 : !qla.tile<100xf32, frag, #qla.strided<threads = 256>>
  %f3 = qla.fill 0.0 : f32 : !qla.tile<100xf32, frag, #qla.strided<threads = 256>>
  // CHECK: qla.smem_alloc {qla.smem_offset = 2048 : i64} : !qla.tile<64x32xbf16, smem, #qla.swizzle<128, transposed = true>>
  %t5 = qla.smem_alloc {qla.smem_offset = 2048 : i64} : !qla.tile<64x32xbf16, smem, #qla.swizzle<128, transposed = true>>
  // transposed = false is the default and not printed.
  // CHECK: qla.smem_alloc : !qla.tile<32x64xbf16, smem, #qla.swizzle<128>>
  %t6 = qla.smem_alloc : !qla.tile<32x64xbf16, smem, #qla.swizzle<128, transposed = false>>
  return
}

// A grid taken at launch (-1), and the scratch region the lowering of exchanges uses.
// CHECK-LABEL: func.func @launch_grid()
// CHECK-SAME: attributes {qla.block = array<i64: 128, 1, 1>, qla.grid = array<i64: -1, 4, 1>, qla.kernel, qla.scratch_offset = 4096 : i64}
func.func @launch_grid() attributes {qla.kernel, qla.grid = array<i64: -1, 4, 1>, qla.block = array<i64: 128, 1, 1>,
                                     qla.scratch_offset = 4096 : i64} {
  return
}

// CHECK-LABEL: func.func @tile_ops(
func.func @tile_ops(%A: !qla.tensor<256x128xbf16> {qla.name = "A"}, %B: !qla.tensor<128x128xbf16> {qla.name = "B"},
                    %C: !qla.tensor<256x128xbf16>)
    attributes {qla.kernel, qla.grid = array<i64: 1, 2, 1>, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  // CHECK: %[[BX:.*]] = qla.block_id 0
  // CHECK: qla.block_id 1
  // CHECK: qla.block_id 2
  %bx = qla.block_id 0
  %by = qla.block_id 1
  %bz = qla.block_id 2
  // CHECK: %[[ACC0:.*]] = qla.fill 0.000000e+00 : f32 : !qla.tile<128x128xf32, frag>
  %acc0 = qla.fill 0.0 : f32 : !qla.tile<128x128xf32, frag>
  // CHECK: %[[LOOP:.*]] = qla.for %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC0]] : !qla.tile<128x128xf32, frag>) -> !qla.tile<128x128xf32, frag> {
  // CHECK-NEXT: ^bb0(%[[K:.*]]: index, %[[ACC:.*]]: !qla.tile<128x128xf32, frag>):
  %acc = qla.for %c0 to %c2 step %c1 iter_args(%acc0 : !qla.tile<128x128xf32, frag>) -> !qla.tile<128x128xf32, frag> {
  ^bb0(%k: index, %a_acc: !qla.tile<128x128xf32, frag>):
    %k0 = arith.muli %k, %c64 : index
    // CHECK: %[[A:.*]] = qla.copy %{{.*}}[%[[BX]], %{{.*}}] : !qla.tensor<256x128xbf16> -> !qla.tile<128x64xbf16, smem>
    %a = qla.copy %A[%bx, %k0] : !qla.tensor<256x128xbf16> -> !qla.tile<128x64xbf16, smem>
    // CHECK: %[[B:.*]] = qla.copy %{{.*}} : !qla.tensor<128x128xbf16> -> !qla.tile<128x64xbf16, smem>
    %b = qla.copy %B[%by, %k0] : !qla.tensor<128x128xbf16> -> !qla.tile<128x64xbf16, smem>
    // CHECK: %[[R:.*]] = qla.gemm %[[A]], %[[B]], %[[ACC]] {transpose_b} : !qla.tile<128x64xbf16, smem>, !qla.tile<128x64xbf16, smem>, !qla.tile<128x128xf32, frag> -> !qla.tile<128x128xf32, frag>
    %r = qla.gemm %a, %b, %a_acc {transpose_b} : !qla.tile<128x64xbf16, smem>, !qla.tile<128x64xbf16, smem>, !qla.tile<128x128xf32, frag> -> !qla.tile<128x128xf32, frag>
    // CHECK: qla.yield %[[R]] : !qla.tile<128x128xf32, frag>
    qla.yield %r : !qla.tile<128x128xf32, frag>
  // CHECK-NEXT: } {stages = 3 : i64}
  } {stages = 3 : i64}
  // A loop without iter_args and the default stages = 1.
  // CHECK: qla.for %{{.*}} to %{{.*}} step %{{.*}} {
  // CHECK-NEXT: ^bb0(%{{.*}}: index):
  // CHECK-NEXT: qla.block_id 0
  // CHECK-NEXT: }
  // CHECK-NOT: stages
  qla.for %c0 to %c2 step %c1 {
  ^bb0(%i: index):
    %x = qla.block_id 0
    qla.yield
  }
  // CHECK: %[[SUM:.*]] = qla.map %[[LOOP]], %[[LOOP]] : !qla.tile<128x128xf32, frag>, !qla.tile<128x128xf32, frag> -> !qla.tile<128x128xf32, frag> {
  // CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32):
  // CHECK-NEXT: %[[S:.*]] = arith.addf %[[X]], %[[Y]] : f32
  // CHECK-NEXT: qla.yield %[[S]] : f32
  // CHECK-NEXT: }
  %sum = qla.map %acc, %acc : !qla.tile<128x128xf32, frag>, !qla.tile<128x128xf32, frag> -> !qla.tile<128x128xf32, frag> {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    qla.yield %s : f32
  }
  // CHECK: %[[O:.*]] = qla.map %[[SUM]] : !qla.tile<128x128xf32, frag> -> !qla.tile<128x128xbf16, frag> {
  // CHECK: arith.truncf %{{.*}} : f32 to bf16
  %o = qla.map %sum : !qla.tile<128x128xf32, frag> -> !qla.tile<128x128xbf16, frag> {
  ^bb0(%x: f32):
    %y = arith.truncf %x : f32 to bf16
    qla.yield %y : bf16
  }
  // CHECK: qla.store %[[O]], %{{.*}}[%[[BX]], %{{.*}}] : !qla.tile<128x128xbf16, frag>, !qla.tensor<256x128xbf16>
  qla.store %o, %C[%bx, %c0] : !qla.tile<128x128xbf16, frag>, !qla.tensor<256x128xbf16>
  // Transposed (2-D): tile (i, j) <-> tensor (row + j, col + i).
  // CHECK: qla.store %[[O]], %{{.*}}[%[[BX]], %{{.*}}] {transpose} : !qla.tile<128x128xbf16, frag>, !qla.tensor<256x128xbf16>
  qla.store %o, %C[%bx, %c0] {transpose} : !qla.tile<128x128xbf16, frag>, !qla.tensor<256x128xbf16>
  // CHECK: qla.copy %{{.*}}[%[[BX]], %{{.*}}] {transpose} : !qla.tensor<256x128xbf16> -> !qla.tile<128x128xbf16, frag>
  %ot = qla.copy %C[%bx, %c0] {transpose} : !qla.tensor<256x128xbf16> -> !qla.tile<128x128xbf16, frag>
  // A box's lines into L2, with and without bounds.
  // CHECK: qla.prefetch %{{.*}}[%[[BX]], %{{.*}}] {shape = array<i64: 64, 1>} : !qla.tensor<256x128xbf16>
  qla.prefetch %C[%bx, %c0] {shape = array<i64: 64, 1>} : !qla.tensor<256x128xbf16>
  // CHECK: qla.prefetch %{{.*}}[%[[BX]], %{{.*}}] bounds[%{{.*}}, %{{.*}}] {shape = array<i64: 64, 4>} : !qla.tensor<256x128xbf16>
  qla.prefetch %C[%bx, %c0] bounds[%bx, %c0] {shape = array<i64: 64, 4>} : !qla.tensor<256x128xbf16>
  // A box of a shared tile into registers (transposed: a column as a row), and one element of it.
  // CHECK: %[[G:.*]] = qla.copy %{{.*}}[%[[BX]], %{{.*}}] : !qla.tensor<256x128xbf16> -> !qla.tile<64x4xbf16, smem>
  %g = qla.copy %C[%bx, %c0] : !qla.tensor<256x128xbf16> -> !qla.tile<64x4xbf16, smem>
  // CHECK: qla.read %[[G]][%{{.*}}, %[[BX]]] {transpose} : !qla.tile<64x4xbf16, smem> -> !qla.tile<1x64xbf16, frag>
  %row = qla.read %g[%c0, %bx] {transpose} : !qla.tile<64x4xbf16, smem> -> !qla.tile<1x64xbf16, frag>
  // CHECK: qla.read %[[G]][%[[BX]], %{{.*}}] : !qla.tile<64x4xbf16, smem> -> bf16
  %one = qla.read %g[%bx, %c0] : !qla.tile<64x4xbf16, smem> -> bf16
  return
}

// CHECK-LABEL: func.func @target_ops(
// CHECK-SAME: %[[T:.*]]: !qla.tensor<512x64xbf16>, %[[DESC:.*]]: !llvm.ptr)
func.func @target_ops(%A: !qla.tensor<512x64xbf16>, %desc: !llvm.ptr) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: %[[BAR:.*]] = nvgpu.mbarrier.create
  %bar = nvgpu.mbarrier.create -> !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
  // CHECK: %[[RING:.*]] = qla.smem_alloc {offset = 2048 : i64} : !qla.tile<2x128x64xbf16, smem, #qla.swizzle<128>>
  %ring = qla.smem_alloc {offset = 2048 : i64} : !qla.tile<2x128x64xbf16, smem, #qla.swizzle<128>>
  // CHECK: %[[SLOT:.*]] = qla.slot %[[RING]][%{{.*}}] : !qla.tile<2x128x64xbf16, smem, #qla.swizzle<128>> -> !qla.tile<128x64xbf16, smem, #qla.swizzle<128>>
  %slot = qla.slot %ring[%c1] : !qla.tile<2x128x64xbf16, smem, #qla.swizzle<128>> -> !qla.tile<128x64xbf16, smem, #qla.swizzle<128>>
  // CHECK: qla.tma_load %[[T]][%{{.*}}, %{{.*}}], %[[SLOT]], %[[BAR]][%{{.*}}] : !qla.tensor<512x64xbf16>, !qla.tile<128x64xbf16, smem, #qla.swizzle<128>>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
  qla.tma_load %A[%c1, %c0], %slot, %bar[%c1] : !qla.tensor<512x64xbf16>, !qla.tile<128x64xbf16, smem, #qla.swizzle<128>>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
  // CHECK: qla.tma_load %[[T]][%{{.*}}, %{{.*}}], %[[SLOT]], %[[BAR]][%{{.*}}] descriptor %[[DESC]] : !llvm.ptr : !qla.tensor<512x64xbf16>
  qla.tma_load %A[%c0, %c0], %slot, %bar[%c0] descriptor %desc : !llvm.ptr : !qla.tensor<512x64xbf16>, !qla.tile<128x64xbf16, smem, #qla.swizzle<128>>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
  // CHECK: %[[ACC:.*]] = qla.fill 0.000000e+00 : f32 : !qla.tile<64x128xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  %acc = qla.fill 0.0 : f32 : !qla.tile<64x128xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  %a = qla.smem_alloc {offset = 0 : i64} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
  // CHECK: qla.gemm %{{.*}}, %[[SLOT]], %[[ACC]] {async, transpose_b}
  %r = qla.gemm %a, %slot, %acc {async, transpose_b} : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<128x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x128xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x128xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  // A·B without transpose: B is K x N.
  %bk = qla.smem_alloc {offset = 16384 : i64} : !qla.tile<64x128xbf16, smem>
  // CHECK: qla.gemm %{{.*}}, %{{.*}}, %[[ACC]] : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x128xbf16, smem>,
  %r2 = qla.gemm %a, %bk, %acc : !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>, !qla.tile<64x128xbf16, smem>, !qla.tile<64x128xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x128xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  // CHECK: qla.async_wait 1
  qla.async_wait 1
  // CHECK: qla.async_wait 0
  qla.async_wait 0
  return
}

// CHECK-LABEL: func.func @gdn_ops(
// CHECK-SAME: %[[K:[^:]*]]: !qla.tensor<?x64xbf16>, %[[CU:[^:]*]]: !qla.tensor<5xi64>, %[[G:[^:]*]]: !qla.tensor<?xf32>, %[[O:[^:]*]]: !qla.tensor<?x64xbf16>)
func.func @gdn_ops(%K: !qla.tensor<?x64xbf16>, %cu: !qla.tensor<5xi64>, %g: !qla.tensor<?xf32>, %O: !qla.tensor<?x64xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: %[[T:.*]] = qla.dim %[[K]], 0 : !qla.tensor<?x64xbf16>
  %t = qla.dim %K, 0 : !qla.tensor<?x64xbf16>
  // CHECK: %[[BOS:.*]] = qla.load %[[CU]][%{{.*}}] : !qla.tensor<5xi64> -> index
  // CHECK: %[[EOS:.*]] = qla.load %[[CU]][%{{.*}}] : !qla.tensor<5xi64> -> index
  // CHECK: qla.load %[[G]][%[[BOS]]] : !qla.tensor<?xf32> -> f32
  %bos = qla.load %cu[%c0] : !qla.tensor<5xi64> -> index
  %eos = qla.load %cu[%c1] : !qla.tensor<5xi64> -> index
  %g0 = qla.load %g[%bos] : !qla.tensor<?xf32> -> f32
  // A box ending at the sequence end: copy and store with bounds.
  // CHECK: %[[KS:.*]] = qla.copy %[[K]][%[[BOS]], %{{.*}}] bounds[%[[EOS]], %[[T]]] : !qla.tensor<?x64xbf16> -> !qla.tile<64x64xbf16, smem>
  %ks = qla.copy %K[%bos, %c0] bounds [%eos, %t] : !qla.tensor<?x64xbf16> -> !qla.tile<64x64xbf16, smem>
  // A copy into registers.
  // CHECK: %[[KR:.*]] = qla.copy %[[K]][%[[BOS]], %{{.*}}] : !qla.tensor<?x64xbf16> -> !qla.tile<64x64xbf16, frag>
  %kr = qla.copy %K[%bos, %c0] : !qla.tensor<?x64xbf16> -> !qla.tile<64x64xbf16, frag>
  // CHECK: %[[GR:.*]] = qla.copy %[[G]][%[[BOS]]] bounds[%[[EOS]]] : !qla.tensor<?xf32> -> !qla.tile<64xf32, frag>
  %gr = qla.copy %g[%bos] bounds [%eos] : !qla.tensor<?xf32> -> !qla.tile<64xf32, frag>
  // CHECK: %[[GC:.*]] = qla.cumsum %[[GR]], 0 : !qla.tile<64xf32, frag>
  %gc = qla.cumsum %gr, 0 : !qla.tile<64xf32, frag>
  // CHECK: %[[ROWS:.*]] = qla.broadcast %[[GC]] {dims = array<i64: 0>} : !qla.tile<64xf32, frag> -> !qla.tile<64x64xf32, frag>
  // CHECK: %[[COLS:.*]] = qla.broadcast %[[GC]] {dims = array<i64: 1>} : !qla.tile<64xf32, frag> -> !qla.tile<64x64xf32, frag>
  %rows = qla.broadcast %gc {dims = array<i64: 0>} : !qla.tile<64xf32, frag> -> !qla.tile<64x64xf32, frag>
  %cols = qla.broadcast %gc {dims = array<i64: 1>} : !qla.tile<64xf32, frag> -> !qla.tile<64x64xf32, frag>
  // CHECK: %[[I:.*]] = qla.iota 0 : !qla.tile<64x64xi32, frag>
  // CHECK: %[[J:.*]] = qla.iota 1 : !qla.tile<64x64xi32, frag>
  %i = qla.iota 0 : !qla.tile<64x64xi32, frag>
  %j = qla.iota 1 : !qla.tile<64x64xi32, frag>
  // CHECK: %[[A:.*]] = qla.gemm %[[KS]], %[[KS]], %{{.*}} {transpose_b}
  %z = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, frag>
  %a = qla.gemm %ks, %ks, %z {transpose_b} : !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
  // CHECK: qla.gemm %[[KS]], %[[KS]], %{{.*}} {k_slices = array<i64: 1, 3>, transpose_b}
  %half = qla.gemm %ks, %ks, %z {k_slices = array<i64: 1, 3>, transpose_b} : !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
  // CHECK: %[[INV:.*]] = qla.tri_inverse %[[A]] : !qla.tile<64x64xf32, frag>
  %inv = qla.tri_inverse %a : !qla.tile<64x64xf32, frag>
  // CHECK: %[[ST:.*]] = qla.stash %[[A]] : !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, smem>
  // CHECK: qla.unstash %[[ST]] : !qla.tile<64x64xf32, smem> -> !qla.tile<64x64xf32, frag>
  %st = qla.stash %a : !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, smem>
  %un = qla.unstash %st : !qla.tile<64x64xf32, smem> -> !qla.tile<64x64xf32, frag>
  // CHECK: qla.reduce add %[[INV]], 1 : !qla.tile<64x64xf32, frag> -> !qla.tile<64xf32, frag>
  // CHECK: qla.reduce max %[[INV]], 0 : !qla.tile<64x64xf32, frag> -> !qla.tile<64xf32, frag>
  %sum = qla.reduce add %inv, 1 : !qla.tile<64x64xf32, frag> -> !qla.tile<64xf32, frag>
  %mx = qla.reduce max %inv, 0 : !qla.tile<64x64xf32, frag> -> !qla.tile<64xf32, frag>
  // CHECK: qla.map %[[INV]], %[[ROWS]], %[[COLS]], %[[I]], %[[J]] :
  %m = qla.map %inv, %rows, %cols, %i, %j : !qla.tile<64x64xf32, frag>, !qla.tile<64x64xf32, frag>, !qla.tile<64x64xf32, frag>, !qla.tile<64x64xi32, frag>, !qla.tile<64x64xi32, frag> -> !qla.tile<64x64xbf16, frag> {
  ^bb0(%x: f32, %r: f32, %c: f32, %ii: i32, %jj: i32):
    %d = arith.subf %r, %c : f32
    %e = math.exp %d : f32
    %y = arith.mulf %x, %e : f32
    %ok = arith.cmpi sge, %ii, %jj : i32
    %zero = arith.constant 0.0 : f32
    %v = arith.select %ok, %y, %zero : f32
    %b = arith.truncf %v : f32 to bf16
    qla.yield %b : bf16
  }
  // CHECK: %[[SH:.*]] = qla.share %{{.*}} : !qla.tile<64x64xbf16, frag> -> !qla.tile<64x64xbf16, smem>
  %sh = qla.share %m : !qla.tile<64x64xbf16, frag> -> !qla.tile<64x64xbf16, smem>
  // Aᵀ·B from shared memory, and a register A.
  // CHECK: qla.gemm %[[SH]], %[[KS]], %{{.*}} {transpose_a} : !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xbf16, smem>
  %p = qla.gemm %sh, %ks, %z {transpose_a} : !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
  // CHECK: qla.gemm %[[KR]], %[[KS]], %{{.*}} : !qla.tile<64x64xbf16, frag>, !qla.tile<64x64xbf16, smem>
  %q = qla.gemm %kr, %ks, %z : !qla.tile<64x64xbf16, frag>, !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
  // CHECK: qla.store %{{.*}}, %[[O]][%[[BOS]], %{{.*}}] bounds[%[[EOS]], %[[T]]] : !qla.tile<64x64xbf16, frag>, !qla.tensor<?x64xbf16>
  qla.store %m, %O[%bos, %c0] bounds [%eos, %t] : !qla.tile<64x64xbf16, frag>, !qla.tensor<?x64xbf16>
  return
}

}
