// RUN: qla-opt %s -split-input-file -verify-diagnostics

// One case per verifier message of the qla dialect (QlaDialect.cpp: types, attributes, kernel
// attributes; QlaOps.cpp: ops), plus the constraints ODS generates.

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

// expected-error @+1 {{swizzle must be 0, 32, 64 or 128 bytes, got 96}}
func.func @swizzle_bytes(%t: !qla.tile<64x48xbf16, smem, #qla.swizzle<96>>) { return }

// -----

// expected-error @+1 {{wgmma_acc layout needs 1 to 4 warpgroups, got 5}}
func.func @wgmma_acc_too_many(%t: !qla.tile<320x64xf32, frag, #qla.wgmma_acc<warpgroups = 5>>) { return }

// -----

// expected-error @+1 {{wgmma_acc layout needs 1 to 4 warpgroups, got 0}}
func.func @wgmma_acc_zero(%t: !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 0>>) { return }

// -----

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

// expected-error @+1 {{tensor rank must be 1 to 5, got 0}}
func.func @tensor_rank0(%t: !qla.tensor<f32>) { return }

// -----

// expected-error @+1 {{tensor rank must be 1 to 5, got 6}}
func.func @tensor_rank6(%t: !qla.tensor<1x2x3x4x5x6xf32>) { return }

// -----

// expected-error @+1 {{tensor dimensions must be positive or '?', got 0}}
func.func @tensor_dim0(%t: !qla.tensor<0x4xf32>) { return }

// -----

// expected-error @+1 {{unsupported tensor element type 'i16' (expected bf16, f16, f32, f64, i64, i32 or i8)}}
func.func @tensor_elt(%t: !qla.tensor<4xi16>) { return }

// -----

// expected-error @+1 {{tensor has 2 dimensions but 1 strides}}
func.func @tensor_strides_count(%t: !qla.tensor<4x4xf32, strides = [1]>) { return }

// -----

// expected-error @+1 {{tensor strides must be positive or '?', got 0}}
func.func @tensor_stride0(%t: !qla.tensor<4x4xf32, strides = [0, 1]>) { return }

// -----

// expected-error @+1 {{tile rank must be 1 to 4, got 5}}
func.func @tile_rank5(%t: !qla.tile<1x2x3x4x5xf32, smem>) { return }

// -----

// expected-error @+1 {{tile rank must be 1 to 4, got 0}}
func.func @tile_rank0(%t: !qla.tile<f32, frag>) { return }

// -----

// expected-error @+1 {{tile dimensions must be static and positive, got ?}}
func.func @tile_dynamic(%t: !qla.tile<?x64xbf16, smem>) { return }

// -----

// expected-error @+1 {{tile dimensions must be static and positive, got 0}}
func.func @tile_dim0(%t: !qla.tile<64x0xbf16, smem>) { return }

// -----

// expected-error @+1 {{unsupported tile element type 'f8E4M3FN'}}
func.func @tile_elt(%t: !qla.tile<64x64xf8E4M3FN, smem>) { return }

// -----

// expected-error @+1 {{expected 'smem' or 'frag', got 'gmem'}}
func.func @tile_space(%t: !qla.tile<64x64xbf16, gmem>) { return }

// -----

// expected-error @+1 {{a shared-memory tile's layout must be #qla.swizzle, got #qla.wgmma_acc<warpgroups = 1>}}
func.func @smem_layout(%t: !qla.tile<64x64xbf16, smem, #qla.wgmma_acc<warpgroups = 1>>) { return }

// -----

// expected-error @+1 {{a fragment's layout must be #qla.wgmma_acc, #qla.strided or #qla.acc_slice, got #qla.swizzle<128>}}
func.func @frag_layout(%t: !qla.tile<64x64xf32, frag, #qla.swizzle<128>>) { return }

// -----

// expected-error @+1 {{an acc_slice fragment is a vector (one dimension other than 1) of a wgmma_acc fragment's rows}}
func.func @slice_not_vector(%t: !qla.tile<64x2xf32, frag, #qla.acc_slice<warpgroups = 1, along = 0>>) { return }

// -----

// expected-error @+1 {{an acc_slice fragment is a vector (one dimension other than 1) of a wgmma_acc fragment's rows}}
func.func @slice_rows(%t: !qla.tile<96x1xf32, frag, #qla.acc_slice<warpgroups = 1, along = 0>>) { return }

// -----

// expected-error @+1 {{acc_slice layout runs along the rows (0) or the columns (1), got 2}}
func.func @slice_along(%t: !qla.tile<1x64xf32, frag, #qla.acc_slice<warpgroups = 1, along = 2>>) { return }

// -----

// expected-error @+1 {{a wgmma_acc fragment needs 2-D shape with rows a multiple of 64 x 2 warpgroups, got 64 rows}}
func.func @acc_rows(%t: !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 2>>) { return }

// -----

// expected-error @+1 {{a wgmma_acc fragment needs 2-D shape with rows a multiple of 64 x 1 warpgroups, got 2 rows}}
func.func @acc_rank3(%t: !qla.tile<2x64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>) { return }

// -----

// expected-error @+1 {{a wgmma_acc fragment needs columns a multiple of 8 up to 256, got 12}}
func.func @acc_cols(%t: !qla.tile<64x12xf32, frag, #qla.wgmma_acc<warpgroups = 1>>) { return }

// -----

// expected-error @+1 {{a wgmma_acc fragment needs columns a multiple of 8 up to 256, got 264}}
func.func @acc_cols_wide(%t: !qla.tile<64x264xf32, frag, #qla.wgmma_acc<warpgroups = 1>>) { return }

// -----

//===----------------------------------------------------------------------===//
// Kernel attributes on func.func and the module
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'qla.kernel' belongs on a func.func kernel}}
module attributes {qla.kernel} {}

// -----

// expected-error @+1 {{'qla.grid' belongs on a func.func kernel}}
module attributes {qla.grid = array<i64: 1, 1, 1>} {}

// -----

// expected-error @+1 {{'qla.grid' must be array<i64: x, y, z>}}
func.func @grid_2d() attributes {qla.kernel, qla.grid = array<i64: 4, 4>} { return }

// -----

// expected-error @+1 {{'qla.grid' must be array<i64: x, y, z>}}
func.func @grid_not_array() attributes {qla.kernel, qla.grid = 4 : i64} { return }

// -----

// expected-error @+1 {{grid dimensions must be positive or -1 (given at launch)}}
func.func @grid_zero() attributes {qla.kernel, qla.grid = array<i64: 4, 0, 1>} { return }

// -----

// A grid dimension may be -1 (taken at launch); 0 or another negative is an error.
// expected-error @+1 {{grid dimensions must be positive or -1 (given at launch)}}
func.func @grid_negative() attributes {qla.kernel, qla.grid = array<i64: -2, 1, 1>} { return }

// -----

// expected-error @+1 {{'qla.block' must be array<i64: x, y, z>}}
func.func @block_1d() attributes {qla.kernel, qla.block = array<i64: 128>} { return }

// -----

// Unlike the grid, the block is never left to launch time.
// expected-error @+1 {{block dimensions must be positive}}
func.func @block_negative() attributes {qla.kernel, qla.block = array<i64: 128, -1, 1>} { return }

// -----

// expected-error @+1 {{block has 2048 threads, more than 1024}}
func.func @block_too_big() attributes {qla.kernel, qla.block = array<i64: 1024, 2, 1>} { return }

// -----

// expected-error @+1 {{block must be a whole number of warpgroups (128 threads), got 96}}
func.func @block_partial_warpgroup() attributes {qla.kernel, qla.block = array<i64: 32, 3, 1>} { return }

// -----

// expected-error @+1 {{'qla.block' belongs on a func.func kernel}}
module attributes {qla.block = array<i64: 128, 1, 1>} {}

// -----

// expected-error @+1 {{'qla.smem_bytes' must be an integer up to 232448 (227 KiB)}}
func.func @smem_too_big() attributes {qla.kernel, qla.smem_bytes = 232449 : i64} { return }

// -----

// expected-error @+1 {{'qla.smem_bytes' must be an integer up to 232448 (227 KiB)}}
func.func @smem_negative() attributes {qla.kernel, qla.smem_bytes = -16 : i64} { return }

// -----

// expected-error @+1 {{'qla.smem_bytes' must be an integer up to 232448 (227 KiB)}}
func.func @smem_not_int() attributes {qla.kernel, qla.smem_bytes = "lots"} { return }

// -----

// expected-error @+1 {{'qla.smem_bytes' belongs on a func.func kernel}}
module attributes {qla.smem_bytes = 1024 : i64} {}

// -----

// expected-error @+1 {{'qla.smem_offset' must be a non-negative byte offset}}
func.func @smem_offset_negative_attr() attributes {qla.smem_offset = -16 : i64} { return }

// -----

// expected-error @+1 {{'qla.scratch_offset' must be a non-negative byte offset}}
func.func @scratch_offset_not_int() attributes {qla.scratch_offset = "here"} { return }

// -----

// expected-error @+1 {{'qla.abi' must be a dictionary on the module}}
func.func @abi_on_func() attributes {qla.abi = {}} { return }

// -----

// expected-error @+1 {{'qla.abi' must be a dictionary on the module}}
module attributes {qla.abi = [1, 2]} {}

// -----

// expected-error @+1 {{unknown qla attribute 'qla.kernal'}}
func.func @typo() attributes {qla.kernal} { return }

// -----

//===----------------------------------------------------------------------===//
// block_id, copy, fill
//===----------------------------------------------------------------------===//

func.func @block_id_dim() {
  // expected-error @+1 {{'qla.block_id' op attribute 'dim' failed to satisfy constraint}}
  %0 = qla.block_id 3
  return
}

// -----

func.func @copy_offsets(%A: !qla.tensor<256x64xbf16>, %i: index) {
  // expected-error @+1 {{'qla.copy' op needs one offset per tensor dimension: 2, got 1}}
  %t = qla.copy %A[%i] : !qla.tensor<256x64xbf16> -> !qla.tile<64x64xbf16, smem>
  return
}

// -----

func.func @copy_rank(%A: !qla.tensor<256x64xbf16>, %i: index) {
  // expected-error @+1 {{'qla.copy' op tile rank 1 differs from tensor rank 2}}
  %t = qla.copy %A[%i, %i] : !qla.tensor<256x64xbf16> -> !qla.tile<64xbf16, smem>
  return
}

// -----

func.func @copy_elt(%A: !qla.tensor<256x64xbf16>, %i: index) {
  // expected-error @+1 {{'qla.copy' op tile element type 'f16' differs from tensor's 'bf16'}}
  %t = qla.copy %A[%i, %i] : !qla.tensor<256x64xbf16> -> !qla.tile<64x64xf16, smem>
  return
}

// -----

func.func @copy_bounds(%A: !qla.tensor<256x64xbf16>, %i: index) {
  // expected-error @+1 {{'qla.copy' op needs no bounds or one per tensor dimension, got 1}}
  %t = qla.copy %A[%i, %i] bounds [%i] : !qla.tensor<256x64xbf16> -> !qla.tile<64x64xbf16, smem>
  return
}

// -----

func.func @fill_type() {
  // expected-error @+1 {{'qla.fill' op value of type 'f16' does not match the fragment's element type 'f32'}}
  %t = qla.fill 0.0 : f16 : !qla.tile<64x64xf32, frag>
  return
}

// -----

func.func @fill_smem() {
  // expected-error @+1 {{'qla.fill' op result #0 must be register fragment}}
  %t = qla.fill 0.0 : f32 : !qla.tile<64x64xf32, smem>
  return
}

// -----

//===----------------------------------------------------------------------===//
// gemm
//===----------------------------------------------------------------------===//

func.func @gemm_rank(%a: !qla.tile<2x64x64xbf16, smem>, %b: !qla.tile<64x64xbf16, smem>, %c: !qla.tile<64x64xf32, frag>) {
  // expected-error @+1 {{'qla.gemm' op operands must be 2-D tiles}}
  %r = qla.gemm %a, %b, %c : !qla.tile<2x64x64xbf16, smem>, !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
  return
}

// -----

func.func @gemm_mixed(%a: !qla.tile<64x64xbf16, smem>, %b: !qla.tile<64x64xf16, smem>, %c: !qla.tile<64x64xf32, frag>) {
  // expected-error @+1 {{'qla.gemm' op A and B must both be bf16 or both f16, got 'bf16' and 'f16'}}
  %r = qla.gemm %a, %b, %c : !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
  return
}

// -----

func.func @gemm_f32_inputs(%a: !qla.tile<64x64xf32, smem>, %b: !qla.tile<64x64xf32, smem>, %c: !qla.tile<64x64xf32, frag>) {
  // expected-error @+1 {{'qla.gemm' op A and B must both be bf16 or both f16, got 'f32' and 'f32'}}
  %r = qla.gemm %a, %b, %c : !qla.tile<64x64xf32, smem>, !qla.tile<64x64xf32, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
  return
}

// -----

func.func @gemm_acc_type(%a: !qla.tile<64x64xf16, smem>, %b: !qla.tile<64x64xf16, smem>, %c: !qla.tile<64x64xf16, frag>) {
  // expected-error @+1 {{'qla.gemm' op the accumulator must be f32, got 'f16'}}
  %r = qla.gemm %a, %b, %c : !qla.tile<64x64xf16, smem>, !qla.tile<64x64xf16, smem>, !qla.tile<64x64xf16, frag> -> !qla.tile<64x64xf16, frag>
  return
}

// -----

func.func @gemm_k(%a: !qla.tile<64x64xbf16, smem>, %b: !qla.tile<32x128xbf16, smem>, %c: !qla.tile<64x128xf32, frag>) {
  // expected-error @+1 {{'qla.gemm' op contraction sizes differ: A is 64x64, B is 32x128}}
  %r = qla.gemm %a, %b, %c : !qla.tile<64x64xbf16, smem>, !qla.tile<32x128xbf16, smem>, !qla.tile<64x128xf32, frag> -> !qla.tile<64x128xf32, frag>
  return
}

// -----

func.func @gemm_k_transposed(%a: !qla.tile<64x64xbf16, smem>, %b: !qla.tile<128x32xbf16, smem>, %c: !qla.tile<64x128xf32, frag>) {
  // expected-error @+1 {{'qla.gemm' op contraction sizes differ: A is 64x64, Bᵀ is 128x32}}
  %r = qla.gemm %a, %b, %c {transpose_b} : !qla.tile<64x64xbf16, smem>, !qla.tile<128x32xbf16, smem>, !qla.tile<64x128xf32, frag> -> !qla.tile<64x128xf32, frag>
  return
}

// -----

func.func @gemm_acc_shape(%a: !qla.tile<64x64xbf16, smem>, %b: !qla.tile<128x64xbf16, smem>, %c: !qla.tile<64x64xf32, frag>) {
  // expected-error @+1 {{'qla.gemm' op accumulator must be 64x128, got 64x64}}
  %r = qla.gemm %a, %b, %c {transpose_b} : !qla.tile<64x64xbf16, smem>, !qla.tile<128x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
  return
}

// -----

func.func @gemm_result(%a: !qla.tile<64x64xbf16, smem>, %b: !qla.tile<64x64xbf16, smem>, %c: !qla.tile<64x64xf32, frag>) {
  // expected-error @+1 {{'qla.gemm' op result type must equal the accumulator type}}
  %r = qla.gemm %a, %b, %c : !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  return
}

// -----

func.func @gemm_b_in_registers(%a: !qla.tile<64x64xbf16, smem>, %b: !qla.tile<64x64xbf16, frag>, %c: !qla.tile<64x64xf32, frag>) {
  // expected-error @+1 {{'qla.gemm' op operand #1 must be shared-memory tile}}
  %r = qla.gemm %a, %b, %c : !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xbf16, frag>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
  return
}

// -----

func.func @gemm_register_a_transposed(%a: !qla.tile<64x64xbf16, frag>, %b: !qla.tile<64x64xbf16, smem>, %c: !qla.tile<64x64xf32, frag>) {
  // expected-error @+1 {{'qla.gemm' op a register-fragment A cannot be transposed (store it with qla.share first)}}
  %r = qla.gemm %a, %b, %c {transpose_a} : !qla.tile<64x64xbf16, frag>, !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
  return
}

// -----

func.func @gemm_k_transposed_a(%a: !qla.tile<32x64xbf16, smem>, %b: !qla.tile<64x128xbf16, smem>, %c: !qla.tile<64x128xf32, frag>) {
  // expected-error @+1 {{'qla.gemm' op contraction sizes differ: Aᵀ is 32x64, B is 64x128}}
  %r = qla.gemm %a, %b, %c {transpose_a} : !qla.tile<32x64xbf16, smem>, !qla.tile<64x128xbf16, smem>, !qla.tile<64x128xf32, frag> -> !qla.tile<64x128xf32, frag>
  return
}

// -----

//===----------------------------------------------------------------------===//
// map
//===----------------------------------------------------------------------===//

func.func @map_no_inputs() {
  // expected-error @+1 {{'qla.map' op needs at least one input}}
  %m = "qla.map"() ({
    %y = arith.constant 1.0 : f32
    qla.yield %y : f32
  }) : () -> !qla.tile<64x64xf32, frag>
  return
}

// -----

func.func @map_arity(%x: !qla.tile<64x64xf32, frag>) {
  // expected-error @+1 {{'qla.map' op body takes 2 arguments for 1 inputs}}
  %m = qla.map %x : !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag> {
  ^bb0(%a: f32, %b: f32):
    qla.yield %a : f32
  }
  return
}

// -----

func.func @map_shape(%x: !qla.tile<64x64xf32, frag>, %y: !qla.tile<64x32xf32, frag>) {
  // expected-error @+1 {{'qla.map' op input 1 has shape 64x32, the result 64x64}}
  %m = qla.map %x, %y : !qla.tile<64x64xf32, frag>, !qla.tile<64x32xf32, frag> -> !qla.tile<64x64xf32, frag> {
  ^bb0(%a: f32, %b: f32):
    qla.yield %a : f32
  }
  return
}

// -----

func.func @map_layout(%x: !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>) {
  // expected-error @+1 {{'qla.map' op input 0 has a different fragment layout from the result}}
  %m = qla.map %x : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xf32, frag> {
  ^bb0(%a: f32):
    qla.yield %a : f32
  }
  return
}

// -----

func.func @map_arg_type(%x: !qla.tile<64x64xf32, frag>) {
  // expected-error @+1 {{'qla.map' op body argument 0 must be 'f32'}}
  %m = qla.map %x : !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag> {
  ^bb0(%a: f16):
    %e = arith.extf %a : f16 to f32
    qla.yield %e : f32
  }
  return
}

// -----

func.func @map_yield(%x: !qla.tile<64x64xf32, frag>) {
  // expected-error @+1 {{'qla.map' op body must yield one 'bf16'}}
  %m = qla.map %x : !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xbf16, frag> {
  ^bb0(%a: f32):
    qla.yield %a : f32
  }
  return
}

// -----

func.func @map_impure(%x: !qla.tile<64x64xf32, frag>) {
  %m = qla.map %x : !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag> {
  ^bb0(%a: f32):
    // expected-error @+1 {{'nvvm.barrier0' op cannot appear in qla.map: its body must be pure scalar arithmetic}}
    nvvm.barrier0
    qla.yield %a : f32
  }
  return
}

// -----

func.func @map_region(%x: !qla.tile<64x64xf32, frag>, %p: i1) {
  %m = qla.map %x : !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag> {
  ^bb0(%a: f32):
    // expected-error @+1 {{'scf.if' op cannot appear in qla.map: its body must be pure scalar arithmetic}}
    %r = scf.if %p -> f32 {
      scf.yield %a : f32
    } else {
      scf.yield %a : f32
    }
    qla.yield %r : f32
  }
  return
}

// -----

//===----------------------------------------------------------------------===//
// prefetch
//===----------------------------------------------------------------------===//

func.func @gemm_k_slices_order(%a: !qla.tile<64x64xbf16, smem>, %acc: !qla.tile<64x64xf32, frag>) {
  // expected-error @+1 {{'qla.gemm' op k_slices must be increasing 16-wide slices of K = 64 (each in [0, 4)), got [2, 1]}}
  %r = qla.gemm %a, %a, %acc {k_slices = array<i64: 2, 1>} : !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
  return
}

// -----

func.func @gemm_k_slices_range(%a: !qla.tile<64x64xbf16, smem>, %acc: !qla.tile<64x64xf32, frag>) {
  // expected-error @+1 {{'qla.gemm' op k_slices must be increasing 16-wide slices of K = 64 (each in [0, 4)), got [0, 4]}}
  %r = qla.gemm %a, %a, %acc {k_slices = array<i64: 0, 4>} : !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
  return
}

// -----

func.func @gemm_k_slices_empty(%a: !qla.tile<64x64xbf16, smem>, %acc: !qla.tile<64x64xf32, frag>) {
  // expected-error @+1 {{'qla.gemm' op k_slices must name at least one slice of K (drop the gemm instead)}}
  %r = qla.gemm %a, %a, %acc {k_slices = array<i64>} : !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xbf16, smem>, !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, frag>
  return
}

// -----

func.func @prefetch_box_rank(%C: !qla.tensor<256x256xbf16>, %i: index) {
  // expected-error @+1 {{'qla.prefetch' op needs one offset and one box extent per tensor dimension: 2, got 2 offsets and a box of rank 1}}
  qla.prefetch %C[%i, %i] {shape = array<i64: 64>} : !qla.tensor<256x256xbf16>
  return
}

// -----

func.func @prefetch_offsets(%C: !qla.tensor<256x256xbf16>, %i: index) {
  // expected-error @+1 {{'qla.prefetch' op needs one offset and one box extent per tensor dimension: 2, got 1 offsets and a box of rank 2}}
  qla.prefetch %C[%i] {shape = array<i64: 64, 1>} : !qla.tensor<256x256xbf16>
  return
}

// -----

func.func @prefetch_empty_box(%C: !qla.tensor<256x256xbf16>, %i: index) {
  // expected-error @+1 {{'qla.prefetch' op needs a box of positive extents}}
  qla.prefetch %C[%i, %i] {shape = array<i64: 64, 0>} : !qla.tensor<256x256xbf16>
  return
}

// -----

func.func @prefetch_bounds(%C: !qla.tensor<256x256xbf16>, %i: index) {
  // expected-error @+1 {{'qla.prefetch' op needs no bounds or one per tensor dimension, got 1}}
  qla.prefetch %C[%i, %i] bounds[%i] {shape = array<i64: 64, 1>} : !qla.tensor<256x256xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// store
//===----------------------------------------------------------------------===//

func.func @store_offsets(%t: !qla.tile<64x64xbf16, frag>, %C: !qla.tensor<256x256xbf16>, %i: index) {
  // expected-error @+1 {{'qla.store' op needs one offset per tensor dimension: 2, got 3}}
  qla.store %t, %C[%i, %i, %i] : !qla.tile<64x64xbf16, frag>, !qla.tensor<256x256xbf16>
  return
}

// -----

func.func @store_rank(%t: !qla.tile<64xbf16, frag>, %C: !qla.tensor<256x256xbf16>, %i: index) {
  // expected-error @+1 {{'qla.store' op tile rank 1 differs from tensor rank 2}}
  qla.store %t, %C[%i, %i] : !qla.tile<64xbf16, frag>, !qla.tensor<256x256xbf16>
  return
}

// -----

func.func @store_bounds(%t: !qla.tile<64x64xbf16, frag>, %C: !qla.tensor<256x256xbf16>, %i: index) {
  // expected-error @+1 {{'qla.store' op needs no bounds or one per tensor dimension, got 3}}
  qla.store %t, %C[%i, %i] bounds [%i, %i, %i] : !qla.tile<64x64xbf16, frag>, !qla.tensor<256x256xbf16>
  return
}

// -----

func.func @store_elt(%t: !qla.tile<64x64xf32, frag>, %C: !qla.tensor<256x256xbf16>, %i: index) {
  // expected-error @+1 {{'qla.store' op cannot store a 'f32' tile into a 'bf16' tensor (convert it with qla.map first)}}
  qla.store %t, %C[%i, %i] : !qla.tile<64x64xf32, frag>, !qla.tensor<256x256xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// for
//===----------------------------------------------------------------------===//

func.func @for_block_args(%x: !qla.tile<64x64xf32, frag>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'qla.for' op body must take the induction variable and one value per iter_arg}}
  %r = qla.for %c0 to %n step %c1 iter_args(%x : !qla.tile<64x64xf32, frag>) -> !qla.tile<64x64xf32, frag> {
  ^bb0(%i: index):
    qla.yield %x : !qla.tile<64x64xf32, frag>
  }
  return
}

// -----

func.func @for_iv_type(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'qla.for' op induction variable must be an index}}
  qla.for %c0 to %n step %c1 {
  ^bb0(%i: i32):
    qla.yield
  }
  return
}

// -----

func.func @for_results(%x: !qla.tile<64x64xf32, frag>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'qla.for' op needs one result per iter_arg}}
  "qla.for"(%c0, %n, %c1, %x) ({
  ^bb0(%i: index, %acc: !qla.tile<64x64xf32, frag>):
    qla.yield %acc : !qla.tile<64x64xf32, frag>
  }) : (index, index, index, !qla.tile<64x64xf32, frag>) -> ()
  return
}

// -----

func.func @for_iter_arg_type(%x: !qla.tile<64x64xf32, frag>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'qla.for' op iter_arg 0 changes type across the loop}}
  %r = qla.for %c0 to %n step %c1 iter_args(%x : !qla.tile<64x64xf32, frag>) -> !qla.tile<64x64xf32, frag> {
  ^bb0(%i: index, %acc: !qla.tile<64x32xf32, frag>):
    qla.yield %x : !qla.tile<64x64xf32, frag>
  }
  return
}

// -----

func.func @for_yield_count(%x: !qla.tile<64x64xf32, frag>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'qla.for' op body yields 0 values for 1 iter_args}}
  %r = qla.for %c0 to %n step %c1 iter_args(%x : !qla.tile<64x64xf32, frag>) -> !qla.tile<64x64xf32, frag> {
  ^bb0(%i: index, %acc: !qla.tile<64x64xf32, frag>):
    qla.yield
  }
  return
}

