// RUN: qla-opt %s -qla-overlap-gemms -split-input-file | FileCheck %s
// RUN: qla-opt %s -qla-overlap-gemms=partial-waits=1 -split-input-file | FileCheck %s --check-prefix=PARTIAL

// Three gemms that do not read each other's results (the second takes the first's result as its
// accumulator only, as the hi and lo halves of a product do) are issued back to back; the map that
// reads neither overlaps them; one wait comes before the first op that reads a result in flight.
// CHECK-LABEL: func.func @independent(
// CHECK: %[[X:.*]] = qla.gemm %{{.*}} {async}
// CHECK-NEXT: %[[X2:.*]] = qla.gemm %{{.*}}, %{{.*}}, %[[X]] {async}
// CHECK-NEXT: %[[Y:.*]] = qla.gemm %{{.*}} {async, transpose_b}
// CHECK-NEXT: %[[M:.*]] = qla.map %{{.*}} :
// CHECK-NOT: qla.async_wait
// CHECK: qla.async_wait 0
// CHECK-NEXT: qla.map %[[X2]], %[[Y]]
// CHECK-NOT: qla.async_wait
// CHECK: return
!acc = !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
!sm = !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
func.func @independent(%a: !sm, %b: !sm, %lo: !sm, %f: !acc) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %z = qla.fill 0.0 : f32 : !acc
  %x = qla.gemm %a, %b, %z : !sm, !sm, !acc -> !acc
  %x2 = qla.gemm %a, %lo, %x : !sm, !sm, !acc -> !acc
  %y = qla.gemm %a, %b, %z {transpose_b} : !sm, !sm, !acc -> !acc
  %m = qla.map %f : !acc -> !acc {
  ^bb0(%e: f32):
    %d = arith.addf %e, %e : f32
    qla.yield %d : f32
  }
  %s = qla.map %x2, %y : !acc, !acc -> !acc {
  ^bb0(%e: f32, %g: f32):
    %d = arith.addf %e, %g : f32
    qla.yield %d : f32
  }
  return
}

// -----

// A gemm whose operand tile is made from a result in flight waits first; so does an op with a region
// that reads one (a loop taking it as an initial value), and the block's terminator (the loop's yield
// of a result in flight): a loop body gets its own waits.
// CHECK-LABEL: func.func @dependent(
// CHECK: %[[X:.*]] = qla.gemm %{{.*}} {async}
// CHECK-NEXT: qla.async_wait 0
// CHECK-NEXT: %[[C:.*]] = qla.map %[[X]]
// CHECK: %[[S:.*]] = qla.share %[[C]]
// CHECK-NEXT: qla.gemm %[[S]], %{{.*}} {async}
// CHECK-NEXT: qla.async_wait 0
// CHECK-NEXT: qla.for
// CHECK: qla.gemm %{{.*}} {async}
// CHECK-NEXT: qla.async_wait 0
// CHECK-NEXT: qla.yield
// CHECK-NOT: qla.async_wait
// CHECK: return
!acc = !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
!accb = !qla.tile<64x64xbf16, frag, #qla.wgmma_acc<warpgroups = 1>>
!sm = !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
func.func @dependent(%a: !sm, %b: !sm, %n: index) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = qla.fill 0.0 : f32 : !acc
  %x = qla.gemm %a, %b, %z : !sm, !sm, !acc -> !acc
  %c = qla.map %x : !acc -> !accb {
  ^bb0(%e: f32):
    %t = arith.truncf %e : f32 to bf16
    qla.yield %t : bf16
  }
  %s = qla.share %c : !accb -> !sm
  %y = qla.gemm %s, %b, %z : !sm, !sm, !acc -> !acc
  %r = qla.for %c0 to %n step %c1 iter_args(%y : !acc) -> !acc {
  ^bb0(%i: index, %hh: !acc):
    %u = qla.gemm %a, %b, %hh : !sm, !sm, !acc -> !acc
    qla.yield %u : !acc
  }
  return
}

// -----

