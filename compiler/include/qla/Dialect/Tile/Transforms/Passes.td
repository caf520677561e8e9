#ifndef QLA_TRANSFORMS_PASSES_TD
#define QLA_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def QlaPipeline : Pass<"qla-pipeline", "::mlir::ModuleOp"> {
  let summary = "Multi-buffer the copies of qla.for loops and overlap them with compute through TMA and mbarrier rings";
  let description = [{
    For each `qla.for` with `stages` >= 2, every `qla.copy` of the body becomes a ring of `stages` (or,
    for a loop that runs at most n < `stages` iterations by its bounds, n)
    shared-memory slots filled by TMA (`qla.tma_load`) and guarded by two mbarrier rings: *full*
    (one arrive with expect_tx by the issuing thread, completed by the TMA bytes) and *empty* (one
    arrive per consumer warpgroup once its wgmma groups reading the slot have retired). Iteration i
    uses slot `i % stages` with phase parity `(i / stages) & 1`. A prologue fills the first
    `stages` slots; the refill of slot `(i-1) % stages` for iteration `i-1+stages` is issued after
    iteration i has waited for the gemms of iteration i-1. gemms in the loop become asynchronous
    (`async`) with one group left in flight. That is for bodies whose gemm results only accumulate
    (a GEMM's K loop). In any other body (gemm results read by elementwise ops, as in a recurrence)
    the gemms stay synchronous (qla-overlap-gemms places their waits), and each iteration ends with
    `qla.async_wait 0`, the release of its own slot and, by thread 0 once every warpgroup released
    it, the refill of that slot for iteration i + stages. A copy that TMA cannot perform is reported
    in a remark with the reason, and the loop is left alone.

    With `load-ahead` (off by default: run 91 measured the GDN wide forward 14 % slower with it), a
    pipelined loop's register loads that the rings do not take (register copies of at most 4 elements a
    thread and scalar loads, of tensors the kernel only reads, at offsets computed from the induction
    variable and values from outside the loop) are issued one iteration ahead: the loop carries each value,
    loaded for the first iteration before the loop (where it runs) and for iteration i + 1 after iteration
    i's last use of it (its position clamped to the last iteration, which loads its own values again).
    ptxas may still hoist the load and give its register a scoreboard that an earlier use waits on (run 92).
  }];
  let options = [
    Option<"loadAheadOfRings", "load-ahead", "bool", /*default=*/"false",
           "issue small register loads of read-only tensors one iteration ahead in pipelined loops">,
  ];
  let dependentDialects = ["::mlir::nvgpu::NVGPUDialect", "::mlir::scf::SCFDialect",
                           "::mlir::gpu::GPUDialect", "::mlir::arith::ArithDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

def QlaDropLoopOutputs : Pass<"qla-drop-loop-outputs", "::mlir::ModuleOp"> {
  let summary = "Keep only what a loop's carried state needs: the state-only kernel of a context split";
  let description = [{
    In every `qla.for` that carries values, the stores (outputs written each iteration) are erased,
    then every op left without a use and without side effects. What remains computes the carried
    values and what the kernel does with them after the loop (e.g. storing a final state): the
    kernel that finds each segment's end state, and its transition from an identity state, in the
    context split (docs/context-split.md). Not part of the default pipeline.
  }];
}

def QlaContextSplit : Pass<"qla-context-split", "::mlir::ModuleOp"> {
  let summary = "One run of a context split, made from the kernel's qla.scan loop";
  let description = [{
    The kernel's loop marked `qla.scan` (one carried state, H ↦ M_c·H + U_c) becomes one of the
    runs of a context split (docs/context-split.md), generically:
    - both forms take a new tensor `run_chunks` (i64, last argument), indexed by the state's index in
      the initial-state tensor (the scan's initial copy's row offset over the rows one state spans),
      and run only that many of the loop's last iterations (a warm-up window, the whole segment, or
      none); the stores inside the loop go with everything that only fed them (as
      qla-drop-loop-outputs), so what remains is the state's update and the final state's store, which
      a run of no iteration skips (its first bound 0: such a state is never read — a zero transition
      is skipped by the correction, a sequence's last segment takes neither run);
    - `form=ends`: from a zero state: the segment's end from zero, E;
    - `form=transition`: from the identity at the state tile's place (zero when no iteration runs),
      with every read of the scan's input-term tensors taken as zero (a gemm with such an operand
      becomes its accumulator): the segment's transition matrix, M (needs a square state);
    - `form=decays`: nothing but each iteration's log-decay, declared in the scan by the op marked
      `qla.scan_decay`, written to a new tensor `decays` (f32, last argument) at
      [state · slots + iteration], slots = its length over the number of states: what the truncated
      split's windows are chosen from. With `decay-columns=n` (n > 1) the table is
      [state / n][iteration][state % n] instead: the states n at a time (e.g. a segment's heads) side
      by side in each iteration's row, which a kernel writing the table n states a block stores at once;
      slots is then the length over the states rounded up to a multiple of n.
    The scan's initial state must come from a qla.copy of a tensor covering whole states' rows (a block
    may hold some of a state's columns). Declared log-decays are ≤ 0 (a decay factor ≤ 1), which the
    windows chosen from them assume. Not part of the default pipeline.
  }];
  let options = [
    Option<"form", "form", "std::string", /*default=*/"\"ends\"", "which run: 'ends', 'transition' or 'decays'">,
    Option<"decayColumns", "decay-columns", "int64_t", /*default=*/"1",
           "form=decays: states side by side in each row of the table ([state / n][iteration][state % n])">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def QlaAssignRoles : Pass<"qla-assign-roles", "::mlir::ModuleOp"> {
  let summary = "Give every op of a warp-specialized kernel (qla.roles) the role that runs it";
  let description = [{
    In a kernel with `qla.roles`, ops the author placed in a role keep it. Copies into shared memory
    (and TMA loads) go to the first `producer` role. Every other op that does tile work (a tile
    result, a store) takes the role of its first reader that has one (it feeds that role), else of
    an operand (it consumes that role's values), repeated until nothing changes; what remains runs in
    the first role that is not a producer. Index and scalar arithmetic, loops and terminators get no
    role: every role computes what it needs of them. A remark per loop counts each role's ops and the
    values that cross roles (the channels of a warp-specialized schedule). Kernels without roles are
    left alone.
  }];
}

def QlaWarpSpecialize : Pass<"qla-warp-specialize", "::mlir::ModuleOp"> {
  let summary = "Split a kernel with roles into one qla.role_region per role, with channels between them";
  let description = [{
    Runs after qla-assign-roles on kernels with `qla.roles`. Each role gets a `qla.role_region`
    holding a clone of the kernel body reduced to that role's ops and the index arithmetic and loops
    they need. A value one role makes and another reads becomes a channel (numbered in program
    order): `qla.channel_put` after the op in the producing role, `qla.channel_get` in its place in
    each reading role. A tile carried by a loop and read inside it by another role is put into a
    channel at the start of each iteration by the role updating it (its initial value and the loop's
    result must stay in that role). A tile carried by a loop in another role is an identity in this one
    (and its initial value a zero fill, which later passes drop with it). `qla-pipeline` lowers the
    channels of TMA copies; others are refused there.
  }];
}

def QlaOverlapGemms : Pass<"qla-overlap-gemms", "::mlir::ModuleOp"> {
  let summary = "Keep independent gemms in flight together: one wgmma wait before the first reader";
  let description = [{
    Every synchronous `qla.gemm` becomes asynchronous (`async`), and one `qla.async_wait 0` is placed
    before the first op of its block that reads a gemm result in flight: an op using it (in its
    regions too), or the block's terminator. Gemms that only feed each other through the
    accumulator (the hi and lo halves of a bf16 hi + lo product) and gemms that do not depend on
    each other are issued back to back and waited for once, and ops in between that need none of
    their results overlap them. A gemm whose A or B is in flight waits first. Loops pipelined by
    `qla-pipeline` (already asynchronous) are left alone. `qla-plan-smem` keeps the tiles an
    asynchronous gemm reads until the first wait that completes it.

    With `partial-waits`, the wait is `qla.async_wait n` (n the gemms issued after the youngest one
    the reader needs, at most 7: each gemm is one wgmma group), so later gemms stay in flight. Off by
    default: slower on the GDN forward in every gemm order measured (docs/perf-notes.md, session 11).
    A wait already in the block (any n) counts: the gemms it completes need no other.
  }];
  let options = [
    Option<"partialWaits", "partial-waits", "bool", /*default=*/"false",
           "wait only for the gemms up to the youngest one a reader needs">,
  ];
}

def QlaOrderWarpgroups : Pass<"qla-order-warpgroups", "::mlir::ModuleOp"> {
  let summary = "Let the warpgroups of a kernel take turns at issuing their gemm groups";
  let description = [{
    In a kernel marked `qla.warpgroup_turns` (no roles, 2 to 7 warpgroups), each run of consecutive
    asynchronous `qla.gemm`s in the first outermost loop that has any is put between
    `qla.warpgroup_turn "wait"` and `"pass"`, with `"begin"` before the loop and `"end"` after it (one loop:
    a second one's "begin" could arrive before the first's "end" took the last turn): the warpgroups issue their gemm groups in turn, so
    one's tensor-core work overlaps the others' conversions and waits (FlashAttention-3's ping-pong)
    instead of all of them wanting the tensor cores at once. Every warpgroup must run the same runs
    (a kernel without roles: they do). Runs after `qla-overlap-gemms`, which makes the gemms
    asynchronous; a loop with no asynchronous gemm is left alone.
  }];
}

def QlaAssignLayouts : Pass<"qla-assign-layouts", "::mlir::ModuleOp"> {
  let summary = "Choose register-fragment distributions and shared-memory layouts";
  let description = [{
    A 2-D fragment with 8 to 256 columns and rows a multiple of 64 per warpgroup is distributed like
    wgmma accumulators over all the warpgroups that run it (the role's, else the kernel's); any other
    fragment round-robin over the threads (#qla.strided). A shared tile is stored K-major for the gemms
    that read it: as is, or transposed (#qla.swizzle<bytes, transposed = true>), with the swizzle its
    stored rows allow (32, 64 or 128-byte column blocks); a tile that gemms need both ways is produced
    twice. A gemm's register-fragment A stays in registers when it is 16-bit and spread like the
    accumulator, else it is written to shared memory first (qla.share).
  }];
}

def QlaPlanSmem : Pass<"qla-plan-smem", "::mlir::ModuleOp"> {
  let summary = "Place shared-memory buffers in the kernel's dynamic shared memory";
  let description = [{
    Gives every shared buffer (`qla.smem_alloc`, the tiles of `qla.share` and of copies TMA does not
    do) a byte offset, first fit, 1024-byte aligned for swizzled tiles (TMA and wgmma require it);
    buffers whose live ranges do not overlap share bytes (rings live for the whole kernel). Records the
    total in the kernel's `qla.smem_bytes`. Fails with an error
    naming the buffers when the total exceeds the budget. Staging a store through scratch is optional
    (it only saves global stores): it gets bytes that are free anyway, or more bytes where the kernel's
    blocks an SM (as far as shared memory limits them) stay as many.
  }];
  let options = [
    Option<"budgetBytes", "budget", "int64_t", /*default=*/"232448",
           "dynamic shared memory available to one block (227 KiB on sm_90)">,
    Option<"smBytes", "sm-bytes", "int64_t", /*default=*/"233472",
           "shared memory of one SM (228 KiB on sm_90; each block also takes 1 KiB the system reserves)">
  ];
}

def QlaConvertToNVVM : Pass<"qla-convert-to-nvvm", "::mlir::ModuleOp"> {
  let summary = "Lower qla kernels to the LLVM and NVVM dialects";
  let description = [{
    Kernels become functions on LLVM types (`nvvm.kernel` and the by-value tensor-map attributes are
    set when PTX is emitted, from `qla.abi`). Each tensor argument becomes a global pointer;
    each distinct TMA (tensor, box, swizzle) becomes a by-value `__grid_constant__` CUtensorMap
    parameter appended after them. The kernel's ABI (parameters, tensor maps, launch shape, shared
    memory) is recorded in the `qla.abi` attribute of the module for the runtime's manifest.
    gemm lowers to wgmma with shared-memory descriptors that match the tiles' swizzle.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect"];
}

#endif