// -----

func.func @for_yield_type(%x: !qla.tile<64x64xf32, frag>, %y: !qla.tile<64x32xf32, frag>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'qla.for' op yielded value 0 has type '!qla.tile<64x32xf32, frag>', expected '!qla.tile<64x64xf32, frag>'}}
  %r = qla.for %c0 to %n step %c1 iter_args(%x : !qla.tile<64x64xf32, frag>) -> !qla.tile<64x64xf32, frag> {
  ^bb0(%i: index, %acc: !qla.tile<64x64xf32, frag>):
    qla.yield %y : !qla.tile<64x32xf32, frag>
  }
  return
}

// -----

func.func @for_stages(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  qla.for %c0 to %n step %c1 {
  ^bb0(%i: index):
    qla.yield
  // expected-error @+1 {{'qla.for' op attribute 'stages' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  } {stages = 0 : i64}
  return
}

// -----

func.func @yield_outside() {
  // expected-error @+1 {{'qla.yield' op expects parent op to be one of 'qla.for, qla.map'}}
  qla.yield
}

// -----

//===----------------------------------------------------------------------===//
// Target level: smem_alloc, slot, tma_load, async_wait
//===----------------------------------------------------------------------===//

func.func @smem_offset_unaligned() {
  // expected-error @+1 {{'qla.smem_alloc' op shared-memory offset must be a non-negative multiple of 16, got 1000}}
  %t = qla.smem_alloc {offset = 1000 : i64} : !qla.tile<64x64xbf16, smem>
  return
}

// -----

func.func @smem_offset_negative() {
  // expected-error @+1 {{'qla.smem_alloc' op shared-memory offset must be a non-negative multiple of 16, got -1024}}
  %t = qla.smem_alloc {offset = -1024 : i64} : !qla.tile<64x64xbf16, smem>
  return
}

// -----

func.func @smem_alloc_frag() {
  // expected-error @+1 {{'qla.smem_alloc' op result #0 must be shared-memory tile}}
  %t = qla.smem_alloc : !qla.tile<64x64xf32, frag>
  return
}

// -----

func.func @slot_shape(%i: index) {
  %ring = qla.smem_alloc : !qla.tile<4x64x64xbf16, smem>
  // expected-error @+1 {{'qla.slot' op slot type must be the ring type without its leading dimension}}
  %s = qla.slot %ring[%i] : !qla.tile<4x64x64xbf16, smem> -> !qla.tile<64x32xbf16, smem>
  return
}

// -----

func.func @slot_layout(%i: index) {
  %ring = qla.smem_alloc : !qla.tile<4x64x64xbf16, smem, #qla.swizzle<128>>
  // expected-error @+1 {{'qla.slot' op slot type must be the ring type without its leading dimension}}
  %s = qla.slot %ring[%i] : !qla.tile<4x64x64xbf16, smem, #qla.swizzle<128>> -> !qla.tile<64x64xbf16, smem>
  return
}

// -----

!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
func.func @tma_offsets(%A: !qla.tensor<256x64xbf16>, %i: index) {
  %bar = nvgpu.mbarrier.create -> !bars
  %t = qla.smem_alloc : !qla.tile<64x64xbf16, smem>
  // expected-error @+1 {{'qla.tma_load' op needs a tile and offsets of the tensor's rank 2}}
  qla.tma_load %A[%i], %t, %bar[%i] : !qla.tensor<256x64xbf16>, !qla.tile<64x64xbf16, smem>, !bars
  return
}

// -----

!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
func.func @tma_rank(%A: !qla.tensor<256x64xbf16>, %i: index) {
  %bar = nvgpu.mbarrier.create -> !bars
  %t = qla.smem_alloc : !qla.tile<2x64x64xbf16, smem>
  // expected-error @+1 {{'qla.tma_load' op needs a tile and offsets of the tensor's rank 2}}
  qla.tma_load %A[%i, %i], %t, %bar[%i] : !qla.tensor<256x64xbf16>, !qla.tile<2x64x64xbf16, smem>, !bars
  return
}

// -----

!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
func.func @tma_elt(%A: !qla.tensor<256x64xbf16>, %i: index) {
  %bar = nvgpu.mbarrier.create -> !bars
  %t = qla.smem_alloc : !qla.tile<64x64xf16, smem>
  // expected-error @+1 {{'qla.tma_load' op element types differ}}
  qla.tma_load %A[%i, %i], %t, %bar[%i] : !qla.tensor<256x64xbf16>, !qla.tile<64x64xf16, smem>, !bars
  return
}

// -----

!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
func.func @tma_box(%A: !qla.tensor<512x64xbf16>, %i: index) {
  %bar = nvgpu.mbarrier.create -> !bars
  %t = qla.smem_alloc : !qla.tile<512x64xbf16, smem>
  // expected-error @+1 {{'qla.tma_load' op a TMA box dimension is at most 256, got 512}}
  qla.tma_load %A[%i, %i], %t, %bar[%i] : !qla.tensor<512x64xbf16>, !qla.tile<512x64xbf16, smem>, !bars
  return
}

// -----

func.func @async_wait_pending() {
  // expected-error @+1 {{'qla.async_wait' op attribute 'pending' failed to satisfy constraint}}
  qla.async_wait 8
  return
}

// -----

//===----------------------------------------------------------------------===//
// dim, load, iota, broadcast, reduce, cumsum, share, tri_inverse
//===----------------------------------------------------------------------===//

func.func @dim_range(%A: !qla.tensor<?x64xbf16>) {
  // expected-error @+1 {{'qla.dim' op dimension 2 is out of range for rank 2}}
  %d = qla.dim %A, 2 : !qla.tensor<?x64xbf16>
  return
}

// -----

func.func @load_indices(%A: !qla.tensor<8x4xi32>, %i: index) {
  // expected-error @+1 {{'qla.load' op needs one index per tensor dimension: 2, got 1}}
  %x = qla.load %A[%i] : !qla.tensor<8x4xi32> -> index
  return
}

// -----

func.func @load_float_as_index(%A: !qla.tensor<8xf32>, %i: index) {
  // expected-error @+1 {{'qla.load' op loads a 'f32' element as itself, not 'index'}}
  %x = qla.load %A[%i] : !qla.tensor<8xf32> -> index
  return
}

// -----

func.func @load_float_type(%A: !qla.tensor<8xf32>, %i: index) {
  // expected-error @+1 {{'qla.load' op loads a 'f32' element as itself, not 'f16'}}
  %x = qla.load %A[%i] : !qla.tensor<8xf32> -> f16
  return
}

// -----

func.func @load_int_as_float(%A: !qla.tensor<8xi64>, %i: index) {
  // expected-error @+1 {{'qla.load' op loads a 'i64' element as index, not 'f32'}}
  %x = qla.load %A[%i] : !qla.tensor<8xi64> -> f32
  return
}

// -----

func.func @iota_type() {
  // expected-error @+1 {{'qla.iota' op produces i32 indices, not 'f32'}}
  %x = qla.iota 0 : !qla.tile<64x64xf32, frag>
  return
}

// -----

func.func @iota_dim() {
  // expected-error @+1 {{'qla.iota' op dimension 2 is out of range for rank 2}}
  %x = qla.iota 2 : !qla.tile<64x64xi32, frag>
  return
}

// -----

func.func @broadcast_type(%g: !qla.tile<64xf32, frag>) {
  // expected-error @+1 {{'qla.broadcast' op element types differ}}
  %x = qla.broadcast %g {dims = array<i64: 0>} : !qla.tile<64xf32, frag> -> !qla.tile<64x64xbf16, frag>
  return
}

// -----

func.func @broadcast_dims_count(%g: !qla.tile<64xf32, frag>) {
  // expected-error @+1 {{'qla.broadcast' op needs one result dimension per input dimension}}
  %x = qla.broadcast %g {dims = array<i64: 0, 1>} : !qla.tile<64xf32, frag> -> !qla.tile<64x64xf32, frag>
  return
}

// -----

func.func @broadcast_dims_range(%g: !qla.tile<64xf32, frag>) {
  // expected-error @+1 {{'qla.broadcast' op dims must be distinct result dimensions}}
  %x = qla.broadcast %g {dims = array<i64: 2>} : !qla.tile<64xf32, frag> -> !qla.tile<64x64xf32, frag>
  return
}

// -----

func.func @broadcast_dims_repeated(%g: !qla.tile<64x64xf32, frag>) {
  // expected-error @+1 {{'qla.broadcast' op dims must be distinct result dimensions}}
  %x = qla.broadcast %g {dims = array<i64: 1, 1>} : !qla.tile<64x64xf32, frag> -> !qla.tile<4x64x64xf32, frag>
  return
}

// -----

func.func @broadcast_size(%g: !qla.tile<32xf32, frag>) {
  // expected-error @+1 {{'qla.broadcast' op input dimension 0 (32) does not match result dimension 1 (64) and is not 1}}
  %x = qla.broadcast %g {dims = array<i64: 1>} : !qla.tile<32xf32, frag> -> !qla.tile<64x64xf32, frag>
  return
}

// -----

func.func @reduce_shape(%x: !qla.tile<64x32xf32, frag>) {
  // expected-error @+1 {{'qla.reduce' op result must be the input without dimension 1: shape 64 of 'f32'}}
  %r = qla.reduce add %x, 1 : !qla.tile<64x32xf32, frag> -> !qla.tile<32xf32, frag>
  return
}

// -----

// A 1-D fragment cannot be reduced to a tile (tiles have rank >= 1).
func.func @reduce_rank1(%x: !qla.tile<64xf32, frag>) {
  // expected-error @+1 {{'qla.reduce' op reduces fragments of rank 2 or more (the result is a tile), got rank 1}}
  %r = qla.reduce max %x, 0 : !qla.tile<64xf32, frag> -> !qla.tile<64xf32, frag>
  return
}

// -----

func.func @reduce_dim(%x: !qla.tile<64x32xf32, frag>) {
  // expected-error @+1 {{'qla.reduce' op dimension -1 is out of range for rank 2}}
  %r = qla.reduce add %x, -1 : !qla.tile<64x32xf32, frag> -> !qla.tile<64xf32, frag>
  return
}

// -----

func.func @reduce_kind(%x: !qla.tile<64x32xf32, frag>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [add, max]}}
  %r = qla.reduce min %x, 1 : !qla.tile<64x32xf32, frag> -> !qla.tile<64xf32, frag>
  return
}

