// RUN: qla-opt %s -qla-context-split=form=transition -split-input-file -verify-diagnostics

// expected-error @below {{qla-context-split: kernel 'none' has no qla.scan loop}}
func.func @none() attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  return
}

// -----

// The scan's initial state must come from a tensor: its place there locates the identity.
!acc = !qla.tile<64x64xf32, frag>
func.func @zero_init(%n: index) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %h0 = qla.fill 0.0 : f32 : !acc
  // expected-error @below {{the scan's initial state must be a 2-D tile loaded from a tensor}}
  %hN = qla.for %c0 to %n step %c1 iter_args(%h0 : !acc) -> !acc {
  ^bb0(%i: index, %st: !acc):
    qla.yield %st : !acc
  } {qla.scan = []}
  return
}

// -----

// An input term that is not a gemm operand cannot be taken as zero by dropping a gemm.
!acc = !qla.tile<64x64xf32, frag>
func.func @map_input(%V: !qla.tensor<4096x64xf32> {qla.name = "v"}, %S: !qla.tensor<256x64xf32>, %n: index)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %h0 = qla.copy %S[%c0, %c0] : !qla.tensor<256x64xf32> -> !acc
  %hN = qla.for %c0 to %n step %c1 iter_args(%h0 : !acc) -> !acc {
  ^bb0(%i: index, %st: !acc):
    %v = qla.copy %V[%c0, %c0] : !qla.tensor<4096x64xf32> -> !acc
    // expected-error @below {{a scan input term may only be one operand of a gemm, A or B}}
    %next = qla.map %st, %v : !acc, !acc -> !acc {
    ^bb0(%e: f32, %f: f32):
      %s = arith.addf %e, %f : f32
      qla.yield %s : f32
    }
    qla.yield %next : !acc
  } {qla.scan = ["v"]}
  qla.store %hN, %S[%c0, %c0] : !acc, !qla.tensor<256x64xf32>
  return
}

// -----

// A gemm of an input term with itself is not affine in it: refused (not a crash).
!acc = !qla.tile<64x64xf32, frag>
!sm = !qla.tile<64x64xbf16, smem>
func.func @square_input(%V: !qla.tensor<4096x64xbf16> {qla.name = "v"}, %S: !qla.tensor<256x64xf32>, %n: index)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %h0 = qla.copy %S[%c0, %c0] : !qla.tensor<256x64xf32> -> !acc
  %hN = qla.for %c0 to %n step %c1 iter_args(%h0 : !acc) -> !acc {
  ^bb0(%i: index, %st: !acc):
    %v = qla.copy %V[%c0, %c0] : !qla.tensor<4096x64xbf16> -> !sm
    // expected-error @below {{a gemm of it with itself is not affine}}
    %next = qla.gemm %v, %v, %st {transpose_b} : !sm, !sm, !acc -> !acc
    qla.yield %next : !acc
  } {qla.scan = ["v"]}
  qla.store %hN, %S[%c0, %c0] : !acc, !qla.tensor<256x64xf32>
  return
}

// -----

// expected-error @below {{'qla.scan' must be an array of tensor names on a qla.for that carries one tile}}
func.func @bad_attr() attributes {qla.kernel, qla.scan = ["v"], qla.block = array<i64: 128, 1, 1>} {
  return
}
