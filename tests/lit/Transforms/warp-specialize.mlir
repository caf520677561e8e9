// RUN: qla-opt %s -qla-warp-specialize -split-input-file -verify-diagnostics | FileCheck %s

// Three roles: the producer's loop keeps its copies and puts them into channels 0 and 1; the state
// role's loop gets them, runs its gemm, carries its state and puts it into channel 2, and stores the final
// state after the loop; the output role gets all three and keeps its own gemm, map and store. Index
// arithmetic is cloned where it is used; the state carried by the loop is dropped from the other roles'
// copies of the loop.
// CHECK-LABEL: func.func @three_roles(
// CHECK: qla.role_region "loads" {
// CHECK: qla.for %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[ROW:.*]] = arith.muli
// CHECK-NEXT: %[[A:.*]] = qla.copy %{{.*}}[%[[ROW]], %{{.*}}] {qla.role = "loads"}
// CHECK-NEXT: qla.channel_put %[[A]] {channel = 0 : i64}
// CHECK-NEXT: %[[B:.*]] = qla.copy
// CHECK-NEXT: qla.channel_put %[[B]] {channel = 1 : i64}
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK: qla.role_region "state" {
// CHECK-NOT: arith.muli
// CHECK: %[[H0:.*]] = qla.fill {{.*}} {qla.role = "state"}
// CHECK: %[[HN:.*]] = qla.for {{.*}} iter_args(%[[H0]] :
// CHECK: %[[SA:.*]] = qla.channel_get {channel = 0 : i64} : !qla.tile<64x64xbf16, smem>
// CHECK-NEXT: %[[SB:.*]] = qla.channel_get {channel = 1 : i64}
// CHECK-NEXT: %[[X:.*]] = qla.gemm %[[SA]], %[[SB]], %{{.*}} {qla.role = "state"}
// CHECK-NEXT: qla.channel_put %[[X]] {channel = 2 : i64} : !qla.tile<64x64xf32, frag>
// CHECK-NEXT: qla.yield %[[X]]
// CHECK-NEXT: }
// CHECK-NEXT: qla.store %[[HN]]
// CHECK: qla.role_region "output" {
// CHECK: qla.for %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[OA:.*]] = qla.channel_get {channel = 0 : i64}
// CHECK-NEXT: %[[OB:.*]] = qla.channel_get {channel = 1 : i64}
// CHECK-NEXT: %[[OX:.*]] = qla.channel_get {channel = 2 : i64} : !qla.tile<64x64xf32, frag>
// CHECK: %[[Y:.*]] = qla.gemm %[[OB]], %[[OA]]
// CHECK: qla.map %[[OX]], %[[Y]]
// CHECK: qla.store
// CHECK-NOT: qla.yield %
// CHECK: return
!acc = !qla.tile<64x64xf32, frag>
!sm = !qla.tile<64x64xbf16, smem>
func.func @three_roles(%A: !qla.tensor<4096x64xbf16>, %O: !qla.tensor<4096x64xf32>, %n: index)
    attributes {qla.kernel, qla.block = array<i64: 384, 1, 1>,
                qla.roles = [#qla.role<"loads", warpgroups = 1, registers = 40, producer = true>,
                             #qla.role<"state", warpgroups = 1, registers = 232>,
                             #qla.role<"output", warpgroups = 1, registers = 232>]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %h0 = qla.fill 0.0 : f32 {qla.role = "state"} : !acc
  %hN = qla.for %c0 to %n step %c1 iter_args(%h0 : !acc) -> !acc {
  ^bb0(%i: index, %h: !acc):
    %row = arith.muli %i, %c64 : index
    %a = qla.copy %A[%row, %c0] {qla.role = "loads"} : !qla.tensor<4096x64xbf16> -> !sm
    %b = qla.copy %A[%row, %c0] {qla.role = "loads"} : !qla.tensor<4096x64xbf16> -> !sm
    %x = qla.gemm %a, %b, %h {qla.role = "state"} : !sm, !sm, !acc -> !acc
    %z2 = qla.fill 0.0 : f32 {qla.role = "output"} : !acc
    %y = qla.gemm %b, %a, %z2 {qla.role = "output"} : !sm, !sm, !acc -> !acc
    %s = qla.map %x, %y : !acc, !acc -> !acc {
    ^bb0(%e: f32, %g: f32):
      %d = arith.addf %e, %g : f32
      qla.yield %d : f32
    } {qla.role = "output"}
    qla.store %s, %O[%row, %c0] {qla.role = "output"} : !acc, !qla.tensor<4096x64xf32>
    qla.yield %x : !acc
  }
  qla.store %hN, %O[%c0, %c0] {qla.role = "state"} : !acc, !qla.tensor<4096x64xf32>
  return
}

// -----

// A kernel without roles is left alone.
// CHECK-LABEL: func.func @no_roles(
// CHECK-NOT: qla.role_region
// CHECK: return
func.func @no_roles(%A: !qla.tensor<4096x64xbf16>) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %a = qla.copy %A[%c0, %c0] : !qla.tensor<4096x64xbf16> -> !qla.tile<64x64xbf16, smem>
  return
}

// -----

// A loop-carried tile read inside the loop by another role than the one updating it: the updating
// role puts the value each iteration starts with into a channel, first thing in the body; the reader
// gets it there (its copy of the loop carries nothing).
// CHECK-LABEL: func.func @carried_across_roles(
// CHECK: qla.role_region "state" {
// CHECK: qla.for {{.*}} iter_args(
// CHECK-NEXT: ^bb0(%{{.*}}: index, %[[H:.*]]: !qla.tile<64x64xf32, frag>):
// CHECK-NEXT: qla.channel_put %[[H]] {channel = 0 : i64}
// CHECK: qla.gemm %{{.*}}, %{{.*}}, %[[H]]
// CHECK: qla.role_region "output" {
// CHECK: qla.for %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: ^bb0(%{{.*}}: index):
// CHECK-NEXT: %[[G:.*]] = qla.channel_get {channel = 0 : i64} : !qla.tile<64x64xf32, frag>
// CHECK: qla.store %[[G]]
func.func @carried_across_roles(%A: !qla.tensor<4096x64xbf16>, %O: !qla.tensor<4096x64xf32>, %n: index)
    attributes {qla.kernel, qla.block = array<i64: 256, 1, 1>,
                qla.roles = [#qla.role<"state", warpgroups = 1>, #qla.role<"output", warpgroups = 1>]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %h0 = qla.fill 1.0 : f32 {qla.role = "state"} : !qla.tile<64x64xf32, frag>
  %hN = qla.for %c0 to %n step %c1 iter_args(%h0 : !qla.tile<64x64xf32, frag>) -> !qla.tile<64x64xf32, frag> {
  ^bb0(%i: index, %h: !qla.tile<64x64xf32, frag>):
    %a = qla.copy %A[%i, %c0] {qla.role = "state"} : !qla.tensor<4096x64xbf16> -> !qla.tile<64x64xbf16, smem>
    %x = qla.gemm %a, %a, %h {qla.role = "state", transpose_b} : !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
    qla.store %h, %O[%i, %c0] {qla.role = "output"} : !qla.tile<64x64xf32, frag>, !qla.tensor<4096x64xf32>
    qla.yield %x : !qla.tile<64x64xf32, frag>
  }
  return
}

// -----

// The loop's result read by another role would need a channel after the loop: refused.
func.func @result_across_roles(%A: !qla.tensor<4096x64xbf16>, %O: !qla.tensor<4096x64xf32>, %n: index)
    attributes {qla.kernel, qla.block = array<i64: 256, 1, 1>,
                qla.roles = [#qla.role<"state", warpgroups = 1>, #qla.role<"output", warpgroups = 1>]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %h0 = qla.fill 1.0 : f32 {qla.role = "state"} : !qla.tile<64x64xf32, frag>
  // expected-error @+1 {{carried value #0 (updated by role 'state') has its initial value or its result made or read by another role}}
  %hN = qla.for %c0 to %n step %c1 iter_args(%h0 : !qla.tile<64x64xf32, frag>) -> !qla.tile<64x64xf32, frag> {
  ^bb0(%i: index, %h: !qla.tile<64x64xf32, frag>):
    %a = qla.copy %A[%i, %c0] {qla.role = "state"} : !qla.tensor<4096x64xbf16> -> !qla.tile<64x64xbf16, smem>
    %x = qla.gemm %a, %a, %h {qla.role = "state", transpose_b} : !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
    qla.yield %x : !qla.tile<64x64xf32, frag>
  }
  qla.store %hN, %O[%c0, %c0] {qla.role = "output"} : !qla.tile<64x64xf32, frag>, !qla.tensor<4096x64xf32>
  return
}