// -----

func.func @cumsum_int(%x: !qla.tile<64xi32, frag>) {
  // expected-error @+1 {{'qla.cumsum' op sums floating-point fragments only}}
  %r = qla.cumsum %x, 0 : !qla.tile<64xi32, frag>
  return
}

// -----

func.func @cumsum_dim(%x: !qla.tile<64x16xf32, frag>) {
  // expected-error @+1 {{'qla.cumsum' op dimension 2 is out of range for rank 2}}
  %r = qla.cumsum %x, 2 : !qla.tile<64x16xf32, frag>
  return
}

// -----

func.func @share_shape(%x: !qla.tile<64x64xbf16, frag>) {
  // expected-error @+1 {{'qla.share' op the shared tile must have the fragment's shape and element type}}
  %s = qla.share %x : !qla.tile<64x64xbf16, frag> -> !qla.tile<64x32xbf16, smem>
  return
}

// -----

func.func @share_type(%x: !qla.tile<64x64xf32, frag>) {
  // expected-error @+1 {{'qla.share' op the shared tile must have the fragment's shape and element type}}
  %s = qla.share %x : !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xbf16, smem>
  return
}

// -----

func.func @tri_inverse_square(%x: !qla.tile<64x32xf32, frag>) {
  // expected-error @+1 {{'qla.tri_inverse' op needs a square floating-point fragment, got 64x32}}
  %r = qla.tri_inverse %x : !qla.tile<64x32xf32, frag>
  return
}

