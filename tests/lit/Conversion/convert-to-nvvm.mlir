// RUN: qla-opt %s -qla-convert-to-nvvm | FileCheck %s

// A kernel at the target level (what qla-pipeline, qla-assign-layouts and qla-plan-smem leave) lowered
// to LLVM/NVVM-level ops. Upstream passes lower the rest (nvgpu, scf, arith, func) afterwards.

!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
!ring = !qla.tile<2x64x64xbf16, smem, #qla.swizzle<128>>
!slot = !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
!acc = !qla.tile<64x128xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
!out = !qla.tile<64x128xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>

// The ABI: tensors in argument order, then one tensor map per distinct (tensor, box, swizzle), box
// innermost first; launch shape and shared memory from the kernel's attributes.
// CHECK: module attributes {qla.abi = {k = {block = array<i64: 128, 1, 1>, grid = array<i64: 2, 4, 1>, params = [
// CHECK-SAME: {dtype = bf16, kind = "tensor", name = "A", shape = array<i64: 256, 64>, strides = array<i64: 64, 1>},
// CHECK-SAME: {dtype = bf16, kind = "tensor", name = "B", shape = array<i64: 256, 64>, strides = array<i64: 64, 1>},
// CHECK-SAME: {dtype = bf16, kind = "tensor", name = "arg2", shape = array<i64: 256, 512>, strides = array<i64: 512, 1>},
// CHECK-SAME: {box = array<i64: 64, 64>, kind = "tensormap", swizzle = 128 : i64, tensor = 0 : i64},
// CHECK-SAME: {box = array<i64: 64, 128>, kind = "tensormap", swizzle = 128 : i64, tensor = 1 : i64}
// CHECK-SAME: ], smem_bytes = 50176 : i64}}} {
// The dynamic shared memory every buffer is an offset into.
// CHECK: llvm.mlir.global external @__qla_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>

