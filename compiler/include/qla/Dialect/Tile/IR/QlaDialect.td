#ifndef QLA_DIALECT_TD
#define QLA_DIALECT_TD

include "mlir/IR/OpBase.td"

def Qla_Dialect : Dialect {
  let name = "qla";
  let cppNamespace = "::qla";
  let summary = "Tile-level kernels for NVIDIA Hopper";
  let description = [{
    Global tensors, shared-memory tiles and register fragments, and the ops that move and compute on
    them (copy, gemm, fill, map, store, pipelined loops). Lower-level ops (rings of shared tiles,
    TMA loads, wgmma waits) are produced by the passes and lowered to NVVM.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect"];
  let extraClassDeclaration = [{
    /// Discardable attributes on a func.func that make it a kernel.
    static constexpr llvm::StringLiteral kKernelAttr = "qla.kernel";
    static constexpr llvm::StringLiteral kGridAttr = "qla.grid";
    static constexpr llvm::StringLiteral kBlockAttr = "qla.block";
    static constexpr llvm::StringLiteral kSmemAttr = "qla.smem_bytes";
    /// Blocks the kernel must fit on one SM at once: caps its registers (PTX .minnctapersm).
    static constexpr llvm::StringLiteral kMinBlocksAttr = "qla.min_blocks_per_sm";
    /// Programmatic dependent launch: the kernel waits for the grids before it on the stream
    /// (griddepcontrol.wait) before anything else and lets the grid after it launch early
    /// (griddepcontrol.launch_dependents), so the runtime may launch it with programmatic stream
    /// serialization: its launch and its blocks' start overlap the tail of the kernel before it.
    static constexpr llvm::StringLiteral kDependentLaunchAttr = "qla.dependent_launch";
    /// The kernel's broadcasts into accumulator fragments read #qla.acc_slice vectors (made by
    /// qla-assign-layouts) instead of exchanging through shared memory: no barriers, but each thread
    /// loads and computes the rows or columns it holds (run 80: slower for the GDN kernels).
    static constexpr llvm::StringLiteral kSliceBroadcastsAttr = "qla.slice_broadcasts";
    /// The kernel's warpgroups exchange fragments each on its own (no roles): round-robin fragments are
    /// held once per warpgroup (#qla.strided copies), their broadcasts and the staged stores of
    /// accumulator fragments synchronise one warpgroup (a named barrier) in scratch of their own, so
    /// the warpgroups of a block are not held in step by block barriers.
    static constexpr llvm::StringLiteral kWarpgroupLocalAttr = "qla.warpgroup_local";
    /// qla-order-warpgroups: the warpgroups take turns at issuing the gemm groups of the kernel's loops
    /// (qla.warpgroup_turn around each run of asynchronous gemms).
    static constexpr llvm::StringLiteral kWarpgroupTurnsAttr = "qla.warpgroup_turns";
    /// A warp-specialized kernel's roles (an array of #qla.role, in warpgroup order), and on an op
    /// the name of the role that runs it.
    static constexpr llvm::StringLiteral kRolesAttr = "qla.roles";
    static constexpr llvm::StringLiteral kRoleAttr = "qla.role";
    /// On a qla.for carrying one tile: the loop is a scan, a state carried through chunks by an
    /// affine map (H ↦ M_c·H + U_c); the array names the kernel's tensors whose reads are the input
    /// terms U_c (zero in the transition run of qla-context-split).
    static constexpr llvm::StringLiteral kScanAttr = "qla.scan";
    /// On the op inside a qla.scan that makes the iteration's summed log-decay (one f32 scalar, ≤ 0):
    /// how fast the past fades, for the truncated context split's windows.
    static constexpr llvm::StringLiteral kScanDecayAttr = "qla.scan_decay";
    /// On the module after lowering: each kernel's parameters and launch shape.
    static constexpr llvm::StringLiteral kAbiAttr = "qla.abi";
  private:
    void registerTypes();
    void registerAttributes();
  public:
  }];
}

class Qla_Op<string mnemonic, list<Trait> traits = []> : Op<Qla_Dialect, mnemonic, traits>;

#endif