// -----

func.func @stash_shape(%x: !qla.tile<64x64xf32, frag>) {
  // expected-error @+1 {{'qla.stash' op the stash must have the fragment's shape and element type}}
  %s = qla.stash %x : !qla.tile<64x64xf32, frag> -> !qla.tile<64x32xf32, smem>
  return
}

// -----

func.func @unstash_not_a_stash(%x: !qla.tile<64x64xf32, frag>) {
  %s = qla.share %x : !qla.tile<64x64xf32, frag> -> !qla.tile<64x64xf32, smem>
  // expected-error @+1 {{'qla.unstash' op reads a stash (qla.stash's result) only}}
  %y = qla.unstash %s : !qla.tile<64x64xf32, smem> -> !qla.tile<64x64xf32, frag>
  return
}

// -----

func.func @tri_inverse_f16_merges_block(%x: !qla.tile<64x64xf32, frag>) {
  // expected-error @+1 {{'qla.tri_inverse' op f16_merges inverts a whole 64x64 f32 tile (no block), got 64x64 with block}}
  %r = qla.tri_inverse %x {block = 16, f16_merges} : !qla.tile<64x64xf32, frag>
  return
}

// -----

func.func @tri_inverse_f16_merges_size(%x: !qla.tile<32x32xf32, frag>) {
  // expected-error @+1 {{'qla.tri_inverse' op f16_merges inverts a whole 64x64 f32 tile (no block), got 32x32}}
  %r = qla.tri_inverse %x {f16_merges} : !qla.tile<32x32xf32, frag>
  return
}

