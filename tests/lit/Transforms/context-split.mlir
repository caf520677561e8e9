// RUN: qla-opt %s -qla-context-split=form=ends | FileCheck %s --check-prefix=ENDS
// RUN: qla-opt %s -qla-context-split=form=transition | FileCheck %s --check-prefix=TRANS
// RUN: qla-opt %s -qla-context-split=form=decays | FileCheck %s --check-prefix=DECAYS
// RUN: qla-opt %s -qla-context-split="form=decays decay-columns=8" | FileCheck %s --check-prefix=COLS
// RUN: not qla-opt %s -qla-context-split=form=diagonal 2>&1 | FileCheck %s --check-prefix=BADFORM
// RUN: not qla-opt %s -qla-context-split="form=decays decay-columns=0" 2>&1 | FileCheck %s --check-prefix=BADCOLS
// BADFORM: error: qla-context-split: form must be 'ends', 'transition' or 'decays', got 'diagonal'
// BADCOLS: error: qla-context-split: decay-columns must be at least 1, got 0

// The decays run: the declared log-decay (qla.scan_decay) of each iteration to decays[state · slots + i],
// slots = the table's length over the states (rows of %S / 64); the state is carried unchanged from
// zero and nothing else is stored or read.
// DECAYS-LABEL: func.func @scan(
// DECAYS-SAME: %[[OUT:[a-z0-9]+]]: !qla.tensor<?xf32> {qla.name = "decays"})
// DECAYS: %[[KEY:.*]] = arith.divsi %[[ROW:.*]], %c64
// DECAYS: %[[ROWS:.*]] = qla.dim %arg4, 0
// DECAYS: %[[STATES:.*]] = arith.divsi %[[ROWS]], %c64
// DECAYS: %[[LEN:.*]] = qla.dim %[[OUT]], 0
// DECAYS: %[[SLOTS:.*]] = arith.divsi %[[LEN]], %[[STATES]]
// DECAYS: %[[BASE:.*]] = arith.muli %[[KEY]], %[[SLOTS]]
// DECAYS: %[[ZERO:.*]] = qla.fill 0.000000e+00
// DECAYS: qla.for {{.*}} iter_args(%[[ZERO]] :
// DECAYS-NEXT: ^bb0(%[[I:.*]]: index, %[[ST:.*]]: !qla.tile<64x64xf32, frag>):
// DECAYS-NOT: qla.copy
// DECAYS: %[[D:.*]] = qla.load %arg5[%{{.*}}] {qla.scan_decay}
// DECAYS: %[[AT:.*]] = arith.addi %[[BASE]], %[[I]]
// DECAYS: %[[T:.*]] = qla.map
// DECAYS: qla.yield %[[D]] : f32
// DECAYS: %[[END:.*]] = arith.addi %[[BASE]], %[[SLOTS]]
// DECAYS: qla.store %[[T]], %[[OUT]][%[[AT]]] bounds[%[[END]]]
// DECAYS-NEXT: qla.yield %[[ST]]
// DECAYS-NOT: qla.store
// DECAYS: return

// With decay-columns=8 the states sit 8 to a row: decays[(state / 8 · slots + i) · 8 + state % 8],
// slots = the length over the states rounded up to whole rows of 8 (here 4 states: one row of 8, so the
// table holds 8 · slots), bounded at ((state / 8 + 1) · slots) · 8 (iterations past the slots write nothing).
// COLS: %[[KEY:.*]] = arith.divsi %[[ROW:.*]], %c64
// COLS: %[[STATES:.*]] = arith.divsi
// COLS: %[[GROUP:.*]] = arith.divsi %[[KEY]], %[[C8:c8[_0-9]*]]
// COLS: %[[COLUMN:.*]] = arith.remsi %[[KEY]], %[[C8]]
// COLS: %[[UP:.*]] = arith.addi %[[STATES]], %c7
// COLS: %[[ROWS:.*]] = arith.divsi %[[UP]], %[[C8]]
// COLS: %[[ROWSTATES:.*]] = arith.muli %[[ROWS]], %[[C8]]
// COLS: %[[LEN:.*]] = qla.dim
// COLS: %[[SLOTS:.*]] = arith.divsi %[[LEN]], %[[ROWSTATES]]
// COLS: %[[BASE:.*]] = arith.muli %[[GROUP]], %[[SLOTS]]
// COLS: qla.for
// COLS: %[[D:.*]] = qla.load %arg5[%{{.*}}] {qla.scan_decay}
// COLS: %[[R:.*]] = arith.addi %[[BASE]], %{{.*}}
// COLS: %[[RN:.*]] = arith.muli %[[R]], %[[C8]]
// COLS: %[[AT:.*]] = arith.addi %[[RN]], %[[COLUMN]]
// COLS: %[[T:.*]] = qla.map
// COLS: %[[E:.*]] = arith.addi %[[BASE]], %[[SLOTS]]
// COLS: %[[END:.*]] = arith.muli %[[E]], %[[C8]]
// COLS: qla.store %[[T]], %{{.*}}[%[[AT]]] bounds[%[[END]]]

