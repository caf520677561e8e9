// RUN: qla-opt %s -qla-convert-to-nvvm | FileCheck %s

// qla.dependent_launch: the ABI says so (the manifest's "dependent_launch", which makes the runtime
// launch with programmatic stream serialization), and the kernel's first two ops wait for the grids
// before it, then let the next one launch. A kernel without the attribute gets neither.
// CHECK: module attributes {qla.abi = {plain = {block = array<i64: 128, 1, 1>,
// CHECK-NOT: dependent_launch
// CHECK-SAME: waits = {block = array<i64: 128, 1, 1>, dependent_launch, params
// CHECK-LABEL: func.func @plain(
// CHECK-NOT: nvvm.griddepcontrol
// CHECK: return
// CHECK-LABEL: func.func @waits(
// CHECK-NEXT: nvvm.griddepcontrol wait
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK-NOT: qla.dependent_launch
func.func @plain(%x: !qla.tensor<64xf32>) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>} {
  return
}
func.func @waits(%x: !qla.tensor<64xf32>) attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>,
                                                       qla.dependent_launch} {
  return
}
