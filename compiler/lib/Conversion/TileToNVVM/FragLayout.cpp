#include "Lowering.h"

namespace qla::lowering {

std::optional<AccLayout> accLayout(TileType t) {
  auto l = dyn_cast_or_null<WgmmaAccLayoutAttr>(t.getLayout());
  if (!l)
    return std::nullopt;
  return AccLayout{t.getShape()[0], t.getShape()[1], l.getWarpgroups()};
}

std::optional<SliceLayout> sliceLayout(TileType t) {
  auto l = dyn_cast_or_null<AccSliceLayoutAttr>(t.getLayout());
  std::optional<int64_t> dim = sliceVectorDim(t.getShape());
  if (!l || !dim)
    return std::nullopt;
  return SliceLayout{l.getWarpgroups(), l.getAlong(), *dim, t.getShape()[*dim]};
}

std::optional<FragLayout> fragLayout(TileType t) {
  if (!t.isFragment() || !t.getLayout())
    return std::nullopt;
  FragLayout l{t, accLayout(t), sliceLayout(t)};
  if (auto s = dyn_cast<qla::StridedLayoutAttr>(t.getLayout())) {
    l.threads = s.getThreads();
    l.copies = s.getCopies();
  }
  return l;
}

int64_t FragLayout::perThread() const {
  if (acc)
    return acc->perThread();
  if (slice)
    return slice->perThread();
  return (type.getNumElements() + threads - 1) / threads;
}

SmallVector<Value> FragLayout::coords(OpBuilder &b, Location loc, Value tid, int64_t e) const {
  if (acc) {
    // wgmma accumulator: thread (warpgroup wg, warp w, lane l) holds, per 64-row block mb and 8-column
    // block nb, rows 16w + l/4 (+8) and columns 8nb + 2(l%4) (+1).
    int64_t mb = e / acc->perBlock(), j = e % acc->perBlock(), nb = j / 4, q = j % 4;
    Value wg = b.create<arith::DivUIOp>(loc, tid, i32Const(b, loc, 128));
    Value inWg = b.create<arith::RemUIOp>(loc, tid, i32Const(b, loc, 128));
    Value warp = b.create<arith::DivUIOp>(loc, inWg, i32Const(b, loc, 32));
    Value lane = b.create<arith::RemUIOp>(loc, inWg, i32Const(b, loc, 32));
    Value row = b.create<arith::AddIOp>(
        loc, b.create<arith::MulIOp>(loc, wg, i32Const(b, loc, acc->rowsPerWarpgroup())),
        b.create<arith::AddIOp>(loc, b.create<arith::MulIOp>(loc, warp, i32Const(b, loc, 16)),
                                b.create<arith::DivUIOp>(loc, lane, i32Const(b, loc, 4))));
    row = b.create<arith::AddIOp>(loc, row, i32Const(b, loc, mb * 64 + 8 * (q / 2)));
    Value col = b.create<arith::AddIOp>(
        loc, b.create<arith::MulIOp>(loc, b.create<arith::RemUIOp>(loc, lane, i32Const(b, loc, 4)), i32Const(b, loc, 2)),
        i32Const(b, loc, nb * 8 + q % 2));
    return {row, col};
  }
  if (slice) {
    // The rows (columns) this thread holds of the accumulator fragment the vector is a slice of.
    Value lane = b.create<arith::RemUIOp>(loc, tid, i32Const(b, loc, 32));
    Value at;
    if (slice->along == 0) {
      int64_t mb = e / 2, h = e % 2;
      Value wg = b.create<arith::DivUIOp>(loc, tid, i32Const(b, loc, 128));
      Value warp = b.create<arith::DivUIOp>(loc, b.create<arith::RemUIOp>(loc, tid, i32Const(b, loc, 128)),
                                            i32Const(b, loc, 32));
      at = b.create<arith::AddIOp>(
          loc, b.create<arith::MulIOp>(loc, wg, i32Const(b, loc, slice->n / slice->warpgroups)),
          b.create<arith::AddIOp>(loc, b.create<arith::MulIOp>(loc, warp, i32Const(b, loc, 16)),
                                  b.create<arith::DivUIOp>(loc, lane, i32Const(b, loc, 4))));
      at = b.create<arith::AddIOp>(loc, at, i32Const(b, loc, mb * 64 + 8 * h));
    } else {
      int64_t nb = e / 2, q = e % 2;
      at = b.create<arith::AddIOp>(
          loc, b.create<arith::MulIOp>(loc, b.create<arith::RemUIOp>(loc, lane, i32Const(b, loc, 4)), i32Const(b, loc, 2)),
          i32Const(b, loc, nb * 8 + q));
    }
    SmallVector<Value> out(type.getRank(), i32Const(b, loc, 0));
    out[slice->dim] = at;
    return out;
  }
  if (copies > 1) // the thread's place in its group's copy
    tid = b.create<arith::RemUIOp>(loc, tid, i32Const(b, loc, threads));
  Value linear = b.create<arith::AddIOp>(loc, i32Const(b, loc, e * threads), tid);
  SmallVector<Value> out(type.getRank());
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    Value extent = i32Const(b, loc, type.getShape()[d]);
    out[d] = d == 0 ? linear : b.create<arith::RemUIOp>(loc, linear, extent).getResult();
    if (d > 0)
      linear = b.create<arith::DivUIOp>(loc, linear, extent);
  }
  return out;
}

