// The SIMT simulator (qla/Simt/Simt.h): every value is held per thread as raw bits (a scalar, or the
// elements of a vector or the fields of a struct); each op runs for all active threads before the next.
#include "qla/Simt/Simt.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <cstring>
#include <functional>
#include <map>
#include <unordered_map>
#include <regex>
#include <sstream>

namespace qla::simt {

using namespace mlir;

namespace {

using Bits = llvm::SmallVector<uint64_t, 4>; // one thread's value: scalar, vector elements or struct fields
using PerThread = std::vector<Bits>;

// Shared memory's addresses: small (a wgmma descriptor keeps 18 bits of them) and 1024-aligned.
constexpr uint64_t kSmemBase = 1024;
constexpr uint64_t kMbarrierBase = 1ull << 40; // mbarriers (not memory the code reads): group · 4096 + 8 · index
constexpr uint64_t kTensorMapBase = 1ull << 41; // tensor-map parameters: 256 · parameter index

int64_t scalarBits(Type t) {
  if (t.isIndex() || isa<LLVM::LLVMPointerType>(t))
    return 64;
  if (auto i = dyn_cast<IntegerType>(t))
    return i.getWidth();
  if (auto f = dyn_cast<FloatType>(t))
    return f.getWidth();
  return -1;
}

/// The scalar type of lane `i` of a value of type `t` (a scalar, vector element or struct field).
Type laneType(Type t, size_t i) {
  if (auto v = dyn_cast<VectorType>(t))
    return v.getElementType();
  if (auto s = dyn_cast<LLVM::LLVMStructType>(t))
    return s.getBody()[i];
  return t;
}
size_t laneCount(Type t) {
  if (auto v = dyn_cast<VectorType>(t))
    return v.getNumElements();
  if (auto s = dyn_cast<LLVM::LLVMStructType>(t))
    return s.getBody().size();
  return 1;
}
uint64_t mask(int64_t bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }
int64_t signExtend(uint64_t v, int64_t bits) {
  return bits >= 64 ? static_cast<int64_t>(v) : static_cast<int64_t>(v << (64 - bits)) >> (64 - bits);
}

const llvm::fltSemantics &semantics(Type t) {
  if (t.isF16())
    return llvm::APFloat::IEEEhalf();
  if (t.isBF16())
    return llvm::APFloat::BFloat();
  if (t.isF64())
    return llvm::APFloat::IEEEdouble();
  return llvm::APFloat::IEEEsingle();
}
double toDouble(Type t, uint64_t bits) {
  if (t.isF32()) {
    float f;
    uint32_t b = static_cast<uint32_t>(bits);
    std::memcpy(&f, &b, 4);
    return f;
  }
  if (t.isF64()) {
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  }
  llvm::APFloat f(semantics(t), llvm::APInt(scalarBits(t), bits));
  bool lost;
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &lost);
  return f.convertToDouble();
}
/// `v` rounded to float type `t` (to nearest even), as its bits. f32 math goes through float so that
/// f32 ops round as the GPU's do.
uint64_t fromDouble(Type t, double v) {
  if (t.isF32()) {
    float f = static_cast<float>(v);
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
  }
  if (t.isF64()) {
    uint64_t b;
    std::memcpy(&b, &v, 8);
    return b;
  }
  llvm::APFloat f(v);
  bool lost;
  f.convert(semantics(t), llvm::APFloat::rmNearestTiesToEven, &lost);
  return f.bitcastToAPInt().getZExtValue();
}
float asFloat(uint64_t bits) {
  float f;
  uint32_t b = static_cast<uint32_t>(bits);
  std::memcpy(&f, &b, 4);
  return f;
}
uint64_t floatBits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

std::string describe(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << op->getName() << " at " << op->getLoc();
  return s;
}

class Simulator {
public:
  Simulator(int64_t threads, int64_t smemBytes, std::array<int64_t, 3> blockIdx)
      : threads_(threads), smem_(smemBytes), access_(smemBytes), blockIdx_(blockIdx),
        clocks_(threads, std::vector<int64_t>(threads, 0)), hi_(threads) {}

  Report run(func::FuncOp kernel, const std::vector<Arg> &args) {
    Block &entry = kernel.getBody().front();
    if (entry.getNumArguments() != args.size()) {
      fail(kernel, "takes " + std::to_string(entry.getNumArguments()) + " arguments, given " +
                       std::to_string(args.size()));
      return report_;
    }
    for (auto [arg, given] : llvm::zip(entry.getArguments(), args)) {
      bool pointer = isa<LLVM::LLVMPointerType>(arg.getType());
      if (given.map) {
        uint64_t address = kTensorMapBase + 256 * arg.getArgNumber();
        maps_[address] = given.map;
        globals_.push_back(given.map->buffer);
        set(arg, PerThread(threads_, Bits{address}));
        continue;
      }
      if (pointer != (given.buffer != nullptr)) {
        fail(kernel, "argument " + std::to_string(arg.getArgNumber()) + " must be " + (pointer ? "a buffer" : "an integer"));
        return report_;
      }
      if (pointer)
        globals_.push_back(given.buffer);
      set(arg, PerThread(threads_, Bits{pointer ? reinterpret_cast<uint64_t>(given.buffer->bytes.data())
                                                : static_cast<uint64_t>(given.scalar)}));
    }
    if (!report_.errors.empty())
      return report_;
    // One execution context a warpgroup, run one at a time: a context runs until it must wait (a barrier
    // or an mbarrier phase others have yet to complete), then hands over. Roles' loops interleave.
    const int64_t contexts = std::max<int64_t>(1, threads_ / 128);
    ready_.assign(contexts, 0);
    done_.assign(contexts, 0);
    seen_.assign(contexts, -1);
    std::vector<std::thread> workers;
    for (int64_t c = 0; c < contexts; ++c)
      workers.emplace_back([this, c, contexts, &entry] {
        takeBaton(c);
        std::vector<char> mine(threads_, 0);
        for (int64_t t = c * threads_ / contexts; t < (c + 1) * threads_ / contexts; ++t)
          mine[t] = 1;
        runBlock(entry, mine);
        std::unique_lock<std::mutex> lock(mutex_);
        done_[c] = 1;
        if (!report_.errors.empty())
          aborted_ = true;
        handOver(c, lock);
      });
    {
      std::unique_lock<std::mutex> lock(mutex_);
      current_ = 0;
      cv_.notify_all();
    }
    for (std::thread &w : workers)
      w.join();
    return report_;
  }

private:
  struct Stop {}; // thrown to end the simulation at the first error

  [[noreturn]] void fail(Operation *op, const std::string &what) {
    report_.errors.push_back(describe(op) + ": " + what);
    throw Stop{};
  }
  void fail(func::FuncOp op, const std::string &what) { report_.errors.push_back(op.getName().str() + ": " + what); }

  /// The running context writes its own threads' values only (contexts share the function's SSA values).
  void set(Value v, PerThread bits) {
    auto it = env_.find(v);
    if (it == env_.end()) {
      env_[v] = std::move(bits);
      return;
    }
    for (int64_t t = lo_; t < hi_; ++t)
      it->second[t] = std::move(bits[t]);
  }

