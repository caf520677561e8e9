#ifndef QLA_OPS_TD
#define QLA_OPS_TD

include "qla/Dialect/Tile/IR/QlaTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/LoopLikeInterface.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/IR/BuiltinAttributes.td"

//===----------------------------------------------------------------------===//
// Tile level: what a kernel author writes.
//===----------------------------------------------------------------------===//

def Qla_BlockIdOp : Qla_Op<"block_id", [Pure]> {
  let summary = "index of this thread block along a grid dimension";
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<0>, IntMaxValue<2>]>:$dim);
  let results = (outs Index:$result);
  let assemblyFormat = "$dim attr-dict";
}

def Qla_CopyOp : Qla_Op<"copy", [MemoryEffects<[MemRead]>, AttrSizedOperandSegments]> {
  let summary = "load a tile of a global tensor into shared memory or registers";
  let description = [{
    `%t = qla.copy %A[%i, %j]` reads the box of `%A` whose first element is at element offsets
    (%i, %j) into a fresh tile: in shared memory (lowered to TMA by qla-pipeline when it can, with
    a remark saying why when it cannot; otherwise each thread loads 16-byte pieces) or in registers
    (each thread loads its own elements). Elements past the tensor's bounds read as zero.
    Optional `bounds` (exclusive, in tensor coordinates, one per dimension) end the box earlier
    than the tensor does, e.g. at the end of a sequence in a packed batch: elements at or past a
    bound read as zero too. With `transpose` (2-D, into registers) element (i, j) of the tile is
    element (%i + j, %j + i) of the tensor: the box is the tile's shape swapped.
  }];
  let arguments = (ins Qla_TensorType:$source, Variadic<Index>:$offsets, Variadic<Index>:$bounds,
                       UnitAttr:$transpose);
  let results = (outs Qla_AnyTile:$result);
  let assemblyFormat = [{
    $source `[` $offsets `]` (`bounds` `[` $bounds^ `]`)? attr-dict `:` qualified(type($source)) `->`
      qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Qla_FillOp : Qla_Op<"fill", [Pure]> {
  let summary = "a register fragment with every element set to a constant";
  let arguments = (ins TypedAttrInterface:$value);
  let results = (outs Qla_FragTile:$result);
  let assemblyFormat = "$value attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

def Qla_GemmOp : Qla_Op<"gemm", [MemoryEffects<[MemRead]>]> {
  let summary = "acc + op(A)·op(B): A in shared memory or registers, B in shared memory, acc a register fragment";
  let description = [{
    `transpose_a` multiplies by Aᵀ (A stored K x M), `transpose_b` by Bᵀ (B stored N x K). A may be
    a register fragment (not transposed), as in P·V products.
    `k_slices` (increasing, each in [0, K/16)) sums the product over those 16-wide slices of K only: for
    operands the caller knows to be zero elsewhere (block-triangular factors), so that the tensor cores
    skip the other k-steps.
  }];
  let arguments = (ins Qla_AnyTile:$a, Qla_SmemTile:$b, Qla_FragTile:$acc,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b, UnitAttr:$async,
                       OptionalAttr<DenseI64ArrayAttr>:$k_slices);
  let results = (outs Qla_FragTile:$result);
  let assemblyFormat = [{
    $a `,` $b `,` $acc attr-dict `:` qualified(type($a)) `,` qualified(type($b)) `,` qualified(type($acc))
      `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Qla_MapOp : Qla_Op<"map", [Pure, SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "elementwise function of one or more fragments of the same shape";
  let description = [{
    The region takes one scalar per input (the element types) and yields the result's element.
    ```
    %c = qla.map %acc : !qla.tile<128x256xf32, frag> -> !qla.tile<128x256xbf16, frag> {
    ^bb0(%x: f32):
      %y = arith.truncf %x : f32 to bf16
      qla.yield %y : bf16
    }
    ```
  }];
  let arguments = (ins Variadic<Qla_FragTile>:$inputs);
  let results = (outs Qla_FragTile:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$inputs `:` qualified(type($inputs)) `->` qualified(type($result)) $body attr-dict";
  let hasVerifier = 1;
}

def Qla_StoreOp : Qla_Op<"store", [MemoryEffects<[MemWrite]>, AttrSizedOperandSegments]> {
  let summary = "store a tile into a global tensor at element offsets; elements past the tensor's end "
                "(or the optional bounds) are dropped";
  let description = [{
    With `transpose` (2-D) element (i, j) of the tile goes to element (%i + j, %j + i) of the tensor.
  }];
  let arguments = (ins Qla_AnyTile:$value, Qla_TensorType:$dest, Variadic<Index>:$offsets,
                       Variadic<Index>:$bounds, UnitAttr:$transpose);
  let assemblyFormat = [{
    $value `,` $dest `[` $offsets `]` (`bounds` `[` $bounds^ `]`)? attr-dict `:` qualified(type($value)) `,`
      qualified(type($dest))
  }];
  let hasVerifier = 1;
}

def Qla_ReadOp : Qla_Op<"read", [MemoryEffects<[MemRead]>]> {
  let summary = "a box of a shared-memory tile into registers, or one of its elements";
  let description = [{
    `%f = qla.read %s[%i, %j]` reads the box of shared tile `%s` whose first element is at (%i, %j) into a
    fresh register fragment (each thread its own elements); with `transpose` (2-D) element (i, j) of the
    fragment is element (%i + j, %j + i) of the tile. With a scalar result it reads the one element at
    (%i, %j), by every thread. The box must lie inside the tile. For data a TMA ring brought that
    elementwise code needs (a gate column), where a global load's latency would sit on the chain.
  }];
  let arguments = (ins Qla_SmemTile:$source, Variadic<Index>:$offsets, UnitAttr:$transpose);
  let results = (outs AnyTypeOf<[Qla_FragTile, AnyFloat]>:$result);
  let assemblyFormat = [{
    $source `[` $offsets `]` attr-dict `:` qualified(type($source)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

// No memory-effect trait on purpose: with none declared the op counts as having unknown effects, so
// canonicalize, CSE and the passes' dead-op sweeps keep it. A read-only effect would make a result-less
// op trivially dead.
def Qla_PrefetchOp : Qla_Op<"prefetch", [AttrSizedOperandSegments]> {
  let summary = "bring a box of a global tensor into L2 ahead of its loads (no result)";
  let description = [{
    The lines holding each element of the box `shape` at `%offsets` (inside the tensor and the optional
    bounds) are prefetched into L2, each by one thread of the block. For reads a later iteration makes
    that a copy cannot bring (a strided column, one element a line), whose DRAM latency would otherwise
    stall the iteration that needs them. It has no effect on values: kept by every pass, a no-op on the
    interpreter.
  }];
  let arguments = (ins Qla_TensorType:$source, Variadic<Index>:$offsets, Variadic<Index>:$bounds,
                       DenseI64ArrayAttr:$shape);
  let assemblyFormat = [{
    $source `[` $offsets `]` (`bounds` `[` $bounds^ `]`)? attr-dict `:` qualified(type($source))
  }];
  let hasVerifier = 1;
}

def Qla_ForOp : Qla_Op<"for", [SingleBlockImplicitTerminator<"YieldOp">, RecursiveMemoryEffects,
    DeclareOpInterfaceMethods<LoopLikeOpInterface, ["getLoopInductionVars", "getLoopResults",
                                                    "getRegionIterArgs", "getInitsMutable",
                                                    "getYieldedValuesMutable"]>]> {
  let summary = "a loop over tiles; with stages > 1 its copies are pipelined";
  let description = [{
    `stages` asks the `qla-pipeline` pass for that many shared-memory buffers per copy in the body,
    so loads of later iterations overlap the compute of this one.
  }];
  let arguments = (ins Index:$lowerBound, Index:$upperBound, Index:$step, Variadic<AnyType>:$initArgs,
                       DefaultValuedAttr<ConfinedAttr<I64Attr, [IntMinValue<1>]>, "1">:$stages);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $lowerBound `to` $upperBound `step` $step (`iter_args` `(` $initArgs^ `:` qualified(type($initArgs)) `)`)?
      (`->` qualified(type($results))^)? $body attr-dict
  }];
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::mlir::Value":$lb, "::mlir::Value":$ub, "::mlir::Value":$step,
                                 "::mlir::ValueRange":$inits, "int64_t":$stages)>];
  let extraClassDeclaration = [{
    ::mlir::Block *getBodyBlock() { return &getBody().front(); }
    ::mlir::BlockArgument getInductionVar() { return getBodyBlock()->getArgument(0); }
  }];
}

def Qla_YieldOp : Qla_Op<"yield", [Pure, Terminator, ReturnLike,
                                   ParentOneOf<["ForOp", "MapOp"]>]> {
  let summary = "ends a qla.for or qla.map body";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let builders = [OpBuilder<(ins), [{ }]>];
}

def Qla_DimOp : Qla_Op<"dim", [Pure]> {
  let summary = "the size of a tensor dimension (known at launch for dynamic dimensions)";
  let arguments = (ins Qla_TensorType:$tensor, I64Attr:$dim);
  let results = (outs Index:$result);
  let assemblyFormat = "$tensor `,` $dim attr-dict `:` qualified(type($tensor))";
  let hasVerifier = 1;
}

def Qla_LoadOp : Qla_Op<"load", [MemoryEffects<[MemRead]>]> {
  let summary = "one element of a global tensor, as a scalar (integers as index)";
  let description = [{
    Reads `%t[%i, ...]` by every thread (a uniform value), e.g. sequence bounds from `cu_seqlens`.
    Integer elements are returned as `index`, floating-point ones in their own type.
  }];
  let arguments = (ins Qla_TensorType:$source, Variadic<Index>:$indices);
  let results = (outs AnyTypeOf<[Index, AnyFloat]>:$result);
  let assemblyFormat = "$source `[` $indices `]` attr-dict `:` qualified(type($source)) `->` type($result)";
  let hasVerifier = 1;
}

def Qla_IotaOp : Qla_Op<"iota", [Pure]> {
  let summary = "a fragment whose elements are their own index along one dimension (for masks)";
  let arguments = (ins I64Attr:$dim);
  let results = (outs Qla_FragTile:$result);
  let assemblyFormat = "$dim attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

def Qla_BroadcastOp : Qla_Op<"broadcast", [Pure]> {
  let summary = "a fragment repeated along new dimensions";
  let description = [{
    `dims` gives, for each dimension of the input, the result dimension it becomes; the others are
    new. `qla.broadcast %g {dims = array<i64: 0>} : tile<64xf32> -> tile<64x64xf32>` makes row i
    hold g[i] everywhere; with `dims = [1]` column j holds g[j].
  }];
  let arguments = (ins Qla_FragTile:$input, DenseI64ArrayAttr:$dims);
  let results = (outs Qla_FragTile:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Whether the input is an #qla.acc_slice of the result's wgmma_acc layout along the dimension it
    /// becomes: then every thread already holds what it needs (no exchange through shared memory).
    bool readsSlice();
  }];
}

def Qla_ReduceKind : I32EnumAttr<"ReduceKind", "how qla.reduce combines elements", [
    I32EnumAttrCase<"add", 0>, I32EnumAttrCase<"max", 1>]> {
  let cppNamespace = "::qla";
}

def Qla_ReduceOp : Qla_Op<"reduce", [Pure]> {
  let summary = "sum or maximum of a fragment along one dimension, which disappears";
  let arguments = (ins Qla_FragTile:$input, I64Attr:$dim, Qla_ReduceKind:$kind);
  let results = (outs Qla_FragTile:$result);
  let assemblyFormat = "$kind $input `,` $dim attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def Qla_CumsumOp : Qla_Op<"cumsum", [Pure, SameOperandsAndResultType]> {
  let summary = "inclusive prefix sum of a fragment along one dimension";
  let arguments = (ins Qla_FragTile:$input, I64Attr:$dim);
  let results = (outs Qla_FragTile:$result);
  let assemblyFormat = "$input `,` $dim attr-dict `:` qualified(type($input))";
  let hasVerifier = 1;
}

def Qla_ShareOp : Qla_Op<"share"> {
  let summary = "a register fragment written to a new shared-memory tile (e.g. as a gemm operand)";
  let arguments = (ins Qla_FragTile:$input);
  let results = (outs Qla_SmemTile:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def Qla_StashOp : Qla_Op<"stash"> {
  let summary = "a register fragment parked in shared memory by its own threads, to free its registers";
  let description = [{
    Each thread writes the elements it holds to a place of its own (16-byte pieces, thread-major: piece
    i of thread t at (i · threads + t) · 16 bytes, so a warp's stores are consecutive), for
    `qla.unstash` to read back into the same threads: no thread reads another's elements, so neither op
    needs a barrier for the data (the stash starts with one, as every writer of a buffer does: the bytes
    may be another buffer's earlier). Register relief across a long live range, cheaper than a spill
    (16-byte shared stores, no local memory). The result is only for `qla.unstash`.
  }];
  let arguments = (ins Qla_FragTile:$input);
  let results = (outs Qla_SmemTile:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def Qla_UnstashOp : Qla_Op<"unstash"> {
  let summary = "a fragment parked by qla.stash, read back into the threads that hold it";
  let arguments = (ins Qla_SmemTile:$input);
  let results = (outs Qla_FragTile:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def Qla_ShareIntoOp : Qla_Op<"share_into"> {
  let summary = "a register fragment written into an existing shared-memory tile (a ring slot)";
  let description = [{
    Like `qla.share`, but into `dest` (a `qla.slot` of a ring that `qla-pipeline` made for a channel
    between roles), and with no barrier: the ring's mbarriers order the writers and the readers. The
    writes are made visible to the async proxy (wgmma reads the slot).
  }];
  let arguments = (ins Qla_FragTile:$input, Qla_SmemTile:$dest);
  let assemblyFormat = "$input `,` $dest attr-dict `:` qualified(type($input)) `,` qualified(type($dest))";
  let hasVerifier = 1;
}

def Qla_TriInverseOp : Qla_Op<"tri_inverse", [Pure, SameOperandsAndResultType]> {
  let summary = "(I + StrictLower(A))^-1 of a square fragment: the inverse of a unit lower-triangular matrix";
  let description = [{
    Entries of `A` on and above the diagonal are ignored. The result is unit lower-triangular with
    zeros above the diagonal. GDN's gate-free chunk inverse is this op on `diag(beta) K Kᵀ`.
    With `block`, only the diagonal blocks of that size are inverted, each on its own: entries of `A`
    outside them are ignored and the result is zero outside them (the start of a blocked inverse whose
    merges, X ← X − X·(N·X), are gemms).
    On a wgmma accumulator fragment of f32 with `block = 16`, each warp holds whole diagonal blocks and
    inverts its own with shuffles, in registers; otherwise the input goes through scratch shared memory
    and the substitution is f32.
    `f16_merges` (a 64x64 f32 tile, no `block`) asks for the whole inverse inside the warps of the one
    warpgroup holding it as an accumulator fragment: the diagonal 16x16 blocks as above, then the warps
    merge them (the off-diagonal blocks −X_lo·N·X_up, 16 -> 32 -> 64) with mma.sync on f16 operands and
    f32 sums, exchanging blocks through scratch shared memory. Its entries carry f16 operand rounding (as
    the merges of GDN's inverse_f16 do) and f16's range: fine for unit lower-triangular inverses whose
    entries stay far below 65504 (GDN's chunk inverse with L2-normalised keys and β ≤ 1). The CPU
    interpreter computes the inverse exactly.
  }];
  let arguments = (ins Qla_FragTile:$input, OptionalAttr<I64Attr>:$block, UnitAttr:$f16_merges);
  let results = (outs Qla_FragTile:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input))";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Whether the diagonal blocks are inverted inside the warps that hold them (no scratch).
    bool invertsInWarps();
    /// Whether the whole inverse is made inside the warps of the one warpgroup holding a 64x64 f32
    /// accumulator fragment: diagonal blocks as above, merges on mma.sync through a scratch of
    /// kInWarpsScratchBytes (two transposed f16 squares with padded rows).
    bool mergesInWarps();
    static constexpr int64_t kInWarpsScratchBytes = 2 * 64 * 72 * 2;
  }];
}

//===----------------------------------------------------------------------===//
// Target level: produced by the passes, lowered to NVVM.
//===----------------------------------------------------------------------===//

def Qla_SmemAllocOp : Qla_Op<"smem_alloc"> {
  let summary = "a shared-memory buffer at a byte offset of the kernel's dynamic shared memory";
  let description = [{
    The offset is assigned by `qla-plan-smem`; before that it is absent. A rank-(n+1) tile is a ring
    of n-dimensional slots, indexed with `qla.slot`.
  }];
  let arguments = (ins OptionalAttr<I64Attr>:$offset);
  let results = (outs Qla_SmemTile:$result);
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

def Qla_SlotOp : Qla_Op<"slot", [Pure]> {
  let summary = "one slot of a shared-memory ring";
  let arguments = (ins Qla_SmemTile:$ring, Index:$index);
  let results = (outs Qla_SmemTile:$result);
  let assemblyFormat = "$ring `[` $index `]` attr-dict `:` qualified(type($ring)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def Qla_TmaLoadOp : Qla_Op<"tma_load", [AttrSizedOperandSegments]> {
  let summary = "asynchronous TMA copy of a box of a global tensor into a shared tile, completing on an mbarrier";
  let description = [{
    Issued by one thread. The box is the destination tile's shape; the kernel gets one TMA descriptor
    per distinct (tensor, box, swizzle), passed by value as a `__grid_constant__` parameter. The
    mbarrier is `barriers[barrier_index]` of an `nvgpu.mbarrier.group`. `qla-convert-to-nvvm` binds
    `descriptor` to the kernel parameter that carries the tensor map. A tile whose rows span several
    128-byte column blocks is filled by one load per block; `column_block` says which.
  }];
  let arguments = (ins Qla_TensorType:$source, Variadic<Index>:$offsets, Qla_SmemTile:$dest,
                       AnyType:$barriers, Index:$barrierIndex, Optional<AnyType>:$descriptor,
                       OptionalAttr<I64Attr>:$column_block);
  let assemblyFormat = [{
    $source `[` $offsets `]` `,` $dest `,` $barriers `[` $barrierIndex `]`
      (`descriptor` $descriptor^ `:` type($descriptor))? attr-dict `:`
      qualified(type($source)) `,` qualified(type($dest)) `,` qualified(type($barriers))
  }];
  let hasVerifier = 1;
}

def Qla_RoleRegionOp : Qla_Op<"role_region", [NoTerminator, SingleBlock, RecursiveMemoryEffects]> {
  let summary = "the part of a warp-specialized kernel that one role runs (made by qla-warp-specialize)";
  let description = [{
    Only the warpgroups of `role` (an entry of the kernel's `qla.roles`) run the body. Values made by
    another role reach it through `qla.channel_get`.
  }];
  let arguments = (ins StrAttr:$role);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$role attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def Qla_ChannelPutOp : Qla_Op<"channel_put"> {
  let summary = "hand a tile to the roles that read it (channel `channel` of the kernel), once per iteration";
  let arguments = (ins Qla_AnyTile:$value, I64Attr:$channel);
  let assemblyFormat = "$value attr-dict `:` qualified(type($value))";
}

def Qla_ChannelGetOp : Qla_Op<"channel_get"> {
  let summary = "the tile another role put into channel `channel` in this iteration";
  let arguments = (ins I64Attr:$channel);
  let results = (outs Qla_AnyTile:$result);
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
}

def Qla_WarpgroupTurnOp : Qla_Op<"warpgroup_turn"> {
  let summary = "a step of the warpgroups' turns at issuing gemm groups (qla-order-warpgroups)";
  let description = [{
    The W warpgroups of a kernel without roles take turns, in a ring, at issuing their gemm groups, so
    that one warpgroup's tensor-core work overlaps the others' elementwise work (FlashAttention-3's
    ping-pong). `wait`: the warpgroup waits for its turn (named barrier 1 + W + wg, its threads and the
    passing warpgroup's); `pass`: it hands the turn to the next warpgroup (arrives at the next one's
    barrier); `begin`: the last warpgroup hands the first its first turn; `end`: the first warpgroup takes
    the turn the last handed it last, so no arrival is left pending.
  }];
  let arguments = (ins StrAttr:$step);
  let assemblyFormat = "$step attr-dict";
  let hasVerifier = 1;
}

def Qla_AsyncWaitOp : Qla_Op<"async_wait"> {
  let summary = "wait until at most `pending` groups of asynchronous gemms are in flight";
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<0>, IntMaxValue<7>]>:$pending);
  let assemblyFormat = "$pending attr-dict";
}

#endif