// Tensors become global pointers; the two tensor maps are appended as by-value (generic) pointers.
// The qla.* kernel attributes move into qla.abi.
// CHECK-LABEL: func.func @k(
// CHECK-SAME: %[[A:[^:]*]]: !llvm.ptr<1> {qla.name = "A"}, %[[B:[^:]*]]: !llvm.ptr<1> {qla.name = "B"}, %[[C:[^:]*]]: !llvm.ptr<1>,
// CHECK-SAME: %[[TMA:[^:]*]]: !llvm.ptr, %[[TMB:[^:]*]]: !llvm.ptr) {
func.func @k(%A: !qla.tensor<256x64xbf16> {qla.name = "A"}, %B: !qla.tensor<256x64xbf16> {qla.name = "B"},
             %C: !qla.tensor<256x512xbf16>)
    attributes {qla.kernel, qla.grid = array<i64: 2, 4, 1>, qla.block = array<i64: 128, 1, 1>,
                qla.smem_bytes = 50176 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: %[[BX:.*]] = nvvm.read.ptx.sreg.ctaid.x : i32
  // CHECK-NEXT: %[[BXI:.*]] = arith.index_castui %[[BX]] : i32 to index
  // CHECK-NEXT: %[[BY:.*]] = nvvm.read.ptx.sreg.ctaid.y : i32
  // CHECK-NEXT: %[[BYI:.*]] = arith.index_castui %[[BY]] : i32 to index
  %bx = qla.block_id 0
  %by = qla.block_id 1
  // CHECK: %[[BAR:.*]] = nvgpu.mbarrier.create
  %bar = nvgpu.mbarrier.create -> !bars
  // Buffers: the base of dynamic shared memory rounded up to 1024 bytes, plus the planned offset.
  // CHECK: %[[BASE0:.*]] = llvm.mlir.addressof @__qla_smem : !llvm.ptr<3>
  // CHECK-NEXT: %[[ADDR0:.*]] = llvm.ptrtoint %[[BASE0]] : !llvm.ptr<3> to i64
  // CHECK-NEXT: %[[Z0:.*]] = arith.constant 0 : i64
  // CHECK-NEXT: %[[NEG0:.*]] = arith.subi %[[Z0]], %[[ADDR0]] : i64
  // CHECK-NEXT: %[[M0:.*]] = arith.constant 1023 : i64
  // CHECK-NEXT: %[[PAD0:.*]] = arith.andi %[[NEG0]], %[[M0]] : i64
  // CHECK-NEXT: %[[OFF0:.*]] = arith.constant 0 : i64
  // CHECK-NEXT: %[[SUM0:.*]] = arith.addi %[[PAD0]], %[[OFF0]] : i64
  // CHECK-NEXT: %[[RA:.*]] = llvm.getelementptr %[[BASE0]][%[[SUM0]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
  // CHECK-NEXT: %[[BASE:.*]] = llvm.mlir.addressof @__qla_smem : !llvm.ptr<3>
  // CHECK-NEXT: %[[ADDR:.*]] = llvm.ptrtoint %[[BASE]] : !llvm.ptr<3> to i64
  // CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : i64
  // CHECK-NEXT: %[[NEG:.*]] = arith.subi %[[Z]], %[[ADDR]] : i64
  // CHECK-NEXT: %[[M:.*]] = arith.constant 1023 : i64
  // CHECK-NEXT: %[[PAD:.*]] = arith.andi %[[NEG]], %[[M]] : i64
  // CHECK-NEXT: %[[OFF:.*]] = arith.constant 16384 : i64
  // CHECK-NEXT: %[[SUM:.*]] = arith.addi %[[PAD]], %[[OFF]] : i64
  // CHECK-NEXT: %[[RB:.*]] = llvm.getelementptr %[[BASE]][%[[SUM]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
  %ra = qla.smem_alloc {offset = 0 : i64} : !ring
  %rb = qla.smem_alloc {offset = 16384 : i64} : !qla.tile<2x128x64xbf16, smem, #qla.swizzle<128>>
  // A slot is ring + index * slot bytes (64x64 bf16 = 8192, 128x64 bf16 = 16384).
  // CHECK: %[[IA:.*]] = arith.index_cast %{{.*}} : index to i64
  // CHECK-NEXT: %[[SA:.*]] = arith.constant 8192 : i64
  // CHECK-NEXT: %[[SAOFF:.*]] = arith.muli %[[IA]], %[[SA]] : i64
  // CHECK-NEXT: %[[SLOTA:.*]] = llvm.getelementptr %[[RA]][%[[SAOFF]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
  // CHECK-NEXT: %[[I:.*]] = arith.index_cast %{{.*}} : index to i64
  // CHECK-NEXT: %[[SB:.*]] = arith.constant 16384 : i64
  // CHECK-NEXT: %[[SOFF:.*]] = arith.muli %[[I]], %[[SB]] : i64
  // CHECK-NEXT: %[[SLOTB:.*]] = llvm.getelementptr %[[RB]][%[[SOFF]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
  %sa = qla.slot %ra[%c1] : !ring -> !slot
  %sb = qla.slot %rb[%c1] : !qla.tile<2x128x64xbf16, smem, #qla.swizzle<128>> -> !qla.tile<128x64xbf16, smem, #qla.swizzle<128>>
  // TMA: coordinates innermost first, completing on the mbarrier; the descriptor is the kernel parameter.
  // CHECK: %[[X:.*]] = arith.index_cast %{{.*}} : index to i32
  // CHECK-NEXT: %[[Y:.*]] = arith.index_cast %[[BYI]] : index to i32
  // CHECK-NEXT: %[[MB:.*]] = nvgpu.mbarrier.get %[[BAR]]
  // CHECK-NEXT: %[[MBP:.*]] = llvm.inttoptr %[[MB]] : i64 to !llvm.ptr<3>
  // CHECK-NEXT: %[[DST:.*]] = llvm.addrspacecast %[[SLOTA]] : !llvm.ptr<3> to !llvm.ptr<7>
  // CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global %[[DST]], %[[TMA]], %[[MBP]], box[%[[X]], %[[Y]]]
  qla.tma_load %A[%by, %c0], %sa, %bar[%c1] : !qla.tensor<256x64xbf16>, !slot, !bars
  // CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[TMB]], %{{.*}}, box[
  qla.tma_load %B[%bx, %c0], %sb, %bar[%c1] : !qla.tensor<256x64xbf16>, !qla.tile<128x64xbf16, smem, #qla.swizzle<128>>, !bars
  // The same (tensor, box, swizzle) again: the same tensor map.
  // CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[TMA]], %{{.*}}, box[
  qla.tma_load %A[%c0, %c0], %sa, %bar[%c0] : !qla.tensor<256x64xbf16>, !slot, !bars

  // A fragment is this thread's share of the accumulator: 64x128 over 128 threads = 64 floats.
  // CHECK: %[[ACC0:.*]] = arith.constant dense<0.000000e+00> : vector<64xf32>
  %acc0 = qla.fill 0.0 : f32 : !acc
  // gemm: one wgmma per 16 of K (64 / 16 = 4), m64n128k16, bf16 x bf16 -> f32, both operands by
  // shared-memory descriptor: start address >> 4 | LBO 16 >> 4 << 16 | SBO (8 rows x 128 B) >> 4 << 32 |
  // 128-byte swizzle (1) << 62 = 4611686293305360384.
  // CHECK: nvvm.wgmma.fence.aligned
  // CHECK: arith.constant 4611686293305360384 : i64
  // The accumulator is a zero fill: the first step scales it by zero (D <zero>), the others add.
  // CHECK: %[[W0:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %{{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
  // The next 16 of K start 32 bytes further into each 128-byte row.
  // CHECK: arith.constant 32 : i64
  // CHECK: %[[W1:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[W0]], <m = 64, n = 128, k = 16>, D[<f32>, <one>]
  // CHECK: arith.constant 64 : i64
  // CHECK: %[[W2:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[W1]], <m = 64, n = 128, k = 16>
  // CHECK: arith.constant 96 : i64
  // CHECK: %[[W3:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[W2]], <m = 64, n = 128, k = 16>
  // CHECK-NOT: nvvm.wgmma.mma_async
  // CHECK: nvvm.wgmma.commit.group.sync.aligned
  // async: no wait here; qla.async_wait 1 becomes the wait.
  // CHECK-NOT: nvvm.wgmma.wait.group.sync.aligned 0
  // CHECK: nvvm.wgmma.wait.group.sync.aligned 1
  %r = qla.gemm %sa, %sb, %acc0 {async, transpose_b} : !slot, !qla.tile<128x64xbf16, smem, #qla.swizzle<128>>, !acc -> !acc
  qla.async_wait 1
  // A synchronous gemm waits for its own group.
  // CHECK: nvvm.wgmma.fence.aligned
  // CHECK-COUNT-4: nvvm.wgmma.mma_async
  // CHECK: nvvm.wgmma.commit.group.sync.aligned
  // CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
  %r2 = qla.gemm %sa, %sb, %r {transpose_b} : !slot, !qla.tile<128x64xbf16, smem, #qla.swizzle<128>>, !acc -> !acc
  // map: the scalar body applied to each of this thread's 64 elements.
  // CHECK-COUNT-64: arith.truncf %{{.*}} : f32 to bf16
  // CHECK-NOT: arith.truncf
  %o = qla.map %r2 : !acc -> !out {
  ^bb0(%x: f32):
    %y = arith.truncf %x : f32 to bf16
    qla.yield %y : bf16
  }
  // store: accumulator elements come in column pairs (e, e+1): a 2-element store when the second column
  // is inside the tensor (256 rows, 512 columns; row stride 512), else the first alone if it is inside.
  // Row = block row (by) + this thread's row, column = bx + its column.
  // CHECK: %[[R0:.*]] = arith.index_cast %[[BYI]] : index to i32
  // CHECK-NEXT: %[[ROW:.*]] = arith.addi %[[R0]], %{{.*}} : i32
  // CHECK-NEXT: %[[ROWS:.*]] = arith.constant 256 : i32
  // CHECK-NEXT: %[[INR:.*]] = arith.cmpi slt, %[[ROW]], %[[ROWS]] : i32
  // CHECK: %[[STRIDE:.*]] = arith.constant 512 : i64
  // CHECK-NEXT: arith.muli %{{.*}}, %[[STRIDE]] : i64
  // CHECK: %[[C0:.*]] = arith.index_cast %[[BXI]] : index to i32
  // CHECK-NEXT: %[[COL:.*]] = arith.addi %[[C0]], %[[COLOFF:.*]] : i32
  // CHECK-NEXT: %[[COLS:.*]] = arith.constant 512 : i32
  // CHECK-NEXT: %[[INC:.*]] = arith.cmpi slt, %[[COL]], %[[COLS]] : i32
  // CHECK-NEXT: %[[IN:.*]] = arith.andi %{{.*}}, %[[INC]] : i1
  // CHECK: %[[PTR:.*]] = llvm.getelementptr %[[C]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, bf16
  // CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i32
  // CHECK-NEXT: %[[COLOFF1:.*]] = arith.addi %[[COLOFF]], %[[ONE]] : i32
  // CHECK: %[[COL1:.*]] = arith.addi %{{.*}}, %[[COLOFF1]] : i32
  // CHECK-NEXT: %[[COLS1:.*]] = arith.constant 512 : i32
  // CHECK-NEXT: %[[INC1:.*]] = arith.cmpi slt, %[[COL1]], %[[COLS1]] : i32
  // CHECK-NEXT: %[[IN1:.*]] = arith.andi %{{.*}}, %[[INC1]] : i1
  // CHECK: scf.if %[[IN1]] {
  // CHECK-NEXT: llvm.store %[[PAIR:.*]], %[[PTR]] {alignment = 4 : i64} : vector<2xbf16>, !llvm.ptr<1>
  // CHECK-NEXT: } else {
  // CHECK-NEXT: scf.if %[[IN]] {
  // CHECK-NEXT: llvm.store %{{.*}}, %[[PTR]] : bf16, !llvm.ptr<1>
  // 64 rows x 128 columns over 128 threads: 64 elements, 32 pairs each.
  // CHECK-COUNT-31: llvm.store %{{.*}} {alignment = 4 : i64} : vector<2xbf16>, !llvm.ptr<1>
  // CHECK-NOT: vector<2xbf16>, !llvm.ptr<1>
  qla.store %o, %C[%by, %bx] : !out, !qla.tensor<256x512xbf16>
  // CHECK-NOT: qla.
  return
}