  // The contexts' hand-over: `current_` runs; the others wait on `cv_`.
  void takeBaton(int64_t c) {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return current_ == c; });
    lo_ = c * threads_ / int64_t(done_.size());
    hi_ = (c + 1) * threads_ / int64_t(done_.size());
    ready_[c] = 1;
  }
  /// Gives the baton to the next context that has not finished (none left: nobody).
  void handOver(int64_t c, std::unique_lock<std::mutex> &) {
    int64_t n = done_.size();
    current_ = -1;
    for (int64_t i = 1; i <= n; ++i)
      if (!done_[(c + i) % n]) {
        current_ = (c + i) % n;
        break;
      }
    cv_.notify_all();
  }
  /// Waits (letting the other contexts run) until `condition` holds. All contexts waiting with nothing
  /// changed since each last looked is a deadlock: an error.
  void waitUntil(Operation *op, const std::function<bool()> &condition, const std::string &what) {
    int64_t c = lo_ * int64_t(done_.size()) / threads_;
    while (!condition()) {
      if (aborted_)
        throw Stop{};
      seen_[c] = progress_;
      bool stuck = true;
      for (size_t o = 0; o < done_.size(); ++o)
        if (!done_[o] && (!ready_[o] || seen_[o] != progress_))
          stuck = false;
      if (stuck) {
        aborted_ = true;
        fail(op, "deadlock: every warpgroup waits (" + what + ")");
      }
      {
        std::unique_lock<std::mutex> lock(mutex_);
        handOver(c, lock);
      }
      takeBaton(c);
      if (aborted_)
        throw Stop{};
    }
    seen_[c] = -1;
  }
  const PerThread &get(Operation *op, Value v) {
    auto it = env_.find(v);
    if (it == env_.end())
      fail(op, "operand has no value (defined in a region that did not run?)");
    return it->second;
  }

  /// Runs a block's ops for the threads in `active`; returns the operands of its terminator (yield).
  std::vector<PerThread> runBlock(Block &block, const std::vector<char> &active) {
    try {
      for (Operation &op : block) {
        if (isa<scf::YieldOp>(op)) {
          std::vector<PerThread> out;
          for (Value v : op.getOperands())
            out.push_back(get(&op, v));
          return out;
        }
        if (isa<func::ReturnOp, LLVM::ReturnOp>(op))
          return {};
        ++report_.ops;
        step(&op, active);
      }
    } catch (const Stop &) {
    }
    return {};
  }

  void step(Operation *op, const std::vector<char> &active) {
    if (auto ifOp = dyn_cast<scf::IfOp>(op))
      return runIf(ifOp, active);
    if (auto forOp = dyn_cast<scf::ForOp>(op))
      return runFor(forOp, active);
    if (auto mma = dyn_cast<NVVM::MmaOp>(op))
      return runMma(mma, active);
    if (auto shfl = dyn_cast<NVVM::ShflOp>(op))
      return runShuffle(shfl, active);
    if (auto wgmma = dyn_cast<NVVM::WgmmaMmaAsyncOp>(op))
      return runWgmma(wgmma, active);
    if (auto st = dyn_cast<NVVM::StMatrixOp>(op))
      return runStmatrix(st, active);
    if (auto asmOp = dyn_cast<LLVM::InlineAsmOp>(op); asmOp && runWgmmaAsm(asmOp, active))
      return;
    // Asynchronous work is done when issued: its fences, commits and waits have nothing left to order.
    if (isa<NVVM::CpAsyncCommitGroupOp, NVVM::CpAsyncWaitGroupOp, NVVM::WgmmaFenceAlignedOp,
            NVVM::WgmmaGroupSyncAlignedOp, NVVM::WgmmaWaitGroupSyncOp, NVVM::FenceProxyOp>(op))
      return;
    if (isa<NVVM::Barrier0Op>(op)) {
      for (int64_t t = lo_; t < hi_; ++t)
        if (!active[t])
          fail(op, "a barrier that thread " + std::to_string(t) + " does not reach (divergent)");
      return meet(op, /*id=*/-1, threads_, active, /*waits=*/true);
    }
    if (auto named = dyn_cast<NVVM::BarrierOp>(op))
      return runNamedBarrier(named, active);
    if (auto arrive = dyn_cast<NVVM::BarrierArriveOp>(op))
      return runNamedBarrier(arrive, active);
    if (isa<NVVM::SyncWarpOp>(op)) { // bar.warp.sync: each warp's threads meet
      for (int64_t w = 0; w < threads_ / 32; ++w) {
        std::vector<int64_t> lanes;
        for (int64_t t = 32 * w; t < 32 * w + 32; ++t)
          if (active[t])
            lanes.push_back(t);
        if (!lanes.empty())
          synchronize(lanes);
      }
      return;
    }
    if (isa<NVVM::FenceMbarrierInitOp, NVVM::SetMaxRegisterOp>(op)) // (registers are not modelled)
      return;
    if (isa<nvgpu::MBarrierCreateOp>(op)) { // one group an op, whichever context reaches it
      auto [it, added] = groups_.try_emplace(op, groups_.size());
      set(op->getResult(0), PerThread(threads_, Bits{uint64_t(it->second)}));
      return;
    }
    if (isa<nvgpu::MBarrierInitOp, nvgpu::MBarrierArriveExpectTxOp, nvgpu::MBarrierArriveOp,
            nvgpu::MBarrierTryWaitParityOp, NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(op))
      return runMbarrierOp(op, active);
    if (op->getNumResults() > 1)
      fail(op, "ops with several results are not supported");
    PerThread out(threads_);
    for (int64_t t = 0; t < threads_; ++t)
      if (active[t])
        out[t] = eval(op, t);
    if (op->getNumResults() == 1)
      set(op->getResult(0), std::move(out));
  }

  void runIf(scf::IfOp op, const std::vector<char> &active) {
    const PerThread &cond = get(op, op.getCondition());
    std::vector<char> thenMask(threads_), elseMask(threads_);
    bool anyThen = false, anyElse = false;
    for (int64_t t = 0; t < threads_; ++t) {
      thenMask[t] = active[t] && (cond[t][0] & 1);
      elseMask[t] = active[t] && !(cond[t][0] & 1);
      anyThen |= thenMask[t];
      anyElse |= elseMask[t];
    }
    std::vector<PerThread> thenOut, elseOut;
    if (anyThen)
      thenOut = runBranch(op, op.getThenRegion(), thenMask);
    if (anyElse && !op.getElseRegion().empty())
      elseOut = runBranch(op, op.getElseRegion(), elseMask);
    for (unsigned r = 0; r < op.getNumResults(); ++r) {
      PerThread merged(threads_);
      for (int64_t t = 0; t < threads_; ++t)
        if (thenMask[t])
          merged[t] = thenOut[r][t];
        else if (elseMask[t])
          merged[t] = elseOut[r][t];
      set(op.getResult(r), std::move(merged));
    }
  }
  std::vector<PerThread> runBranch(Operation *op, Region &region, const std::vector<char> &mask) {
    size_t errors = report_.errors.size();
    auto out = runBlock(region.front(), mask);
    if (report_.errors.size() != errors)
      throw Stop{};
    if (out.size() != op->getNumResults())
      fail(op, "a region yielded the wrong number of values");
    return out;
  }

  /// Each thread runs its own trip count (bounds may differ between threads: iteration k runs for the
  /// threads that have a k-th trip, with their own induction values).
  void runFor(scf::ForOp op, const std::vector<char> &active) {
    auto values = [&](Value v) {
      std::vector<int64_t> out(threads_, 0);
      const PerThread &x = get(op, v);
      for (int64_t t = 0; t < threads_; ++t)
        if (active[t])
          out[t] = signExtend(x[t][0], scalarBits(v.getType()));
      return out;
    };
    std::vector<int64_t> lb = values(op.getLowerBound()), ub = values(op.getUpperBound()), st = values(op.getStep());
    std::vector<int64_t> trips(threads_, 0);
    int64_t most = 0;
    for (int64_t t = 0; t < threads_; ++t)
      if (active[t]) {
        if (st[t] <= 0)
          fail(op, "a loop step that is not positive");
        trips[t] = ub[t] > lb[t] ? (ub[t] - lb[t] + st[t] - 1) / st[t] : 0;
        most = std::max(most, trips[t]);
      }
    std::vector<PerThread> carried;
    for (Value v : op.getInitArgs())
      carried.push_back(get(op, v));
    Block &body = *op.getBody();
    for (int64_t k = 0; k < most; ++k) {
      std::vector<char> running(threads_);
      PerThread iv(threads_, Bits{0});
      for (int64_t t = 0; t < threads_; ++t) {
        running[t] = active[t] && k < trips[t];
        iv[t][0] = static_cast<uint64_t>(lb[t] + k * st[t]);
      }
      set(body.getArgument(0), iv);
      for (auto [arg, value] : llvm::zip(body.getArguments().drop_front(), carried))
        set(arg, value);
      size_t errors = report_.errors.size();
      std::vector<PerThread> next = runBlock(body, running);
      if (report_.errors.size() != errors)
        throw Stop{};
      for (size_t i = 0; i < carried.size(); ++i)
        for (int64_t t = 0; t < threads_; ++t)
          if (running[t])
            carried[i][t] = next[i][t];
    }
    for (auto [r, value] : llvm::zip(op.getResults(), carried))
      set(r, value);
  }

  /// mma.sync m16n8k16, row-major A and column-major B of f16, f32 C and D: each warp's 32 lanes
  /// together (PTX ISA's fragment layouts; the lower half of an f16x2 register is the lower index).
  void runMma(NVVM::MmaOp op, const std::vector<char> &active) {
    auto shape = op.getShape();
    if (shape.getM() != 16 || shape.getN() != 8 || shape.getK() != 16 || op.getOperandA().size() != 4 ||
        op.getOperandB().size() != 2 || op.getOperandC().size() != 4 ||
        !laneType(op.getOperandA()[0].getType(), 0).isF16() || !op.getOperandC()[0].getType().isF32())
      fail(op, "only mma.sync m16n8k16 with f16 A, B (vector<2xf16>) and f32 C is supported");
    PerThread out(threads_, Bits(4, 0));
    for (int64_t warp = 0; warp < threads_ / 32; ++warp) {
      bool any = false;
      for (int64_t l = 0; l < 32; ++l)
        any |= active[warp * 32 + l];
      if (!any)
        continue;
      double a[16][16], b[16][8], c[16][8];
      Type f16 = Float16Type::get(op.getContext());
      for (int64_t l = 0; l < 32; ++l) {
        int64_t t = warp * 32 + l, g = l / 4, tig = l % 4;
        if (!active[t])
          fail(op, "mma.sync with lane " + std::to_string(l) + " of warp " + std::to_string(warp) + " inactive");
        for (int64_t r = 0; r < 4; ++r)
          for (int64_t h = 0; h < 2; ++h)
            a[g + 8 * (r % 2)][2 * tig + h + 8 * (r / 2)] = toDouble(f16, get(op, op.getOperandA()[r])[t][h]);
        for (int64_t r = 0; r < 2; ++r)
          for (int64_t h = 0; h < 2; ++h)
            b[2 * tig + h + 8 * r][g] = toDouble(f16, get(op, op.getOperandB()[r])[t][h]);
        for (int64_t r = 0; r < 4; ++r)
          c[g + 8 * (r / 2)][2 * tig + r % 2] = asFloat(get(op, op.getOperandC()[r])[t][0]);
      }
      for (int64_t l = 0; l < 32; ++l) {
        int64_t g = l / 4, tig = l % 4;
        for (int64_t r = 0; r < 4; ++r) {
          int64_t row = g + 8 * (r / 2), col = 2 * tig + r % 2;
          double d = c[row][col];
          for (int64_t k = 0; k < 16; ++k)
            d += a[row][k] * b[k][col];
          out[warp * 32 + l][r] = floatBits(static_cast<float>(d));
        }
      }
    }
    set(op.getResult(), std::move(out));
  }

  /// The warpgroups of 128 threads that run a warpgroup-wide op: all their threads active, or none.
  std::vector<int64_t> warpgroups(Operation *op, const std::vector<char> &active) {
    std::vector<int64_t> out;
    for (int64_t wg = 0; wg < threads_ / 128; ++wg) {
      int64_t issued = 0;
      for (int64_t t = wg * 128; t < wg * 128 + 128; ++t)
        issued += active[t];
      if (issued && issued != 128)
        fail(op, "a warpgroup-wide op with only part of warpgroup " + std::to_string(wg) + " active");
      if (issued)
        out.push_back(wg);
    }
    return out;
  }

  /// A wgmma operand (`rows` of M or N, 16 of K) from shared memory through its descriptor, with the
  /// 128-byte swizzle: every address's 16-byte chunk (bits 4-6) XORed with its bits 7-9. K-major: row r
  /// at start + (r / 8)·SBO + (r % 8)·128, its K elements from there. MN-major: K row k at
  /// start + (k / 8)·SBO + (k % 8)·128, element r at 2r there (+ LBO for each further 64 of them).
  std::vector<double> wgmmaOperand(Operation *op, uint64_t desc, int64_t rows, bool mnMajor, Type elt, int64_t t) {
    if ((desc >> 62) != 1)
      fail(op, "wgmma descriptor without the 128-byte swizzle");
    uint64_t start = (desc & 0x3FFF) << 4, lbo = ((desc >> 16) & 0x3FFF) << 4, sbo = ((desc >> 32) & 0x3FFF) << 4;
    int64_t bytes = scalarBits(elt) / 8, perRow = 128 / bytes;
    std::vector<double> m(rows * 16);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < 16; ++k) {
        uint64_t logical = mnMajor ? start + (k / 8) * sbo + (k % 8) * 128 + (r / perRow) * lbo + (r % perRow) * bytes
                                   : start + (r / 8) * sbo + (r % 8) * 128 + k * bytes;
        uint64_t physical = logical ^ (((logical >> 7) & 7) << 4), bits = 0;
        std::memcpy(&bits, memory(op, LLVM::LLVMPointerType::get(op->getContext(), 3), physical, bytes, t, false), bytes);
        m[r * 16 + k] = toDouble(elt, bits);
      }
    return m;
  }

  /// D = A·B (+ C) for one warpgroup, m64nNk16, into the wgmma accumulator fragment (warp w: rows
  /// 16w + l/4 (+8); n-group j: columns 8j + 2(l%4) (+1)).
  void wgmmaProduct(int64_t wg, int64_t n, const std::vector<double> &a, const std::vector<double> &b,
                    const PerThread *acc, PerThread &out) {
    for (int64_t t = wg * 128; t < wg * 128 + 128; ++t) {
      int64_t w = (t % 128) / 32, l = t % 32;
      out[t].assign(n / 2, 0);
      for (int64_t j = 0; j < n / 8; ++j)
        for (int64_t q = 0; q < 4; ++q) {
          int64_t row = 16 * w + l / 4 + 8 * (q / 2), col = 8 * j + 2 * (l % 4) + q % 2, e = 4 * j + q;
          double d = acc ? asFloat((*acc)[t][e]) : 0.0;
          for (int64_t k = 0; k < 16; ++k)
            d += a[row * 16 + k] * b[col * 16 + k];
          out[t][e] = floatBits(static_cast<float>(d));
        }
    }
  }

  /// wgmma.mma_async m64nNk16 (nvvm op): A and B from shared memory (bf16 or f16, either major-ness),
  /// f32 accumulators.
  void runWgmma(NVVM::WgmmaMmaAsyncOp op, const std::vector<char> &active) {
    auto shape = op.getShape();
    int64_t n = shape.getN();
    auto isHalf = [](NVVM::WGMMATypes t) { return t == NVVM::WGMMATypes::bf16 || t == NVVM::WGMMATypes::f16; };
    if (shape.getM() != 64 || shape.getK() != 16 || !isHalf(op.getTypeA()) || op.getTypeA() != op.getTypeB() ||
        op.getTypeD() != NVVM::WGMMATypes::f32 || op.getScaleA() != NVVM::WGMMAScaleIn::one ||
        op.getScaleB() != NVVM::WGMMAScaleIn::one)
      fail(op, "only m64nNk16 wgmma of bf16/f16 operands with f32 accumulators is supported");
    Type elt = op.getTypeA() == NVVM::WGMMATypes::bf16 ? Type(BFloat16Type::get(op.getContext()))
                                                         : Type(Float16Type::get(op.getContext()));
    bool accumulate = op.getScaleD() == NVVM::WGMMAScaleOut::one;
    const PerThread &descA = get(op, op.getDescriptorA()), &descB = get(op, op.getDescriptorB());
    const PerThread &acc = get(op, op.getInouts());
    PerThread out(threads_);
    for (int64_t wg : warpgroups(op, active)) {
      int64_t first = wg * 128;
      std::vector<double> a = wgmmaOperand(op, descA[first][0], 64, op.getLayoutA() == NVVM::MMALayout::col, elt, first);
      std::vector<double> b = wgmmaOperand(op, descB[first][0], n, op.getLayoutB() == NVVM::MMALayout::row, elt, first);
      wgmmaProduct(wg, n, a, b, accumulate ? &acc : nullptr, out);
    }
    set(op.getResult(), std::move(out));
  }

  /// The register-A wgmma of the lowering's inline assembly: "{accumulators}, {a0..a3}, descB, p, 1, 1,
  /// tnspB" with p = (scale-d operand != 0); A's four f16x2/bf16x2 registers a thread hold its warp's rows
  /// 16w + l/4 (+8), columns 2(l%4) (+1) (+8), as mma.sync's A.
  bool runWgmmaAsm(LLVM::InlineAsmOp op, const std::vector<char> &active) {
    static const std::regex form(R"(setp\.ne\.b32 p, \$(\d+), 0;\s*wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k16\.f32\.(bf16|f16)\.(bf16|f16) \{[^}]*\}, \{\$(\d+), \$(\d+), \$(\d+), \$(\d+)\}, \$(\d+), p, 1, 1, ([01]);)");
    std::smatch m;
    std::string text = op.getAsmString().str();
    if (!std::regex_search(text, m, form))
      return false;
    int64_t n = std::stoi(m[2]), outs = n / 2;
    Type elt = m[3] == "bf16" ? Type(BFloat16Type::get(op.getContext())) : Type(Float16Type::get(op.getContext()));
    auto operand = [&](int64_t dollar) -> const PerThread & { return get(op, op.getOperands()[dollar - outs]); };
    PerThread acc(threads_, Bits(outs, 0)), out(threads_);
    for (int64_t i = 0; i < outs; ++i) { // the tied accumulator inputs, operands 0 .. outs - 1
      const PerThread &v = get(op, op.getOperands()[i]);
      for (int64_t t = 0; t < threads_; ++t)
        if (active[t])
          acc[t][i] = v[t][0];
    }
    for (int64_t wg : warpgroups(op, active)) {
      int64_t first = wg * 128;
      std::vector<double> a(64 * 16);
      for (int64_t t = first; t < first + 128; ++t) {
        int64_t w = (t % 128) / 32, l = t % 32;
        for (int64_t r = 0; r < 4; ++r)
          for (int64_t h = 0; h < 2; ++h)
            a[(16 * w + l / 4 + 8 * (r % 2)) * 16 + 2 * (l % 4) + h + 8 * (r / 2)] =
                toDouble(elt, (operand(std::stoi(m[5 + r]))[t][0] >> (16 * h)) & 0xFFFF);
      }
      std::vector<double> b = wgmmaOperand(op, operand(std::stoi(m[9]))[first][0], n, m[10] == "1", elt, first);
      wgmmaProduct(wg, n, a, b, operand(std::stoi(m[1]))[first][0] ? &acc : nullptr, out);
    }
    set(op.getResult(0), std::move(out));
    return true;
  }

  /// stmatrix m8n8 b16 (.x1/.x2/.x4, .trans for the col layout), per warp: lane 8i + r gives the address
  /// of row r of matrix i; register i of lane l holds that matrix's (l/4, 2(l%4) .. +1). Transposed, the
  /// row at lane 8i + r's address is column r of the fragment.
  void runStmatrix(NVVM::StMatrixOp op, const std::vector<char> &active) {
    auto shape = op.getShape();
    if (shape.getM() != 8 || shape.getN() != 8 || op.getEltType() != NVVM::LdStMatrixEltType::B16)
      fail(op, "only stmatrix m8n8 of b16 is supported");
    bool trans = op.getLayout() == NVVM::MMALayout::col;
    int64_t count = op.getSources().size();
    const PerThread &ptr = get(op, op.getPtr());
    for (int64_t warp = 0; warp < threads_ / 32; ++warp) {
      int64_t issued = 0;
      for (int64_t l = 0; l < 32; ++l)
        issued += active[warp * 32 + l];
      if (!issued)
        continue;
      if (issued != 32)
        fail(op, "stmatrix with part of warp " + std::to_string(warp) + " inactive");
      for (int64_t i = 0; i < count; ++i) {
        const PerThread &reg = get(op, op.getSources()[i]);
        for (int64_t r = 0; r < 8; ++r) {
          int64_t t = warp * 32 + 8 * i + r;
          uint8_t *row = memory(op, op.getPtr().getType(), ptr[t][0], 16, t, true);
          for (int64_t c = 0; c < 8; ++c) {
            // The fragment's element (row, col) of this matrix: lane 4·row + col/2, half col % 2.
            int64_t fr = trans ? c : r, fc = trans ? r : c;
            uint16_t h = static_cast<uint16_t>(reg[warp * 32 + 4 * fr + fc / 2][0] >> (16 * (fc % 2)));
            std::memcpy(row + 2 * c, &h, 2);
          }
        }
      }
    }
  }

  void runShuffle(NVVM::ShflOp op, const std::vector<char> &active) {
    if (op.getReturnValueAndIsValid())
      fail(op, "shfl.sync with a validity result is not supported");
    const PerThread &value = get(op, op.getVal()), &offset = get(op, op.getOffset()), &clamp = get(op, op.getMaskAndClamp());
    PerThread out(threads_);
    for (int64_t t = 0; t < threads_; ++t) {
      if (!active[t])
        continue;
      int64_t lane = t % 32, b = offset[t][0] & 31, c = clamp[t][0] & 31, seg = (clamp[t][0] >> 8) & 31;
      int64_t minLane = lane & seg, maxLane = minLane | (c & ~seg), j = lane;
      bool valid = true;
      switch (op.getKind()) {
      case NVVM::ShflKind::idx:
        j = minLane | (b & ~seg);
        valid = j <= maxLane;
        break;
      case NVVM::ShflKind::bfly:
        j = lane ^ b;
        valid = j <= maxLane;
        break;
      case NVVM::ShflKind::down:
        j = lane + b;
        valid = j <= maxLane;
        break;
      case NVVM::ShflKind::up:
        j = lane - b;
        valid = j >= minLane;
        break;
      }
      int64_t src = valid ? t - lane + j : t;
      if (!active[src])
        fail(op, "thread " + std::to_string(t) + " reads inactive thread " + std::to_string(src));
      out[t] = value[src];
    }
    set(op.getResult(), std::move(out));
  }

  /// The host bytes at `addr` for an access of `size` bytes by thread `t` (bounds, alignment and,
  /// in shared memory, hazards checked).
  uint8_t *memory(Operation *op, Type ptrType, uint64_t addr, int64_t size, int64_t t, bool write) {
    if (size > 1 && addr % std::min<int64_t>(size, 16) != 0)
      fail(op, "misaligned " + std::to_string(size) + "-byte access at " + std::to_string(addr));
    auto space = cast<LLVM::LLVMPointerType>(ptrType).getAddressSpace();
    if (space == 3 || (addr >= kSmemBase && addr < kSmemBase + smem_.size())) {
      if (addr < kSmemBase || addr + size > kSmemBase + smem_.size())
        fail(op, "shared-memory access out of bounds (offset " + std::to_string(int64_t(addr - kSmemBase)) + ", " +
                     std::to_string(size) + " bytes, " + std::to_string(smem_.size()) + " allocated)");
      for (int64_t i = 0; i < size; ++i)
        track(op, addr - kSmemBase + i, t, write);
      return smem_.data() + (addr - kSmemBase);
    }
    for (Buffer *b : globals_) {
      uint64_t base = reinterpret_cast<uint64_t>(b->bytes.data());
      if (addr >= base && addr + size <= base + b->bytes.size())
        return b->bytes.data() + (addr - base);
    }
    fail(op, "global access outside every buffer at address " + std::to_string(addr));
  }

  /// Race tracking of one shared-memory byte by vector clocks: thread t has seen thread w's access made
  /// at w's clock c once clocks_[t][w] > c (a barrier, or an mbarrier phase, ordered them). A write
  /// that another thread's access has not seen, or a read not seen by a later writer, is a hazard.
  void track(Operation *op, uint64_t byte, int64_t t, bool write) {
    Access &a = access_[byte];
    const std::vector<int64_t> &seen = clocks_[t];
    auto hazard = [&](const char *kind, int64_t other) {
      if (hazards_.insert({op, kind}).second)
        report_.hazards.push_back(std::string(kind) + " hazard at shared byte " + std::to_string(byte) + ": thread " +
                                  std::to_string(t) + " and thread " + std::to_string(other) + ", " + describe(op));
    };
    if (a.writer >= 0 && a.writer != t && seen[a.writer] <= a.writeClock)
      hazard(write ? "write-after-write" : "read-after-write", a.writer);
    if (write) {
      if (a.reader >= 0 && a.reader != t && seen[a.reader] <= a.readClock)
        hazard("write-after-read", a.reader);
      a.writer = t;
      a.writeClock = seen[t];
      a.reader = -1;
    } else {
      a.reader = t;
      a.readClock = seen[t];
    }
  }

  /// The threads `group` meet: each advances its own clock, then all know what any of them knew.
  void synchronize(const std::vector<int64_t> &group) {
    std::vector<int64_t> joined(threads_, 0);
    for (int64_t t : group) {
      ++clocks_[t][t];
      for (int64_t u = 0; u < threads_; ++u)
        joined[u] = std::max(joined[u], clocks_[t][u]);
    }
    for (int64_t t : group)
      clocks_[t] = joined;
  }

  /// bar.sync / bar.arrive id, count: the active threads arrive at barrier `id` (by thread); it completes
  /// when `count` threads have arrived. Syncing threads wait for that; arriving ones go on.
  template <typename BarOp> void runNamedBarrier(BarOp op, const std::vector<char> &active) {
    constexpr bool waits = std::is_same_v<BarOp, NVVM::BarrierOp>;
    Value idValue = op.getBarrierId(), countValue = op.getNumberOfThreads();
    std::map<int64_t, std::vector<char>> byId;
    std::map<int64_t, int64_t> counts;
    for (int64_t t = lo_; t < hi_; ++t)
      if (active[t]) {
        int64_t id = idValue ? int64_t(get(op, idValue)[t][0]) : 0;
        byId[id].assign(threads_, 0);
        counts[id] = countValue ? int64_t(get(op, countValue)[t][0]) : threads_;
      }
    for (int64_t t = lo_; t < hi_; ++t)
      if (active[t])
        byId[idValue ? int64_t(get(op, idValue)[t][0]) : 0][t] = 1;
    for (auto &[id, members] : byId)
      meet(op, id, counts[id], members, waits);
  }

  struct Meeting {
    int64_t count = 0, expected = 0, generation = 0; // expected: arrivals still missing
    std::vector<int64_t> syncers;               // threads that wait for the completion
    std::vector<int64_t> joined;                // the arrivals' clocks so far
  };
  /// The running context's threads in `members` arrive at barrier `id` (-1: the block barrier) of `count`
  /// threads; with `waits` they wait for its completion, then know what every arrival knew.
  void meet(Operation *op, int64_t id, int64_t count, const std::vector<char> &members, bool waits) {
    Meeting &m = meetings_[id];
    if (m.joined.empty()) {
      m.joined.assign(threads_, 0);
      m.count = m.expected = count;
      m.generation = meetingsDone_[id];
    } else if (m.count != count) {
      fail(op, "barrier " + std::to_string(id) + " used with " + std::to_string(count) + " and " +
                   std::to_string(m.count) + " threads at once");
    }
    int64_t arrived = 0;
    for (int64_t t = lo_; t < hi_; ++t)
      if (members[t]) {
        ++clocks_[t][t];
        for (int64_t u = 0; u < threads_; ++u)
          m.joined[u] = std::max(m.joined[u], clocks_[t][u]);
        if (waits)
          m.syncers.push_back(t);
        ++arrived;
      }
    m.expected -= arrived;
    ++progress_;
    if (m.expected < 0)
      fail(op, "more threads arrive at barrier " + std::to_string(id) + " than its count");
    int64_t generation = m.generation;
    if (m.expected == 0) { // complete: the syncers learn what every arrival knew
      for (int64_t t : m.syncers)
        clocks_[t] = m.joined;
      meetings_.erase(id);
      meetingsDone_[id] = generation + 1;
      ++report_.barriers;
      return;
    }
    if (waits)
      waitUntil(op, [&] { return meetingsDone_[id] > generation; },
                id < 0 ? std::string("a block barrier") : "named barrier " + std::to_string(id));
  }

  struct Mbarrier {
    int64_t count = -1, pending = 0, tx = 0, phase = 0;
    std::vector<int64_t> release, completed[2]; // the arrivals' clocks this phase; each parity's last completion
  };

  uint64_t mbarrierAddress(Operation *op, Value group, Value index, int64_t t) {
    uint64_t g = get(op, group)[t][0], i = get(op, index)[t][0];
    return kMbarrierBase + g * 4096 + 8 * i;
  }
  Mbarrier &mbarrier(Operation *op, uint64_t address) {
    auto it = mbarriers_.find(address);
    if (it == mbarriers_.end() || it->second.count < 0)
      fail(op, "an mbarrier used before its init");
    return it->second;
  }
  /// Thread t releases into the mbarrier's phase: its clock advances, the phase learns what t knew.
  void release(Mbarrier &m, int64_t t) {
    ++clocks_[t][t];
    if (m.release.empty())
      m.release.assign(threads_, 0);
    for (int64_t u = 0; u < threads_; ++u)
      m.release[u] = std::max(m.release[u], clocks_[t][u]);
  }
  void completeIfDone(Mbarrier &m) {
    ++progress_;
    if (m.pending == 0 && m.tx == 0) {
      m.completed[m.phase] = m.release.empty() ? std::vector<int64_t>(threads_, 0) : m.release;
      m.release.clear();
      m.phase ^= 1;
      m.pending = m.count;
    }
  }

  /// mbarrier init / arrive / arrive.expect_tx / try_wait.parity (nvgpu), and TMA tile loads, which
  /// complete at once: their bytes land in shared memory and count off the mbarrier's expected ones.
  void runMbarrierOp(Operation *op, const std::vector<char> &active) {
    for (int64_t t = 0; t < threads_; ++t) {
      if (!active[t])
        continue;
      if (auto init = dyn_cast<nvgpu::MBarrierInitOp>(op)) {
        if (init.getPredicate() && !(get(op, init.getPredicate())[t][0] & 1))
          continue;
        Mbarrier &m = mbarriers_[mbarrierAddress(op, init.getBarriers(), init.getMbarId(), t)];
        m = Mbarrier{};
        m.count = m.pending = int64_t(get(op, init.getCount())[t][0]);
        // A wait on the parity before the first phase passes at once (the producer's first empty waits).
        m.completed[0].assign(threads_, 0);
        m.completed[1].assign(threads_, 0);
      } else if (auto arrive = dyn_cast<nvgpu::MBarrierArriveExpectTxOp>(op)) {
        if (arrive.getPredicate() && !(get(op, arrive.getPredicate())[t][0] & 1))
          continue;
        Mbarrier &m = mbarrier(op, mbarrierAddress(op, arrive.getBarriers(), arrive.getMbarId(), t));
        m.tx += int64_t(get(op, arrive.getTxcount())[t][0]);
        release(m, t);
        --m.pending;
        completeIfDone(m);
      } else if (auto arrive = dyn_cast<nvgpu::MBarrierArriveOp>(op)) {
        Mbarrier &m = mbarrier(op, mbarrierAddress(op, arrive.getBarriers(), arrive.getMbarId(), t));
        release(m, t);
        if (--m.pending < 0)
          fail(op, "more arrivals than the mbarrier's count");
        completeIfDone(m);
      } else if (auto wait = dyn_cast<nvgpu::MBarrierTryWaitParityOp>(op)) {
        Mbarrier &m = mbarrier(op, mbarrierAddress(op, wait.getBarriers(), wait.getMbarId(), t));
        uint64_t parity = get(op, wait.getPhaseParity())[t][0] & 1;
        uint64_t address = mbarrierAddress(op, wait.getBarriers(), wait.getMbarId(), t);
        waitUntil(op, [&] { return uint64_t(mbarrier(op, address).phase) != parity; },
                  "an mbarrier phase with " + std::to_string(m.pending) + " arrivals and " + std::to_string(m.tx) +
                      " bytes missing");
        for (int64_t u = 0; u < threads_; ++u)
          clocks_[t][u] = std::max(clocks_[t][u], m.completed[parity][u]);
      } else if (auto tma = dyn_cast<NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(op)) {
        if (tma.getPredicate() && !(get(op, tma.getPredicate())[t][0] & 1))
          continue;
        if (tma.getMode() != NVVM::TMALoadMode::TILE || tma.getMulticastMask())
          fail(op, "only tile-mode TMA loads without multicast are supported");
        int64_t bytes = tmaLoad(tma, t);
        Mbarrier &m = mbarrier(op, get(op, tma.getMbar())[t][0]);
        release(m, t);
        m.tx -= bytes;
        completeIfDone(m);
      }
    }
  }

  /// One TMA tile load by thread t: the box at the coordinates (innermost first) into shared memory,
  /// row-major, 128-byte swizzled when the map says so (the same address XOR as wgmma's); zeros for
  /// elements outside the tensor. Returns the bytes written.
  int64_t tmaLoad(NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp op, int64_t t) {
    auto it = maps_.find(get(op, op.getTmaDescriptor())[t][0]);
    if (it == maps_.end())
      fail(op, "a TMA descriptor that is not a tensor-map argument");
    const TensorMap &map = *it->second;
    auto coords = op.getCoordinates();
    size_t rank = map.dims.size();
    if (coords.size() != rank || map.box.size() != rank || (map.swizzle != 0 && map.swizzle != 128))
      fail(op, "a TMA load whose coordinates or map do not match (or a swizzle other than 128 bytes)");
    std::vector<int64_t> at(rank);
    for (size_t d = 0; d < rank; ++d)
      at[d] = signExtend(get(op, coords[d])[t][0], scalarBits(coords[d].getType()));
    uint64_t dst = get(op, op.getDstMem())[t][0];
    int64_t elements = 1;
    for (int64_t b : map.box)
      elements *= b;
    auto ptr3 = LLVM::LLVMPointerType::get(op.getContext(), 3);
    for (int64_t e = 0; e < elements; ++e) {
      int64_t rest = e, offset = 0;
      bool inside = true;
      for (size_t d = 0; d < rank; ++d) {
        int64_t i = rest % map.box[d], g = at[d] + i;
        rest /= map.box[d];
        inside &= g >= 0 && g < map.dims[d];
        offset += g * (d == 0 ? map.elementBytes : map.stridesBytes[d - 1]);
      }
      uint64_t logical = dst + e * map.elementBytes;
      uint64_t physical = map.swizzle ? logical ^ (((logical >> 7) & 7) << 4) : logical;
      uint8_t *out = memory(op, ptr3, physical, map.elementBytes, t, true);
      if (inside)
        std::memcpy(out, map.buffer->bytes.data() + offset, map.elementBytes);
      else
        std::memset(out, 0, map.elementBytes);
    }
    return elements * map.elementBytes;
  }

  Bits load(Operation *op, Value ptr, Type type, int64_t t) {
    uint64_t addr = get(op, ptr)[t][0];
    size_t lanes = laneCount(type);
    int64_t bytes = scalarBits(laneType(type, 0)) / 8;
    uint8_t *p = memory(op, ptr.getType(), addr, bytes * lanes, t, false);
    Bits out(lanes, 0);
    for (size_t i = 0; i < lanes; ++i)
      std::memcpy(&out[i], p + i * bytes, bytes);
    return out;
  }
  void store(Operation *op, Value ptr, Value value, int64_t t) {
    uint64_t addr = get(op, ptr)[t][0];
    Type type = value.getType();
    size_t lanes = laneCount(type);
    int64_t bytes = scalarBits(laneType(type, 0)) / 8;
    uint8_t *p = memory(op, ptr.getType(), addr, bytes * lanes, t, true);
    const Bits &v = get(op, value)[t];
    for (size_t i = 0; i < lanes; ++i)
      std::memcpy(p + i * bytes, &v[i], bytes);
  }

  /// One thread's result of a scalar-level op.
  Bits eval(Operation *op, int64_t t) {
    auto in = [&](unsigned i) -> const Bits & { return get(op, op->getOperand(i))[t]; };
    Type rt = op->getNumResults() ? op->getResult(0).getType() : Type();
    auto lanewise = [&](auto f) {
      Bits out(laneCount(rt));
      for (size_t i = 0; i < out.size(); ++i)
        out[i] = f(i, laneType(rt, i));
      return out;
    };
    auto intBinary = [&](auto f) {
      return lanewise([&](size_t i, Type lt) {
        int64_t w = scalarBits(lt);
        return f(in(0)[i] & mask(w), in(1)[i] & mask(w), w) & mask(w);
      });
    };
    auto floatBinary = [&](auto f) {
      return lanewise([&](size_t i, Type lt) {
        if (lt.isF32())
          return floatBits(f(asFloat(in(0)[i]), asFloat(in(1)[i])));
        return fromDouble(lt, f(toDouble(lt, in(0)[i]), toDouble(lt, in(1)[i])));
      });
    };
    auto floatUnary = [&](Value x, auto f) {
      return lanewise([&](size_t i, Type lt) {
        double v = toDouble(laneType(x.getType(), i), get(op, x)[t][i]);
        return fromDouble(lt, f(v));
      });
    };
    using P = arith::CmpIPredicate;
    return llvm::TypeSwitch<Operation *, Bits>(op)
        .Case([&](arith::ConstantOp c) { return constant(op, c.getValue(), rt); })
        .Case([&](LLVM::ConstantOp c) { return constant(op, c.getValue(), rt); })
        .Case<LLVM::UndefOp, LLVM::ZeroOp, LLVM::PoisonOp>([&](Operation *) { return Bits(laneCount(rt), 0); })
        .Case([&](arith::AddIOp) { return intBinary([](uint64_t a, uint64_t b, int64_t) { return a + b; }); })
        .Case([&](arith::SubIOp) { return intBinary([](uint64_t a, uint64_t b, int64_t) { return a - b; }); })
        .Case([&](arith::MulIOp) { return intBinary([](uint64_t a, uint64_t b, int64_t) { return a * b; }); })
        .Case([&](arith::AndIOp) { return intBinary([](uint64_t a, uint64_t b, int64_t) { return a & b; }); })
        .Case([&](arith::OrIOp) { return intBinary([](uint64_t a, uint64_t b, int64_t) { return a | b; }); })
        .Case([&](arith::XOrIOp) { return intBinary([](uint64_t a, uint64_t b, int64_t) { return a ^ b; }); })
        .Case([&](arith::ShLIOp) { return intBinary([](uint64_t a, uint64_t b, int64_t) { return b >= 64 ? 0 : a << b; }); })
        .Case([&](arith::ShRUIOp) { return intBinary([](uint64_t a, uint64_t b, int64_t) { return b >= 64 ? 0 : a >> b; }); })
        .Case([&](arith::ShRSIOp) {
          return intBinary([](uint64_t a, uint64_t b, int64_t w) { return uint64_t(signExtend(a, w) >> std::min<uint64_t>(b, 63)); });
        })
        .Case([&](arith::DivUIOp) {
          return intBinary([&](uint64_t a, uint64_t b, int64_t) { return b ? a / b : (fail(op, "division by zero"), 0); });
        })
        .Case([&](arith::RemUIOp) {
          return intBinary([&](uint64_t a, uint64_t b, int64_t) { return b ? a % b : (fail(op, "division by zero"), 0); });
        })
        .Case([&](arith::DivSIOp) {
          return intBinary([&](uint64_t a, uint64_t b, int64_t w) {
            return b ? uint64_t(signExtend(a, w) / signExtend(b, w)) : (fail(op, "division by zero"), 0);
          });
        })
        .Case([&](arith::RemSIOp) {
          return intBinary([&](uint64_t a, uint64_t b, int64_t w) {
            return b ? uint64_t(signExtend(a, w) % signExtend(b, w)) : (fail(op, "division by zero"), 0);
          });
        })
        .Case([&](arith::CeilDivSIOp) {
          return intBinary([&](uint64_t a, uint64_t b, int64_t w) {
            int64_t x = signExtend(a, w), y = signExtend(b, w);
            if (!y)
              fail(op, "division by zero");
            int64_t q = x / y;
            return uint64_t(q + ((x % y != 0) && ((x < 0) == (y < 0)) ? 1 : 0));
          });
        })
        .Case([&](arith::FloorDivSIOp) {
          return intBinary([&](uint64_t a, uint64_t b, int64_t w) {
            int64_t x = signExtend(a, w), y = signExtend(b, w);
            if (!y)
              fail(op, "division by zero");
            int64_t q = x / y;
            return uint64_t(q - ((x % y != 0) && ((x < 0) != (y < 0)) ? 1 : 0));
          });
        })
        .Case([&](arith::CeilDivUIOp) {
          return intBinary([&](uint64_t a, uint64_t b, int64_t) {
            if (!b)
              fail(op, "division by zero");
            return a / b + (a % b != 0);
          });
        })
        .Case([&](arith::MinSIOp) {
          return intBinary([](uint64_t a, uint64_t b, int64_t w) { return signExtend(a, w) < signExtend(b, w) ? a : b; });
        })
        .Case([&](arith::MaxSIOp) {
          return intBinary([](uint64_t a, uint64_t b, int64_t w) { return signExtend(a, w) > signExtend(b, w) ? a : b; });
        })
        .Case([&](arith::MinUIOp) { return intBinary([](uint64_t a, uint64_t b, int64_t) { return std::min(a, b); }); })
        .Case([&](arith::MaxUIOp) { return intBinary([](uint64_t a, uint64_t b, int64_t) { return std::max(a, b); }); })
        .Case([&](arith::CmpIOp c) {
          Type ot = c.getLhs().getType();
          return lanewise([&](size_t i, Type) -> uint64_t {
            int64_t w = scalarBits(laneType(ot, i));
            uint64_t a = in(0)[i] & mask(w), b = in(1)[i] & mask(w);
            int64_t sa = signExtend(a, w), sb = signExtend(b, w);
            switch (c.getPredicate()) {
            case P::eq: return a == b;
            case P::ne: return a != b;
            case P::slt: return sa < sb;
            case P::sle: return sa <= sb;
            case P::sgt: return sa > sb;
            case P::sge: return sa >= sb;
            case P::ult: return a < b;
            case P::ule: return a <= b;
            case P::ugt: return a > b;
            case P::uge: return a >= b;
            }
            return 0;
          });
        })
        .Case([&](arith::CmpFOp c) {
          Type ot = c.getLhs().getType();
          return lanewise([&](size_t i, Type) -> uint64_t {
            double a = toDouble(laneType(ot, i), in(0)[i]), b = toDouble(laneType(ot, i), in(1)[i]);
            bool unordered = std::isnan(a) || std::isnan(b);
            using F = arith::CmpFPredicate;
            switch (c.getPredicate()) {
            case F::OEQ: return !unordered && a == b;
            case F::ONE: return !unordered && a != b;
            case F::OLT: return !unordered && a < b;
            case F::OLE: return !unordered && a <= b;
            case F::OGT: return !unordered && a > b;
            case F::OGE: return !unordered && a >= b;
            case F::UEQ: return unordered || a == b;
            case F::UNE: return unordered || a != b;
            case F::ULT: return unordered || a < b;
            case F::ULE: return unordered || a <= b;
            case F::UGT: return unordered || a > b;
            case F::UGE: return unordered || a >= b;
            case F::ORD: return !unordered;
            case F::UNO: return unordered;
            case F::AlwaysTrue: return 1;
            case F::AlwaysFalse: return 0;
            }
            return 0;
          });
        })
        .Case([&](arith::SelectOp s) {
          return lanewise([&](size_t i, Type) {
            const Bits &cond = in(0);
            bool pick = cond.size() > 1 ? cond[i] & 1 : cond[0] & 1;
            return pick ? in(1)[i] : in(2)[i];
          });
        })
        .Case<arith::IndexCastOp, arith::ExtSIOp>([&](Operation *) {
          Type from = op->getOperand(0).getType();
          return lanewise([&](size_t i, Type lt) {
            return uint64_t(signExtend(in(0)[i] & mask(scalarBits(laneType(from, i))), scalarBits(laneType(from, i)))) &
                   mask(scalarBits(lt));
          });
        })
        .Case<arith::IndexCastUIOp, arith::ExtUIOp, arith::TruncIOp, LLVM::PtrToIntOp, LLVM::IntToPtrOp,
              LLVM::ZExtOp, LLVM::TruncOp>([&](Operation *) {
          Type from = op->getOperand(0).getType();
          return lanewise([&](size_t i, Type lt) {
            return in(0)[i] & mask(scalarBits(laneType(from, i))) & mask(scalarBits(lt));
          });
        })
        .Case([&](LLVM::SExtOp) {
          Type from = op->getOperand(0).getType();
          return lanewise([&](size_t i, Type lt) {
            int64_t w = scalarBits(laneType(from, i));
            return uint64_t(signExtend(in(0)[i] & mask(w), w)) & mask(scalarBits(lt));
          });
        })
        .Case<arith::AddFOp, LLVM::FAddOp>([&](Operation *) { return floatBinary([](auto a, auto b) { return a + b; }); })
        .Case<arith::SubFOp, LLVM::FSubOp>([&](Operation *) { return floatBinary([](auto a, auto b) { return a - b; }); })
        .Case<arith::MulFOp, LLVM::FMulOp>([&](Operation *) { return floatBinary([](auto a, auto b) { return a * b; }); })
        .Case<arith::DivFOp, LLVM::FDivOp>([&](Operation *) { return floatBinary([](auto a, auto b) { return a / b; }); })
        .Case<arith::MaximumFOp, arith::MaxNumFOp>([&](Operation *) {
          return floatBinary([](auto a, auto b) { return std::isnan(a) ? a : std::isnan(b) ? b : std::max(a, b); });
        })
        .Case<arith::MinimumFOp, arith::MinNumFOp>([&](Operation *) {
          return floatBinary([](auto a, auto b) { return std::isnan(a) ? a : std::isnan(b) ? b : std::min(a, b); });
        })
        .Case<arith::NegFOp, LLVM::FNegOp>([&](Operation *) {
          return lanewise([&](size_t i, Type lt) { return in(0)[i] ^ (1ull << (scalarBits(lt) - 1)); });
        })
        .Case([&](LLVM::FMAOp) {
          return lanewise([&](size_t i, Type lt) {
            if (!lt.isF32())
              fail(op, "fma of a type other than f32");
            return floatBits(std::fma(asFloat(in(0)[i]), asFloat(in(1)[i]), asFloat(in(2)[i])));
          });
        })
        .Case<arith::TruncFOp, arith::ExtFOp, LLVM::FPTruncOp, LLVM::FPExtOp>(
            [&](Operation *) { return floatUnary(op->getOperand(0), [](double v) { return v; }); })
        .Case<arith::SIToFPOp, arith::UIToFPOp>([&](Operation *) {
          Type from = op->getOperand(0).getType();
          return lanewise([&](size_t i, Type lt) {
            int64_t w = scalarBits(laneType(from, i));
            uint64_t v = in(0)[i] & mask(w);
            return fromDouble(lt, isa<arith::SIToFPOp>(op) ? double(signExtend(v, w)) : double(v));
          });
        })
        .Case<arith::FPToSIOp, arith::FPToUIOp>([&](Operation *) {
          Type from = op->getOperand(0).getType();
          return lanewise([&](size_t i, Type lt) {
            double v = std::trunc(toDouble(laneType(from, i), in(0)[i]));
            return (isa<arith::FPToSIOp>(op) ? uint64_t(int64_t(v)) : uint64_t(v)) & mask(scalarBits(lt));
          });
        })
        .Case<LLVM::BitcastOp, arith::BitcastOp>([&](Operation *) { return bitcast(op, in(0), op->getOperand(0).getType(), rt); })
        .Case([&](LLVM::ExtractElementOp e) { return Bits{in(0)[in(1)[0]]}; })
        .Case([&](LLVM::InsertElementOp e) {
          Bits v = in(0);
          uint64_t i = in(2)[0];
          if (i >= v.size())
            fail(op, "insertelement index out of range");
          v[i] = in(1)[0];
          return v;
        })
        .Case([&](LLVM::ExtractValueOp e) {
          if (e.getPosition().size() != 1)
            fail(op, "nested extractvalue is not supported");
          return Bits{in(0)[e.getPosition()[0]]};
        })
        .Case([&](LLVM::InsertValueOp e) {
          if (e.getPosition().size() != 1)
            fail(op, "nested insertvalue is not supported");
          Bits v = in(0);
          v[e.getPosition()[0]] = in(1)[0];
          return v;
        })
        .Case([&](LLVM::AddressOfOp a) {
          if (a.getGlobalName() != "__qla_smem")
            fail(op, "only the kernel's shared memory (@__qla_smem) has an address");
          return Bits{kSmemBase};
        })
        .Case([&](LLVM::GEPOp g) {
          auto indices = g.getIndices();
          if (indices.size() != 1)
            fail(op, "only getelementptr with one index is supported");
          int64_t bits = scalarBits(g.getElemType());
          if (bits < 8)
            fail(op, "getelementptr over an aggregate element type is not supported");
          int64_t index;
          if (auto v = llvm::dyn_cast_if_present<Value>(indices[0])) {
            index = signExtend(get(op, v)[t][0], scalarBits(v.getType()));
          } else {
            index = llvm::cast<IntegerAttr>(llvm::cast<Attribute>(indices[0])).getInt();
          }
          return Bits{in(0)[0] + uint64_t(index * (bits / 8))};
        })
        .Case([&](LLVM::LoadOp l) { return load(op, l.getAddr(), rt, t); })
        .Case([&](LLVM::StoreOp s) {
          store(op, s.getAddr(), s.getValue(), t);
          return Bits{};
        })
        .Case([&](NVVM::ThreadIdXOp) { return Bits{uint64_t(t)}; })
        .Case<NVVM::ThreadIdYOp, NVVM::ThreadIdZOp>([&](Operation *) { return Bits{0}; })
        .Case([&](NVVM::BlockIdXOp) { return Bits{uint64_t(blockIdx_[0])}; })
        .Case([&](NVVM::BlockIdYOp) { return Bits{uint64_t(blockIdx_[1])}; })
        .Case([&](NVVM::BlockIdZOp) { return Bits{uint64_t(blockIdx_[2])}; })
        .Case([&](NVVM::CpAsyncOp c) {
          // cp.async: `size` bytes, of which the first cpSize (all without it) from global, the rest zeros.
          int64_t size = c.getSize(), from = c.getCpSize() ? int64_t(get(op, c.getCpSize())[t][0]) : size;
          uint8_t *dst = memory(op, c.getDst().getType(), get(op, c.getDst())[t][0], size, t, true);
          std::memset(dst, 0, size);
          if (from > 0)
            std::memcpy(dst, memory(op, c.getSrc().getType(), get(op, c.getSrc())[t][0], from, t, false), from);
          return Bits{};
        })
        .Case<LLVM::LogOp, LLVM::Log2Op, LLVM::ExpOp, LLVM::SqrtOp, LLVM::FAbsOp>([&](Operation *) {
          return lanewise([&](size_t i, Type lt) {
            if (!lt.isF32())
              fail(op, "math of a type other than f32");
            float x = asFloat(in(0)[i]);
            float r = isa<LLVM::LogOp>(op)    ? std::log(x)
                      : isa<LLVM::Log2Op>(op) ? std::log2(x)
                      : isa<LLVM::ExpOp>(op)  ? std::exp(x)
                      : isa<LLVM::SqrtOp>(op) ? std::sqrt(x)
                                              : std::fabs(x);
            return floatBits(r);
          });
        })
        .Case<LLVM::MaxNumOp, LLVM::MinNumOp>([&](Operation *) {
          return floatBinary([&](auto a, auto b) {
            if (std::isnan(a))
              return b;
            if (std::isnan(b))
              return a;
            return isa<LLVM::MaxNumOp>(op) ? std::max(a, b) : std::min(a, b);
          });
        })
        .Case([&](LLVM::Exp2Op) {
          return lanewise([&](size_t i, Type lt) {
            if (!lt.isF32())
              fail(op, "exp2 of a type other than f32");
            return floatBits(std::exp2(asFloat(in(0)[i])));
          });
        })
        .Case([&](LLVM::CallIntrinsicOp c) {
          // The unary f32 approximations of the math lowering, as exact f32 math (the GPU's approximations
          // are within a few ulps of it).
          static const std::map<std::string, float (*)(float)> unary = {
              {"llvm.nvvm.lg2.approx.f", [](float x) { return std::log2(x); }},
              {"llvm.nvvm.lg2.approx.ftz.f", [](float x) { return std::log2(x); }},
              {"llvm.nvvm.ex2.approx.f", [](float x) { return std::exp2(x); }},
              {"llvm.nvvm.ex2.approx.ftz.f", [](float x) { return std::exp2(x); }},
              {"llvm.nvvm.rsqrt.approx.f", [](float x) { return 1.0f / std::sqrt(x); }},
              {"llvm.nvvm.rsqrt.approx.ftz.f", [](float x) { return 1.0f / std::sqrt(x); }},
              {"llvm.nvvm.sqrt.approx.f", [](float x) { return std::sqrt(x); }},
              {"llvm.nvvm.rcp.approx.ftz.f", [](float x) { return 1.0f / x; }},
              {"llvm.nvvm.tanh.approx.f32", [](float x) { return std::tanh(x); }}};
          if (auto f = unary.find(c.getIntrin().str()); f != unary.end())
            return Bits{floatBits(f->second(asFloat(in(0)[0])))};
          // cvt.rn.{bf16x2,f16x2}.f32 d, a, b: a in the upper half, b in the lower.
          Type half;
          if (c.getIntrin() == "llvm.nvvm.ff2bf16x2.rn")
            half = BFloat16Type::get(op->getContext());
          else if (c.getIntrin() == "llvm.nvvm.ff2f16x2.rn")
            half = Float16Type::get(op->getContext());
          else
            fail(op, "intrinsic not supported: " + c.getIntrin().str());
          return Bits{fromDouble(half, asFloat(in(1)[0])), fromDouble(half, asFloat(in(0)[0]))};
        })
        .Case([&](NVVM::BlockDimXOp) { return Bits{uint64_t(threads_)}; })
        .Case<NVVM::BlockDimYOp, NVVM::BlockDimZOp>([&](Operation *) { return Bits{1}; })
        .Case([&](LLVM::InlineAsmOp a) { return inlineAsm(a, t); })
        .Case([&](nvgpu::MBarrierGetOp g) { return Bits{mbarrierAddress(op, g.getBarriers(), g.getMbarId(), t)}; })
        .Case([&](LLVM::AddrSpaceCastOp) { return in(0); })
        .Default([&](Operation *) -> Bits { fail(op, "not supported by the SIMT simulator"); });
  }

  Bits constant(Operation *op, Attribute value, Type rt) {
    if (auto i = dyn_cast<IntegerAttr>(value))
      return Bits{i.getValue().getZExtValue() & mask(scalarBits(laneType(rt, 0)))};
    if (auto f = dyn_cast<FloatAttr>(value))
      return Bits{f.getValue().bitcastToAPInt().getZExtValue()};
    if (auto d = dyn_cast<DenseElementsAttr>(value)) {
      Bits out;
      if (isa<FloatType>(d.getElementType()))
        for (llvm::APFloat f : d.getValues<llvm::APFloat>())
          out.push_back(f.bitcastToAPInt().getZExtValue());
      else
        for (llvm::APInt i : d.getValues<llvm::APInt>())
          out.push_back(i.getZExtValue());
      return out;
    }
    fail(op, "constant of an unsupported kind");
  }

  /// The bits of `from`'s lanes, reread as `to`'s (little-endian: lane 0 in the low bits).
  Bits bitcast(Operation *op, const Bits &in, Type from, Type to) {
    llvm::APInt all(std::max<int64_t>(laneCount(from) * scalarBits(laneType(from, 0)), 1), 0);
    int64_t w = scalarBits(laneType(from, 0)), pos = 0;
    for (size_t i = 0; i < laneCount(from); ++i, pos += w)
      all.insertBits(llvm::APInt(w, in[i] & mask(w)), pos);
    int64_t tw = scalarBits(laneType(to, 0));
    if (int64_t(laneCount(to)) * tw != all.getBitWidth())
      fail(op, "bitcast between types of different sizes");
    Bits out;
    for (size_t i = 0; i < laneCount(to); ++i)
      out.push_back(all.extractBits(tw, i * tw).getZExtValue());
    return out;
  }

  /// The predicated global loads the copies lower to ("@p ld.global[.vN].bW {...}, [addr]" after
  /// setp.ne on the last operand); other inline assembly is not supported.
  Bits inlineAsm(LLVM::InlineAsmOp a, int64_t t) {
    if (a.getAsmString() == "mov.b32 $0, $1;") // an opaque copy (the lowering's per-iteration reads)
      return get(a, a.getOperands()[0])[t];
    static const std::regex load(R"(setp\.ne\.b32 p, \$(\d+), 0;.*@p ld\.global(\.v(\d))?\.b(\d+) \{?[^\[]*\[\$(\d+)\])");
    std::smatch m;
    std::string text = a.getAsmString().str();
    if (!std::regex_search(text, m, load))
      fail(a, "inline assembly not supported: " + text);
    int64_t lanes = m[3].matched ? std::stoi(m[3]) : 1, bits = std::stoi(m[4]);
    auto operand = [&](int64_t i) { return get(a, a.getOperands()[i - lanes])[t][0]; };
    Bits out(lanes, 0);
    if (operand(std::stoi(m[1])) != 0) {
      uint64_t addr = operand(std::stoi(m[5]));
      auto ptrType = LLVM::LLVMPointerType::get(a.getContext(), 1);
      uint8_t *p = memory(a, ptrType, addr, lanes * bits / 8, t, false);
      for (int64_t i = 0; i < lanes; ++i)
        std::memcpy(&out[i], p + i * bits / 8, bits / 8);
    }
    return out;
  }

  struct Access {
    int64_t writer = -1, reader = -1, writeClock = 0, readClock = 0;
  };

  int64_t threads_;
  std::vector<uint8_t> smem_;
  std::array<int64_t, 3> blockIdx_;
  std::vector<Access> access_;
  std::vector<Buffer *> globals_;
  struct ValueHash {
    size_t operator()(Value v) const { return hash_value(v); }
  };
  std::unordered_map<Value, PerThread, ValueHash> env_; // node-based: references survive other contexts' inserts
  std::set<std::pair<Operation *, std::string>> hazards_;
  std::vector<std::vector<int64_t>> clocks_; // clocks_[t][u]: what thread t has seen of thread u
  std::map<uint64_t, Mbarrier> mbarriers_;
  std::map<uint64_t, TensorMap *> maps_;
  std::map<Operation *, int64_t> groups_;
  std::map<int64_t, Meeting> meetings_;        // barriers with arrivals pending, by id (-1: the block's)
  std::map<int64_t, int64_t> meetingsDone_;    // completions of each barrier so far
  // The contexts (qla/Simt/Simt.h: one a warpgroup) and the hand-over between them.
  int64_t lo_ = 0, hi_ = 0; // the running context's threads
  std::mutex mutex_;
  std::condition_variable cv_;
  int64_t current_ = -1, progress_ = 0;
  std::vector<char> ready_, done_;
  std::vector<int64_t> seen_;
  bool aborted_ = false;
  Report report_;
};

} // namespace

Report simulateBlock(func::FuncOp kernel, int64_t threads, int64_t smemBytes, std::vector<Arg> args,
                     std::array<int64_t, 3> blockIdx) {
  Simulator sim(threads, smemBytes, blockIdx);
  return sim.run(kernel, args);
}

} // namespace qla::simt