Value FragLayout::exists(OpBuilder &b, Location loc, Value tid, int64_t e) const {
  if (acc || slice || (e + 1) * threads <= type.getNumElements())
    return {};
  if (copies > 1)
    tid = b.create<arith::RemUIOp>(loc, tid, i32Const(b, loc, threads));
  return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult,
                                 b.create<arith::AddIOp>(loc, i32Const(b, loc, e * threads), tid),
                                 i32Const(b, loc, type.getNumElements()));
}

Value FragLayout::writes(OpBuilder &b, Location loc, Value tid, int64_t e) const {
  Value has = exists(b, loc, tid, e);
  if (copies == 1)
    return has;
  Value first = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, tid, i32Const(b, loc, threads));
  return has ? b.create<arith::AndIOp>(loc, has, first).getResult() : first;
}

/// The scf.for around the insertion point, if any.
scf::ForOp enclosingLoop(OpBuilder &b) {
  Operation *parent = b.getInsertionBlock() ? b.getInsertionBlock()->getParentOp() : nullptr;
  if (!parent)
    return {};
  return isa<scf::ForOp>(parent) ? cast<scf::ForOp>(parent) : parent->getParentOfType<scf::ForOp>();
}

/// `make()` passed through an opaque move that takes the loop's induction variable as well, made
/// once at the start of the loop body (`tag` finds it again): LLVM cannot hoist it, or what is
/// computed from it, out of the loop, and every use in an iteration shares the one value (so LLVM
/// still sees shared-memory addresses as offsets from one base).
Value perIteration(OpBuilder &b, scf::ForOp loop, StringRef tag, function_ref<Value(OpBuilder &, Location)> make) {
  Block *body = loop.getBody();
  for (Operation &op : *body)
    if (op.hasAttr(tag))
      return op.getResult(0);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(body);
  Location loc = loop.getLoc();
  Value iv = b.create<arith::IndexCastOp>(loc, b.getI32Type(), loop.getInductionVar());
  auto read = b.create<LLVM::InlineAsmOp>(loc, b.getI32Type(), ValueRange{make(b, loc), iv}, "mov.b32 $0, $1;",
                                          "=r,r,r", /*has_side_effects=*/false, /*is_align_stack=*/false,
                                          LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(), ArrayAttr());
  read->setAttr(tag, b.getUnitAttr());
  return read.getResult(0);
}

/// The threads that run the code at the builder's insertion point.
ThreadGroup groupAt(OpBuilder &b) { return threadGroup(b.getInsertionBlock()->getParentOp()); }

Value threadIdx(OpBuilder &b, Location loc) {
  // Read afresh each iteration: hoisted, every per-element address computed from it would stay
  // live across the loop.
  Value tid;
  if (scf::ForOp loop = enclosingLoop(b))
    tid = perIteration(b, loop, "qla_per_iteration_tid", [](OpBuilder &f, Location l) -> Value {
      return f.create<NVVM::ThreadIdXOp>(l, f.getI32Type());
    });
  else
    tid = b.create<NVVM::ThreadIdXOp>(loc, b.getI32Type());
  // Inside a role, threads count from the role's first (fragments are spread over its warpgroups).
  if (int64_t first = groupAt(b).firstThread)
    tid = b.create<arith::SubIOp>(loc, tid, i32Const(b, loc, first));
  return tid;
}

void blockBarrier(OpBuilder &b, Location loc) {
  ThreadGroup g = groupAt(b);
  if (!g.isRole()) {
    b.create<NVVM::Barrier0Op>(loc);
    return;
  }
  b.create<NVVM::BarrierOp>(loc, Type(), i32Const(b, loc, g.barrierId), i32Const(b, loc, g.threads),
                            NVVM::BarrierReductionAttr(), Value());
}

Value warpgroupIndex(OpBuilder &b, Location loc, Value tid) {
  return b.create<arith::DivUIOp>(loc, tid, i32Const(b, loc, 128));
}

void warpgroupBarrier(OpBuilder &b, Location loc, Value tid) {
  assert(!groupAt(b).isRole() && "roles own the named barriers 1..roles");
  Value id = b.create<arith::AddIOp>(loc, warpgroupIndex(b, loc, tid), i32Const(b, loc, 1));
  b.create<NVVM::BarrierOp>(loc, Type(), id, i32Const(b, loc, 128), NVVM::BarrierReductionAttr(), Value());
}