// A store with bounds compares each element's row and column with the smaller of the bound and the
// tensor's extent (256 rows, 512 columns), so a bound past the tensor's end cannot write past it.
// CHECK-LABEL: func.func @store_with_bounds(
// CHECK-SAME: %{{[^:]*}}: vector<64xbf16>, %[[C:[^:]*]]: !llvm.ptr<1>, %[[ER:[^:]*]]: index, %[[EC:[^:]*]]: index)
// CHECK: %[[BR:.*]] = arith.index_cast %[[ER]] : index to i32
// CHECK-NEXT: %[[MR:.*]] = arith.minsi %[[BR]], %{{.*}} : i32
// CHECK-NEXT: %[[LR:.*]] = arith.cmpi slt, %[[ROW:.*]], %[[MR]] : i32
// CHECK: %[[BC:.*]] = arith.index_cast %[[EC]] : index to i32
// CHECK-NEXT: %[[MC:.*]] = arith.minsi %[[BC]], %{{.*}} : i32
// CHECK-NEXT: %[[LC:.*]] = arith.cmpi slt, %[[COL:.*]], %[[MC]] : i32
// CHECK-NEXT: %[[IN:.*]] = arith.andi %{{.*}}, %[[LC]] : i1
// CHECK: %[[BC1:.*]] = arith.index_cast %[[EC]] : index to i32
// CHECK-NEXT: %[[MC1:.*]] = arith.minsi %[[BC1]], %{{.*}} : i32
// CHECK-NEXT: %[[LC1:.*]] = arith.cmpi slt, %[[COL1:.*]], %[[MC1]] : i32
// CHECK-NEXT: %[[IN1:.*]] = arith.andi %{{.*}}, %[[LC1]] : i1
// CHECK: scf.if %[[IN1]] {
// CHECK-NEXT: llvm.store %{{.*}} : vector<2xbf16>, !llvm.ptr<1>
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.if %[[IN]] {
// CHECK-NEXT: llvm.store %{{.*}} : bf16, !llvm.ptr<1>
func.func @store_with_bounds(%o: !out, %C: !qla.tensor<256x512xbf16>, %endRow: index, %endCol: index) {
  %c0 = arith.constant 0 : index
  qla.store %o, %C[%c0, %c0] bounds [%endRow, %endCol] : !out, !qla.tensor<256x512xbf16>
  return
}