// -----

func.func @tri_inverse_int(%x: !qla.tile<64x64xi32, frag>) {
  // expected-error @+1 {{'qla.tri_inverse' op needs a square floating-point fragment, got 64x64}}
  %r = qla.tri_inverse %x : !qla.tile<64x64xi32, frag>
  return
}

// -----

func.func @copy_transposed_to_shared(%t: !qla.tensor<128x64xf32>, %i: index) {
  // expected-error @+1 {{'qla.copy' op copies transposed only 2-D tiles into registers, got '!qla.tile<64x128xf32, smem>'}}
  %r = qla.copy %t[%i, %i] {transpose} : !qla.tensor<128x64xf32> -> !qla.tile<64x128xf32, smem>
  return
}

// -----

func.func @store_transposed_1d(%x: !qla.tile<64xf32, frag>, %t: !qla.tensor<128xf32>, %i: index) {
  // expected-error @+1 {{'qla.store' op stores transposed only 2-D tiles, got '!qla.tile<64xf32, frag>'}}
  qla.store %x, %t[%i] {transpose} : !qla.tile<64xf32, frag>, !qla.tensor<128xf32>
  return
}

// -----

// expected-error @+1 {{'qla.min_blocks_per_sm' must be an integer from 1 to 32 (blocks an SM)}}
func.func @min_blocks_zero() attributes {qla.min_blocks_per_sm = 0 : i64} { return }