// A scan carrying a transposed state Hᵀ (64x64) of head %h from %S; %V is its input term (U_c = Vᵀ·A),
// %O an output written each iteration.
// Both runs: a new tensor run_chunks, read at the state's index (row offset / 64 rows a state), the loop
// starting that many iterations before its end; the output store and what only fed it are gone.
// ENDS-LABEL: func.func @scan(
// ENDS-SAME: %[[RUNS:[a-z0-9]+]]: !qla.tensor<?xi64> {qla.name = "run_chunks"})
// ENDS: %[[KEY:.*]] = arith.divsi %[[ROW:.*]], %c64
// ENDS: %[[N:.*]] = qla.load %[[RUNS]][%[[KEY]]]
// ENDS: %[[FIRST:.*]] = arith.subi %[[UB:.*]], %[[N]]
// ENDS: %[[LB:.*]] = arith.maxsi %c0, %[[FIRST]]
// ENDS: %[[ANY:.*]] = arith.cmpi slt, %[[LB]], %[[UB]]
// ENDS: %[[ZERO:.*]] = qla.fill 0.000000e+00 : f32 : !qla.tile<64x64xf32, frag>
// ENDS: qla.for %[[LB]] to %[[UB]] step %c1 iter_args(%[[ZERO]] :
// ENDS-NOT: qla.store {{.*}} %arg2
// ENDS: qla.copy %arg1
// ENDS: qla.yield
// A run of no iteration stores nothing: the final store's first bound is 0 then.
// ENDS: %[[ROWS:.*]] = qla.dim %arg4, 0
// ENDS: %[[NCOL:.*]] = qla.dim %arg4, 1
// ENDS: %[[BOUND:.*]] = arith.select %[[ANY]], %[[ROWS]], %c0
// ENDS: qla.store {{.*}}, %arg4[{{.*}}] bounds[%[[BOUND]], %[[NCOL]]]
// ENDS-NOT: qla.copy %arg3

// The transition run: the identity at the tile's place (column offset %col: element (i, j) of Hᵀ is
// state element (j, col + i)), zero when no iteration runs; the gemm reading the input term %V is its
// accumulator (no copy of %V is left).
// TRANS-LABEL: func.func @scan(
// TRANS: %[[LB:.*]] = arith.maxsi
// TRANS: %[[ANY:.*]] = arith.cmpi slt, %[[LB]], %[[UB:.*]] : index
// TRANS: %[[R:.*]] = qla.iota 0
// TRANS: %[[C:.*]] = qla.iota 1
// TRANS: %[[COL:.*]] = arith.index_cast %{{.*}} : index to i32
// TRANS: %[[I:.*]] = qla.map %[[R]], %[[C]]
// TRANS: ^bb0(%[[E0:.*]]: i32, %[[E1:.*]]: i32):
// TRANS: %[[G:.*]] = arith.addi %[[COL]], %[[E0]] : i32
// TRANS: %[[D:.*]] = arith.cmpi eq, %[[E1]], %[[G]] : i32
// TRANS: arith.andi %[[D]], %[[ANY]] : i1
// TRANS: qla.for %[[LB]] to %[[UB]] step %c1 iter_args(%[[I]] :
// TRANS-NOT: qla.copy %arg2
// TRANS: qla.gemm
// TRANS-NOT: qla.copy %arg2
// TRANS: qla.yield
!acc = !qla.tile<64x64xf32, frag>
!sm = !qla.tile<64x64xbf16, smem>
func.func @scan(%A: !qla.tensor<4096x64xbf16>, %K: !qla.tensor<4096x64xbf16>, %V: !qla.tensor<4096x64xbf16> {qla.name = "v"},
                %O: !qla.tensor<4096x64xf32>, %S: !qla.tensor<256x64xf32>, %G: !qla.tensor<4096xf32>,
                %h: index, %col: index, %n: index)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %row = arith.muli %h, %c64 : index
  %h0 = qla.copy %S[%row, %col] {transpose} : !qla.tensor<256x64xf32> -> !acc
  %hN = qla.for %c0 to %n step %c1 iter_args(%h0 : !acc) -> !acc {
  ^bb0(%i: index, %st: !acc):
    %t0 = arith.muli %i, %c64 : index
    %d = qla.load %G[%t0] {qla.scan_decay} : !qla.tensor<4096xf32> -> f32
    %k = qla.copy %K[%t0, %c0] : !qla.tensor<4096x64xbf16> -> !sm
    %a = qla.copy %A[%t0, %c0] : !qla.tensor<4096x64xbf16> -> !sm
    %v = qla.copy %V[%t0, %c0] : !qla.tensor<4096x64xbf16> -> !sm
    %zero = qla.fill 0.0 : f32 : !acc
    %u = qla.gemm %v, %a, %zero {transpose_a, transpose_b} : !sm, !sm, !acc -> !acc
    %x = qla.gemm %k, %k, %st {transpose_b} : !sm, !sm, !acc -> !acc
    %next = qla.map %x, %u : !acc, !acc -> !acc {
    ^bb0(%e: f32, %f: f32):
      %s = arith.addf %e, %f : f32
      qla.yield %s : f32
    }
    qla.store %next, %O[%t0, %c0] : !acc, !qla.tensor<4096x64xf32>
    qla.yield %next : !acc
  } {qla.scan = ["v"]}
  qla.store %hN, %S[%row, %col] : !acc, !qla.tensor<256x64xf32>
  return
}