Value smemAddress(OpBuilder &b, Location loc, int64_t offset) {
  auto ptr3 = LLVM::LLVMPointerType::get(b.getContext(), 3);
  Value base = b.create<LLVM::AddressOfOp>(loc, ptr3, kSmemSymbol);
  // Inside a loop, buffer addresses and the wgmma descriptors made from them are recomputed each
  // iteration (a few integer instructions) instead of being hoisted and kept in registers, where
  // dozens of them crowd out the fragments and spill.
  // The opaque read hides the base's 16-byte alignment (the symbol's, which the hardware guarantees);
  // masking restores it, so LLVM still vectorises shared-memory accesses.
  if (scf::ForOp loop = enclosingLoop(b)) {
    Value raw = perIteration(b, loop, "qla_per_iteration_smem", [&](OpBuilder &f, Location l) {
      return f.create<LLVM::PtrToIntOp>(l, f.getI32Type(), f.create<LLVM::AddressOfOp>(l, ptr3, kSmemSymbol));
    });
    base = b.create<LLVM::IntToPtrOp>(loc, ptr3, b.create<arith::AndIOp>(loc, raw, i32Const(b, loc, -16)).getResult());
  }
  // Dynamic shared memory follows the static (mbarriers) and is not 1024-byte aligned by itself;
  // swizzled TMA/wgmma tiles need that, and qla-plan-smem reserved the slack.
  Value addr = b.create<LLVM::PtrToIntOp>(loc, b.getI64Type(), base);
  Value pad = b.create<arith::AndIOp>(loc, b.create<arith::SubIOp>(loc, i64Const(b, loc, 0), addr),
                                      i64Const(b, loc, kSmemAlignment - 1));
  return gepBytes(b, loc, base, b.create<arith::AddIOp>(loc, pad, i64Const(b, loc, offset)));
}

void fenceSharedForAsync(OpBuilder &b, Location loc) {
  b.create<NVVM::FenceProxyOp>(loc, NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async_shared),
                               NVVM::SharedSpaceAttr::get(b.getContext(), NVVM::SharedSpace::shared_cta));
}

Value sharedOffset(OpBuilder &b, Location loc, TileType tile, Value row, Value col) {
  auto layout = dyn_cast_or_null<SwizzleAttr>(tile.getLayout());
  bool transposed = layout && layout.getTransposed();
  int64_t eb = elementBytes(tile.getElementType());
  int64_t rows = tile.getShape()[0], cols = tile.getShape()[1];
  int64_t physRows = transposed ? cols : rows, physCols = transposed ? rows : cols;
  Value pr = transposed ? col : row, pc = transposed ? row : col;
  int64_t blockRow = smemBlockRowBytes(physCols * eb);
  Value byteInRow = b.create<arith::MulIOp>(loc, pc, i32Const(b, loc, eb));
  Value blk = b.create<arith::DivUIOp>(loc, byteInRow, i32Const(b, loc, blockRow));
  Value within = b.create<arith::RemUIOp>(loc, byteInRow, i32Const(b, loc, blockRow));
  Value off = b.create<arith::AddIOp>(
      loc, b.create<arith::MulIOp>(loc, blk, i32Const(b, loc, physRows * blockRow)),
      b.create<arith::AddIOp>(loc, b.create<arith::MulIOp>(loc, pr, i32Const(b, loc, blockRow)), within));
  if (layout && layout.getBytes() == 128) {
    // Swizzle<3,4,3>: the 16-byte chunk (bits 4-6) is XORed with the row within 8 (bits 7-9).
    Value rowBits = b.create<arith::AndIOp>(loc, b.create<arith::ShRUIOp>(loc, off, i32Const(b, loc, 7)),
                                            i32Const(b, loc, 7));
    off = b.create<arith::XOrIOp>(loc, off, b.create<arith::ShLIOp>(loc, rowBits, i32Const(b, loc, 4)));
  }
  return b.create<arith::ExtUIOp>(loc, b.getI64Type(), off);
}

Value guarded(OpBuilder &b, Location loc, Value cond, Type type, function_ref<Value(OpBuilder &, Location)> then) {
  if (!cond) {
    Value v = then(b, loc);
    return type ? v : Value();
  }
  if (!type) {
    b.create<scf::IfOp>(loc, cond, [&](OpBuilder &t, Location l) {
      then(t, l);
      t.create<scf::YieldOp>(l);
    });
    return {};
  }
  auto ifOp = b.create<scf::IfOp>(
      loc, cond, [&](OpBuilder &t, Location l) { t.create<scf::YieldOp>(l, then(t, l)); },
      [&](OpBuilder &e, Location l) { e.create<scf::YieldOp>(l, zeroOf(e, l, type)); });
  return ifOp.getResult(0);
}

int64_t blockThreads(Operation *op) {
  if (ThreadGroup g = threadGroup(op); g.isRole())
    return g.threads;
  auto kernel = op->getParentOfType<func::FuncOp>();
  if (int64_t n = kernelThreads(kernel))
    return n;
  auto module = kernel->getParentOfType<ModuleOp>();
  auto abi = module ? module->getAttrOfType<DictionaryAttr>(QlaDialect::kAbiAttr) : DictionaryAttr();
  auto entry = abi ? abi.getAs<DictionaryAttr>(kernel.getSymName()) : DictionaryAttr();
  auto block = entry ? entry.getAs<DenseI64ArrayAttr>("block") : DenseI64ArrayAttr();
  if (!block)
    return 128;
  int64_t n = 1;
  for (int64_t d : block.asArrayRef())
    n *= d;
  return n;
}

} // namespace qla::lowering