// A reader waits for every gemm in flight; with partial-waits only for those up to the youngest one it
// reads (qla.async_wait n, n the gemms issued after that one): the map reading %y and %x (in that
// order) leaves only %z in flight; the map reading %z waits for it; the terminator needs no wait.
// CHECK-LABEL: func.func @partial(
// CHECK: qla.gemm %{{.*}} {async}
// CHECK-NEXT: qla.gemm %{{.*}} {async}
// CHECK-NEXT: qla.gemm %{{.*}} {async}
// CHECK-NEXT: qla.async_wait 0
// CHECK-NEXT: qla.map
// CHECK-NOT: qla.async_wait
// CHECK: return
// PARTIAL-LABEL: func.func @partial(
// PARTIAL: %[[X:.*]] = qla.gemm %{{.*}} {async}
// PARTIAL-NEXT: %[[Y:.*]] = qla.gemm %{{.*}} {async}
// PARTIAL-NEXT: %[[Z:.*]] = qla.gemm %{{.*}} {async}
// PARTIAL-NEXT: qla.async_wait 1
// PARTIAL-NEXT: qla.map %[[Y]], %[[X]]
// PARTIAL: qla.async_wait 0
// PARTIAL-NEXT: qla.map %[[Z]]
// PARTIAL-NOT: qla.async_wait
// PARTIAL: return
!acc = !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
!sm = !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
func.func @partial(%a: !sm, %b: !sm) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %z0 = qla.fill 0.0 : f32 : !acc
  %x = qla.gemm %a, %b, %z0 : !sm, !sm, !acc -> !acc
  %y = qla.gemm %b, %a, %z0 : !sm, !sm, !acc -> !acc
  %z = qla.gemm %a, %a, %z0 : !sm, !sm, !acc -> !acc
  %m = qla.map %y, %x : !acc, !acc -> !acc {
  ^bb0(%e: f32, %g: f32):
    %d = arith.addf %e, %g : f32
    qla.yield %d : f32
  }
  %n = qla.map %z : !acc -> !acc {
  ^bb0(%e: f32):
    %d = arith.addf %e, %e : f32
    qla.yield %d : f32
  }
  return
}

// -----

// A wait already in the block counts, with either setting: `qla.async_wait 1` after two gemms completes
// the first, so its reader gets no wait of its own; the second's reader waits.
// CHECK-LABEL: func.func @existing_wait(
// CHECK: %[[X:.*]] = qla.gemm %{{.*}} {async}
// CHECK-NEXT: %[[Y:.*]] = qla.gemm %{{.*}} {async}
// CHECK-NEXT: qla.async_wait 1
// CHECK-NEXT: qla.map %[[X]]
// CHECK: qla.async_wait 0
// CHECK-NEXT: qla.map %[[Y]]
// PARTIAL-LABEL: func.func @existing_wait(
// PARTIAL: qla.async_wait 1
// PARTIAL-NEXT: qla.map
// PARTIAL: qla.async_wait 0
// PARTIAL-NEXT: qla.map
!acc = !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
!sm = !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
func.func @existing_wait(%a: !sm, %b: !sm) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %z0 = qla.fill 0.0 : f32 : !acc
  %x = qla.gemm %a, %b, %z0 : !sm, !sm, !acc -> !acc
  %y = qla.gemm %b, %a, %z0 : !sm, !sm, !acc -> !acc
  qla.async_wait 1
  %m = qla.map %x : !acc -> !acc {
  ^bb0(%e: f32):
    %d = arith.addf %e, %e : f32
    qla.yield %d : f32
  }
  %n = qla.map %y : !acc -> !acc {
  ^bb0(%e: f32):
    %d = arith.addf %e, %e : f32
    qla.yield %d : f32
  }
  return
}

// -----

// Loops pipelined by qla-pipeline (gemms already asynchronous, with their own waits) are left alone.
// CHECK-LABEL: func.func @already_async(
// CHECK: qla.gemm %{{.*}} {async}
// CHECK-NEXT: return
!acc = !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
!sm = !qla.tile<64x64xbf16, smem, #qla.swizzle<128>>
func.func @already_async(%a: !sm, %b: !sm) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %z = qla.fill 0.0 : f32 : !acc
  %x = qla.gemm %a, %b, %z {async} : !sm, !sm, !acc -> !acc
  return
}