// -----

// expected-error @+1 {{'qla.dependent_launch' must be a unit attribute}}
func.func @dependent_launch_value() attributes {qla.dependent_launch = 1 : i64} { return }

// -----

func.func @tri_inverse_block(%x: !qla.tile<64x64xf32, frag>) {
  // expected-error @+1 {{'qla.tri_inverse' op block = 24 must be positive and divide the size 64}}
  %y = qla.tri_inverse %x {block = 24 : i64} : !qla.tile<64x64xf32, frag>
  return
}

// -----

// expected-error @+1 {{role 'a' is declared twice}}
func.func @roles_twice() attributes {qla.kernel, qla.block = array<i64: 256, 1, 1>,
    qla.roles = [#qla.role<"a", warpgroups = 1>, #qla.role<"a", warpgroups = 1>]} { return }

// -----

// expected-error @+1 {{the roles have 2 warpgroups (256 threads), the block 384}}
func.func @roles_threads() attributes {qla.kernel, qla.block = array<i64: 384, 1, 1>,
    qla.roles = [#qla.role<"a", warpgroups = 1>, #qla.role<"b", warpgroups = 1>]} { return }

// -----

// expected-error @+1 {{the roles' register budgets need 89088 registers, more than the block's 64512 (168 a thread x 384 threads)}}
func.func @roles_registers() attributes {qla.kernel, qla.block = array<i64: 384, 1, 1>,
    qla.roles = [#qla.role<"a", warpgroups = 2, registers = 232>, #qla.role<"b", warpgroups = 1, registers = 232>]} { return }

// -----

// 512 registers a thread-slot fit 65536, but not the 168 a thread that 384 threads start with: the last
// setmaxnreg.inc would wait forever.
// expected-error @+1 {{the roles' register budgets need 65536 registers, more than the block's 64512 (168 a thread x 384 threads)}}
func.func @roles_registers_cap() attributes {qla.kernel, qla.block = array<i64: 384, 1, 1>,
    qla.roles = [#qla.role<"loads", warpgroups = 1, registers = 32>, #qla.role<"mma", warpgroups = 2, registers = 240>]} { return }

// -----

// expected-error @+1 {{registers must be 0 (no budget) or a multiple of 8 from 24 to 256 (setmaxnreg), got 100}}
func.func @role_registers() attributes {qla.roles = [#qla.role<"a", warpgroups = 1, registers = 100>]} { return }

// -----

func.func @role_unknown() attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>,
    qla.roles = [#qla.role<"a", warpgroups = 1>]} {
  // expected-error @+1 {{role 'b' is not among the kernel's qla.roles}}
  %z = qla.fill 0.0 : f32 {qla.role = "b"} : !qla.tile<64x64xf32, frag>
  return
}

// -----

// expected-error @+1 {{acc_slice layout needs 1 to 4 warpgroups, got 5}}
func.func @slice_warpgroups(%t: !qla.tile<64x1xf32, frag, #qla.acc_slice<warpgroups = 5, along = 0>>) { return }

// -----

// expected-error @+1 {{an acc_slice fragment is a vector (one dimension other than 1) of a wgmma_acc fragment's rows (a multiple of 64 x warpgroups) or columns (a multiple of 8 up to 256)}}
func.func @slice_columns(%t: !qla.tile<1x264xf32, frag, #qla.acc_slice<warpgroups = 1, along = 1>>) { return }

// -----

// expected-error @+1 {{'qla.slice_broadcasts' must be a unit attribute}}
func.func @slice_broadcasts_attr() attributes {qla.kernel, qla.slice_broadcasts = 1 : i64} { return }

// -----

// expected-error @+1 {{'qla.warpgroup_local' is for kernels without roles (roles synchronise on their own named barriers already)}}
func.func @warpgroup_local_with_roles() attributes {qla.kernel, qla.warpgroup_local,
    qla.roles = [#qla.role<"state", warpgroups = 1>, #qla.role<"output", warpgroups = 1>]} { return }

// -----

// expected-error @+1 {{'qla.scratch_per_warpgroup' must be a unit attribute on a qla.store}}
func.func @scratch_per_warpgroup_attr() attributes {qla.kernel, qla.scratch_per_warpgroup} { return }

// -----

func.func @read_box_too_big(%t: !qla.tile<64x4xf32, smem>, %i: index) {
  // expected-error @+1 {{box of 8 in dimension 1 exceeds the tile's 4}}
  %r = qla.read %t[%i, %i] : !qla.tile<64x4xf32, smem> -> !qla.tile<64x8xf32, frag>
  return
}

// -----

func.func @read_transposed_box(%t: !qla.tile<64x4xf32, smem>, %i: index) {
  // The transposed box is the fragment's shape swapped: 64 x 2 here, inside; 2 x 64 is not.
  %ok = qla.read %t[%i, %i] {transpose} : !qla.tile<64x4xf32, smem> -> !qla.tile<2x64xf32, frag>
  // expected-error @+1 {{box of 64 in dimension 1 exceeds the tile's 4}}
  %r = qla.read %t[%i, %i] {transpose} : !qla.tile<64x4xf32, smem> -> !qla.tile<64x2xf32, frag>
  return
}

// -----

func.func @read_element_type(%t: !qla.tile<64x4xf32, smem>, %i: index) {
  // expected-error @+1 {{reads 'f32' elements into 'bf16'}}
  %r = qla.read %t[%i, %i] : !qla.tile<64x4xf32, smem> -> bf16
  return
}

// -----

func.func @read_offsets(%t: !qla.tile<64x4xf32, smem>, %i: index) {
  // expected-error @+1 {{needs one offset per tile dimension: 2, got 1}}
  %r = qla.read %t[%i] : !qla.tile<64x4xf32, smem> -> f32
  return
}

// -----

func.func @read_swizzle(%t: !qla.tile<64x8xf32, smem>, %i: index) {
  // expected-error @+1 {{rows of 32 bytes are stored with a 32-byte swizzle}}
  %r = qla.read %t[%i, %i] : !qla.tile<64x8xf32, smem> -> f32
  return
}
