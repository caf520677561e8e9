// RUN: qla-opt %s -qla-assign-roles -split-input-file -verify-diagnostics | FileCheck %s

// A producer, a state role and an output role. The copies go to the producer; the gemm placed in
// "state" keeps it; the map reading it and feeding the store placed in "output" takes "output" (its
// reader's role); the gemm feeding only that map takes "output" too; the fill read by the state gemm
// takes "state"; index arithmetic gets no role. The remark counts each role's ops in the loop and the
// values that cross roles: the two copies (read by the gemms) and the state gemm's result (read by the
// output map).
// CHECK-LABEL: func.func @three_roles(
// CHECK: qla.for
// CHECK: arith.muli {{.*}} : index
// CHECK-NOT: qla.role
// CHECK: qla.copy {{.*}} {qla.role = "loads"}
// CHECK: qla.copy {{.*}} {qla.role = "loads"}
// CHECK: qla.fill {{.*}} {qla.role = "state"}
// CHECK: qla.gemm {{.*}} {qla.role = "state"}
// CHECK: qla.gemm {{.*}} {qla.role = "output"}
// CHECK: qla.map
// CHECK: } {qla.role = "output"}
// CHECK: qla.store {{.*}} {qla.role = "output"}
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
  // expected-remark @+1 {{roles: loads 2 ops, state 2 ops, output 4 ops, 3 values cross roles}}
  qla.for %c0 to %n step %c1 {
  ^bb0(%i: index):
    %row = arith.muli %i, %c64 : index
    %a = qla.copy %A[%row, %c0] : !qla.tensor<4096x64xbf16> -> !sm
    %b = qla.copy %A[%row, %c0] : !qla.tensor<4096x64xbf16> -> !sm
    %z = qla.fill 0.0 : f32 : !acc
    %x = qla.gemm %a, %b, %z {qla.role = "state"} : !sm, !sm, !acc -> !acc
    %z2 = qla.fill 0.0 : f32 : !acc
    %y = qla.gemm %b, %a, %z2 : !sm, !sm, !acc -> !acc
    %s = qla.map %x, %y : !acc, !acc -> !acc {
    ^bb0(%e: f32, %g: f32):
      %d = arith.addf %e, %g : f32
      qla.yield %d : f32
    }
    qla.store %s, %O[%row, %c0] {qla.role = "output"} : !acc, !qla.tensor<4096x64xf32>
  }
  return
}

// -----

// A kernel without roles is left alone: no qla.role, no remark.
// CHECK-LABEL: func.func @no_roles(
// CHECK-NOT: qla.role
// CHECK: return
func.func @no_roles(%A: !qla.tensor<4096x64xbf16>) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %a = qla.copy %A[%c0, %c0] : !qla.tensor<4096x64xbf16> -> !qla.tile<64x64xbf16, smem>
  return
}

// -----

// A prefetch (no result) runs in one role, like a store: the one it is placed in, else the first
// consumer, never every role (each would prefetch the same lines) and never the producer (whose loop
// keeps only copies).
// CHECK-LABEL: func.func @prefetch_roles(
// CHECK: qla.prefetch {{.*}} {qla.role = "output", shape = array<i64: 64, 1>}
// CHECK: qla.prefetch {{.*}} {qla.role = "state", shape = array<i64: 64, 1>}
func.func @prefetch_roles(%A: !qla.tensor<4096x64xbf16>, %n: index)
    attributes {qla.kernel, qla.block = array<i64: 384, 1, 1>,
                qla.roles = [#qla.role<"loads", warpgroups = 1, registers = 40, producer = true>,
                             #qla.role<"state", warpgroups = 1, registers = 232>,
                             #qla.role<"output", warpgroups = 1, registers = 232>]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  // expected-remark @+1 {{roles: loads 1 op, output 1 op, state 1 op, 0 values cross roles}}
  qla.for %c0 to %n step %c1 {
  ^bb0(%i: index):
    %row = arith.muli %i, %c64 : index
    %a = qla.copy %A[%row, %c0] : !qla.tensor<4096x64xbf16> -> !qla.tile<64x64xbf16, smem>
    qla.prefetch %A[%row, %c0] {qla.role = "output", shape = array<i64: 64, 1>} : !qla.tensor<4096x64xbf16>
    qla.prefetch %A[%row, %c0] {shape = array<i64: 64, 1>} : !qla.tensor<4096x64xbf16>
  }
  return
}
