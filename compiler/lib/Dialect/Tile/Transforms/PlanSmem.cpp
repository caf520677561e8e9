// qla-plan-smem: byte offsets for shared-memory buffers and the kernel's dynamic shared-memory size.
#include "qla/Dialect/Tile/IR/QlaDialect.h"
#include "qla/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <limits>

namespace qla {
#define GEN_PASS_DEF_QLAPLANSMEM
#include "qla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace qla

using namespace mlir;
using namespace qla;

namespace {

/// Whether the rows of `tensor` that a box of `tile` covers (its columns, or its rows when transposed)
/// come in whole 16-byte pieces.
bool rowsInPieces(TileType tile, qla::TensorType tensor, bool transposed) {
  SmallVector<int64_t> strides = tensor.getEffectiveStrides();
  int64_t eb = elementBytes(tile.getElementType());
  return tile.getRank() == 2 && eb <= 8 && (tile.getShape()[transposed ? 0 : 1] * eb) % 16 == 0 &&
         strides.size() == 2 && strides[1] == 1 && !ShapedType::isDynamic(strides[0]) && (strides[0] * eb) % 16 == 0;
}

/// Shared memory an op exchanges its fragment through (broadcast, reduce, cumsum, tri_inverse), or
/// stages it in (a transposed store or copy into registers, or a store of a 2-byte accumulator fragment,
/// whose tensor rows come in 16-byte pieces: see the lowering).
int64_t exchangeScratchBytes(Operation *op) {
  // (A fragment each warpgroup holds a copy of is exchanged in a copy of the scratch a warpgroup.)
  // (4 bytes an element, 8 for 8-byte elements: the spill writes elements of their own type.)
  auto bytes = [](Value v) {
    auto tile = cast<TileType>(v.getType());
    return tile.getNumElements() * std::max<int64_t>(4, elementBytes(tile.getElementType())) * stridedCopies(tile);
  };
  if (auto broadcast = dyn_cast<BroadcastOp>(op))
    return broadcast.readsSlice() ? 0 : bytes(op->getOperand(0));
  if (isa<ReduceOp, CumsumOp>(op))
    return bytes(op->getOperand(0));
  if (auto inverse = dyn_cast<TriInverseOp>(op))
    return inverse.invertsInWarps()  ? 0
           : inverse.mergesInWarps() ? TriInverseOp::kInWarpsScratchBytes
                                     : 2 * bytes(op->getOperand(0));
  if (auto store = dyn_cast<StoreOp>(op)) {
    // Transposed stores, and 2-byte accumulator fragments (a thread holds 4-byte pairs of a row: whole
    // pieces through scratch take a quarter of the global stores).
    auto tile = cast<TileType>(store.getValue().getType());
    bool staged = store.getTranspose() ||
                  (isa_and_nonnull<WgmmaAccLayoutAttr>(tile.getLayout()) && elementBytes(tile.getElementType()) == 2);
    return staged && rowsInPieces(tile, store.getDest().getType(), store.getTranspose())
               ? tile.getNumElements() * elementBytes(tile.getElementType())
               : 0;
  }
  if (auto copy = dyn_cast<CopyOp>(op); copy && copy.getTranspose() && copy.getType().isFragment()) {
    TileType tile = copy.getType();
    return rowsInPieces(tile, copy.getSource().getType(), true) ? tile.getNumElements() * elementBytes(tile.getElementType()) : 0;
  }
  return 0;
}

/// A store works without scratch too (element by element): it is staged only for speed, where the bytes
/// are free anyway (in a warp-specialized kernel, the roles' scratch cannot share bytes).
bool stagingIsOptional(Operation *op) { return isa<StoreOp>(op) && exchangeScratchBytes(op) > 0; }

/// Where each op sits in a pre-order walk of the kernel, and the last position inside it.
struct Positions {
  llvm::DenseMap<Operation *, int64_t> begin, end;
  explicit Positions(func::FuncOp kernel) {
    int64_t n = 0;
    kernel.walk<WalkOrder::PreOrder>([&](Operation *op) { begin[op] = n++; });
    kernel.walk<WalkOrder::PostOrder>([&](Operation *op) {
      int64_t last = begin[op];
      for (Region &r : op->getRegions())
        for (Block &b : r)
          if (!b.empty())
            last = std::max(last, end.lookup(&b.back()));
      end[op] = last;
    });
  }
};

/// The first `qla.async_wait n` after an asynchronous gemm in its block that it cannot pass: at least n
/// gemms (wgmma groups) issued after it (null when there is none: then its reads may last to the end of
/// the block, as in pipelined loops). Gemms in nested blocks are not counted (a later wait, not an
/// earlier one).
Operation *waitAfter(GemmOp gemm) {
  int64_t issuedAfter = 0;
  for (Operation *op = gemm->getNextNode(); op; op = op->getNextNode()) {
    if (auto wait = dyn_cast<AsyncWaitOp>(op); wait && wait.getPending() <= issuedAfter)
      return wait;
    if (auto later = dyn_cast<GemmOp>(op); later && later.getAsync())
      ++issuedAfter;
  }
  return nullptr;
}

/// The positions over which a buffer's contents matter: from its defining op to the end of the last
/// op of its block that uses it (a use inside a loop keeps it for the whole loop). Rings (qla.smem_alloc),
/// buffers that leave their block live to the end of the kernel; buffers read by an asynchronous gemm
/// until the first wait that completes it (or, when there is none, across the whole block: a later iteration
/// waits).
std::pair<int64_t, int64_t> liveRange(Operation *def, const Positions &pos) {
  constexpr int64_t kForever = std::numeric_limits<int64_t>::max();
  if (isa<SmemAllocOp>(def))
    return {0, kForever};
  Block *block = def->getBlock();
  int64_t first = pos.begin.lookup(def), last = first;
  for (Operation *user : def->getResult(0).getUsers()) {
    Operation *inBlock = block->findAncestorOpInBlock(*user);
    if (!inBlock || inBlock == block->getTerminator())
      return {0, kForever};
    if (auto gemm = dyn_cast<GemmOp>(user); gemm && gemm.getAsync()) {
      Operation *wait = waitAfter(gemm);
      if (!wait) {
        // Read until a wait in a later iteration: live across the whole body.
        first = std::min(first, pos.begin.lookup(&block->front()));
        inBlock = block->getTerminator();
      }
      else if (wait->getBlock() == block)
        inBlock = wait;
    }
    last = std::max(last, pos.end.lookup(inBlock));
  }
  return {first, last};
}

struct Placed {
  int64_t begin, end, offset, size;
  Operation *role; // the qla.role_region around the buffer's op, or null
};

/// Whether an op's scratch is written and read between barriers of one warpgroup (a qla.warpgroup_local
/// kernel).
bool synchronisedPerWarpgroup(Operation *op) {
  return (op->getNumOperands() > 0 && stridedCopies(op->getOperand(0).getType()) > 1 &&
          isa<BroadcastOp, ReduceOp, CumsumOp, TriInverseOp>(op)) ||
         storesPerWarpgroup(op);
}

/// When an exchange's scratch is live. Usually only while its op runs. Synchronised per warpgroup, from
/// the kernel's start to the end of its outermost loop: while one warpgroup writes it, another may still
/// be anywhere before it (reading a buffer an earlier block-wide op left, or an earlier iteration's); only
/// the leading block barrier of a block-wide writer after the loop waits for all of them.
std::pair<int64_t, int64_t> scratchRange(Operation *op, const Positions &pos) {
  if (!synchronisedPerWarpgroup(op))
    return {pos.begin.lookup(op), pos.end.lookup(op)};
  Operation *outer = op;
  for (Operation *at = op->getParentOp(); at && !isa<func::FuncOp>(at); at = at->getParentOp())
    if (isa<scf::ForOp, ForOp>(at))
      outer = at;
  return {0, pos.end.lookup(outer)};
}

/// The lowest offset (a multiple of `align`) where `size` bytes overlap no placed buffer that is live at
/// the same time. Role regions run concurrently: buffers of two different roles always overlap in time
/// (positions in the IR order only one role's ops).
int64_t firstFit(ArrayRef<Placed> placed, int64_t begin, int64_t end, int64_t size, int64_t align,
                 Operation *role) {
  SmallVector<std::pair<int64_t, int64_t>> busy;
  for (const Placed &p : placed)
    if ((p.begin <= end && begin <= p.end) || (p.role && role && p.role != role))
      busy.push_back({p.offset, p.offset + p.size});
  llvm::sort(busy);
  int64_t offset = 0;
  for (auto [lo, hi] : busy) {
    if (offset + size <= lo)
      break;
    offset = std::max<int64_t>(offset, llvm::alignTo(hi, align));
  }
  return offset;
}

struct PlanSmemPass : qla::impl::QlaPlanSmemBase<PlanSmemPass> {
  using QlaPlanSmemBase::QlaPlanSmemBase;

  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp kernel) {
      if (!kernel->hasAttr(QlaDialect::kKernelAttr))
        return;
      int64_t offset = 0;
      // Rings (qla.smem_alloc), the tiles of qla.share and of copies that TMA does not perform, and the
      // scratch of each exchange op (live only while the op runs).
      SmallVector<Operation *> buffers;
      int64_t scratch = 0;
      kernel.walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (isa<SmemAllocOp, ShareOp, StashOp>(op) || (isa<CopyOp>(op) && cast<CopyOp>(op).getResult().getType().isShared()) ||
            exchangeScratchBytes(op) > 0)
          buffers.push_back(op);
        if (!stagingIsOptional(op))
          scratch += exchangeScratchBytes(op);
      });
      // Buffers whose live ranges are disjoint share bytes: every writer of a shared tile or of scratch
      // starts with a block barrier, and synchronous gemms have finished reading when they return.
      Positions pos(kernel);
      SmallVector<Placed> placed;
      auto i64 = [&](int64_t v) { return IntegerAttr::get(IntegerType::get(&getContext(), 64), v); };
      for (Operation *op : buffers) {
        if (stagingIsOptional(op))
          continue;
        if (int64_t bytes = exchangeScratchBytes(op)) {
          auto [begin, end] = scratchRange(op, pos);
          Operation *role = op->getParentOfType<RoleRegionOp>();
          int64_t at = firstFit(placed, begin, end, bytes, 128, role);
          placed.push_back({begin, end, at, bytes, role});
          op->setAttr(kScratchOffsetAttr, i64(at));
          offset = std::max(offset, at + bytes);
          continue;
        }
        auto t = cast<TileType>(op->getResult(0).getType());
        auto swz = dyn_cast_or_null<SwizzleAttr>(t.getLayout());
        int64_t align = (swz && swz.getBytes() > 0) ? 1024 : 128;
        auto [begin, end] = liveRange(op, pos);
        Operation *role = op->getParentOfType<RoleRegionOp>();
        int64_t at = firstFit(placed, begin, end, t.getSizeInBytes(), align, role);
        placed.push_back({begin, end, at, t.getSizeInBytes(), role});
        if (auto alloc = dyn_cast<SmemAllocOp>(op))
          alloc.setOffsetAttr(i64(at));
        else
          op->setAttr(kSmemOffsetAttr, i64(at));
        offset = std::max(offset, at + t.getSizeInBytes());
      }
      // Optional staging only where it never costs occupancy: in the bytes the kernel needs anyway, or
      // past them where shared memory still holds as many of its blocks an SM.
      int64_t threads = std::max<int64_t>(1, kernelThreads(kernel));
      auto blocksPerSM = [&](int64_t bytes) {
        int64_t withSlack = bytes + 1024 + 1024; // the base's alignment slack, the system's reservation
        return std::min<int64_t>({32, 2048 / threads, smBytes / withSlack});
      };
      for (Operation *op : buffers) {
        if (!stagingIsOptional(op))
          continue;
        int64_t bytes = exchangeScratchBytes(op);
        auto [begin, end] = scratchRange(op, pos);
        Operation *role = op->getParentOfType<RoleRegionOp>();
        int64_t at = firstFit(placed, begin, end, bytes, 128, role);
        if (at + bytes > offset &&
            (at + bytes + 1024 > budgetBytes || blocksPerSM(at + bytes) < blocksPerSM(offset)))
          continue;
        placed.push_back({begin, end, at, bytes, role});
        op->setAttr(kScratchOffsetAttr, i64(at));
        if (synchronisedPerWarpgroup(op))
          op->setAttr(kScratchPerWarpgroupAttr, UnitAttr::get(&getContext()));
        offset = std::max(offset, at + bytes);
      }
      // The kernel aligns the dynamic shared-memory base to 1024 bytes at run time; reserve the slack.
      if (!placed.empty())
        offset += 1024;
      if (offset > budgetBytes) {
        InFlightDiagnostic diag = kernel.emitError()
                                  << "shared memory needed (" << offset << " bytes) exceeds the budget of "
                                  << static_cast<int64_t>(budgetBytes) << " bytes; buffers:";
        for (Operation *op : buffers)
          if (!exchangeScratchBytes(op))
            diag << " " << op->getResult(0).getType() << " ("
                 << cast<TileType>(op->getResult(0).getType()).getSizeInBytes() << " B)";
        if (scratch)
          diag << " and " << scratch << " B of scratch for layout exchanges (each live only during its op)";
        return signalPassFailure();
      }
      kernel->setAttr(QlaDialect::kSmemAttr, IntegerAttr::get(IntegerType::get(&getContext(), 64), offset));
    });
  }
};

} // namespace
