// The SIMT simulator's internals (qla/Simt/Simt.h), shared by its files: values per thread, the
// Simulator (one block: its execution contexts, memory, synchronisation, warp-wide ops and scalar ops).
#ifndef QLA_LIB_SIMT_SIMULATOR_H
#define QLA_LIB_SIMT_SIMULATOR_H

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
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <thread>
#include <unordered_map>

namespace qla::simt::detail {

using namespace mlir;

using Bits = llvm::SmallVector<uint64_t, 4>; // one thread's value: scalar, vector elements or struct fields
using PerThread = std::vector<Bits>;

// Shared memory's addresses: small (a wgmma descriptor keeps 18 bits of them) and 1024-aligned.
inline constexpr uint64_t kSmemBase = 1024;
inline constexpr uint64_t kMbarrierBase = 1ull << 40; // mbarriers (not memory the code reads): group · 4096 + 8 · index
inline constexpr uint64_t kTensorMapBase = 1ull << 41; // tensor-map parameters: 256 · parameter index

inline int64_t scalarBits(Type t) {
  if (t.isIndex() || isa<LLVM::LLVMPointerType>(t))
    return 64;
  if (auto i = dyn_cast<IntegerType>(t))
    return i.getWidth();
  if (auto f = dyn_cast<FloatType>(t))
    return f.getWidth();
  return -1;
}

/// The scalar type of lane `i` of a value of type `t` (a scalar, vector element or struct field).
inline Type laneType(Type t, size_t i) {
  if (auto v = dyn_cast<VectorType>(t))
    return v.getElementType();
  if (auto s = dyn_cast<LLVM::LLVMStructType>(t))
    return s.getBody()[i];
  return t;
}
inline size_t laneCount(Type t) {
  if (auto v = dyn_cast<VectorType>(t))
    return v.getNumElements();
  if (auto s = dyn_cast<LLVM::LLVMStructType>(t))
    return s.getBody().size();
  return 1;
}
inline uint64_t mask(int64_t bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }
inline int64_t signExtend(uint64_t v, int64_t bits) {
  return bits >= 64 ? static_cast<int64_t>(v) : static_cast<int64_t>(v << (64 - bits)) >> (64 - bits);
}

inline const llvm::fltSemantics &semantics(Type t) {
  if (t.isF16())
    return llvm::APFloat::IEEEhalf();
  if (t.isBF16())
    return llvm::APFloat::BFloat();
  if (t.isF64())
    return llvm::APFloat::IEEEdouble();
  return llvm::APFloat::IEEEsingle();
}
inline double toDouble(Type t, uint64_t bits) {
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
inline uint64_t fromDouble(Type t, double v) {
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
inline float asFloat(uint64_t bits) {
  float f;
  uint32_t b = static_cast<uint32_t>(bits);
  std::memcpy(&f, &b, 4);
  return f;
}
inline uint64_t floatBits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

inline std::string describe(Operation *op) {
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

  Report run(func::FuncOp kernel, const std::vector<Arg> &args);

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
  void takeBaton(int64_t c);
  /// Gives the baton to the next context that has not finished (none left: nobody).
  void handOver(int64_t c, std::unique_lock<std::mutex> &);
  /// Waits (letting the other contexts run) until `condition` holds. All contexts waiting with nothing
  /// changed since each last looked is a deadlock: an error.
  void waitUntil(Operation *op, const std::function<bool()> &condition, const std::string &what);
  const PerThread &get(Operation *op, Value v) {
    auto it = env_.find(v);
    if (it == env_.end())
      fail(op, "operand has no value (defined in a region that did not run?)");
    return it->second;
  }

  /// Runs a block's ops for the threads in `active`; returns the operands of its terminator (yield).
  std::vector<PerThread> runBlock(Block &block, const std::vector<char> &active);

  void step(Operation *op, const std::vector<char> &active);

  void runIf(scf::IfOp op, const std::vector<char> &active);
  std::vector<PerThread> runBranch(Operation *op, Region &region, const std::vector<char> &mask);

  /// Each thread runs its own trip count (bounds may differ between threads: iteration k runs for the
  /// threads that have a k-th trip, with their own induction values).
  void runFor(scf::ForOp op, const std::vector<char> &active);

  /// mma.sync m16n8k16, row-major A and column-major B of f16, f32 C and D: each warp's 32 lanes
  /// together (PTX ISA's fragment layouts; the lower half of an f16x2 register is the lower index).
  void runMma(NVVM::MmaOp op, const std::vector<char> &active);

  /// The warpgroups of 128 threads that run a warpgroup-wide op: all their threads active, or none.
  std::vector<int64_t> warpgroups(Operation *op, const std::vector<char> &active);

  /// A wgmma operand (`rows` of M or N, 16 of K) from shared memory through its descriptor, with the
  /// 128-byte swizzle: every address's 16-byte chunk (bits 4-6) XORed with its bits 7-9. K-major: row r
  /// at start + (r / 8)·SBO + (r % 8)·128, its K elements from there. MN-major: K row k at
  /// start + (k / 8)·SBO + (k % 8)·128, element r at 2r there (+ LBO for each further 64 of them).
  std::vector<double> wgmmaOperand(Operation *op, uint64_t desc, int64_t rows, bool mnMajor, Type elt, int64_t t);

  /// D = A·B (+ C) for one warpgroup, m64nNk16, into the wgmma accumulator fragment (warp w: rows
  /// 16w + l/4 (+8); n-group j: columns 8j + 2(l%4) (+1)).
  void wgmmaProduct(int64_t wg, int64_t n, const std::vector<double> &a, const std::vector<double> &b,
                    const PerThread *acc, PerThread &out);

  /// wgmma.mma_async m64nNk16 (nvvm op): A and B from shared memory (bf16 or f16, either major-ness),
  /// f32 accumulators.
  void runWgmma(NVVM::WgmmaMmaAsyncOp op, const std::vector<char> &active);

  /// The register-A wgmma of the lowering's inline assembly: "{accumulators}, {a0..a3}, descB, p, 1, 1,
  /// tnspB" with p = (scale-d operand != 0); A's four f16x2/bf16x2 registers a thread hold its warp's rows
  /// 16w + l/4 (+8), columns 2(l%4) (+1) (+8), as mma.sync's A.
  bool runWgmmaAsm(LLVM::InlineAsmOp op, const std::vector<char> &active);

  /// stmatrix m8n8 b16 (.x1/.x2/.x4, .trans for the col layout), per warp: lane 8i + r gives the address
  /// of row r of matrix i; register i of lane l holds that matrix's (l/4, 2(l%4) .. +1). Transposed, the
  /// row at lane 8i + r's address is column r of the fragment.
  void runStmatrix(NVVM::StMatrixOp op, const std::vector<char> &active);

  void runShuffle(NVVM::ShflOp op, const std::vector<char> &active);

  /// The host bytes at `addr` for an access of `size` bytes by thread `t` (bounds, alignment and,
  /// in shared memory, hazards checked).
  uint8_t *memory(Operation *op, Type ptrType, uint64_t addr, int64_t size, int64_t t, bool write);

  /// Race tracking of one shared-memory byte by vector clocks: thread t has seen thread w's access made
  /// at w's clock c once clocks_[t][w] > c (a barrier, or an mbarrier phase, ordered them). A write
  /// that another thread's access has not seen, or a read not seen by a later writer, is a hazard.
  void track(Operation *op, uint64_t byte, int64_t t, bool write);

  /// The threads `group` meet: each advances its own clock, then all know what any of them knew.
  void synchronize(const std::vector<int64_t> &group);

  /// bar.sync / bar.arrive id, count: the active threads arrive at barrier `id` (by thread); it completes
  /// when `count` threads have arrived. Syncing threads wait for that; arriving ones go on.
  template <typename BarOp> void runNamedBarrier(BarOp op, const std::vector<char> &active);

  struct Meeting {
    int64_t count = 0, expected = 0, generation = 0; // expected: arrivals still missing
    std::vector<int64_t> syncers;               // threads that wait for the completion
    std::vector<int64_t> joined;                // the arrivals' clocks so far
  };
  /// The running context's threads in `members` arrive at barrier `id` (-1: the block barrier) of `count`
  /// threads; with `waits` they wait for its completion, then know what every arrival knew.
  void meet(Operation *op, int64_t id, int64_t count, const std::vector<char> &members, bool waits);

  struct Mbarrier {
    int64_t count = -1, pending = 0, tx = 0, phase = 0;
    std::vector<int64_t> release, completed[2]; // the arrivals' clocks this phase; each parity's last completion
  };

  uint64_t mbarrierAddress(Operation *op, Value group, Value index, int64_t t);
  Mbarrier &mbarrier(Operation *op, uint64_t address);
  /// Thread t releases into the mbarrier's phase: its clock advances, the phase learns what t knew.
  void release(Mbarrier &m, int64_t t);
  void completeIfDone(Mbarrier &m);

  /// mbarrier init / arrive / arrive.expect_tx / try_wait.parity (nvgpu), and TMA tile loads, which
  /// complete at once: their bytes land in shared memory and count off the mbarrier's expected ones.
  void runMbarrierOp(Operation *op, const std::vector<char> &active);

  /// One TMA tile load by thread t: the box at the coordinates (innermost first) into shared memory,
  /// row-major, 128-byte swizzled when the map says so (the same address XOR as wgmma's); zeros for
  /// elements outside the tensor. Returns the bytes written.
  int64_t tmaLoad(NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp op, int64_t t);

  Bits load(Operation *op, Value ptr, Type type, int64_t t);
  void store(Operation *op, Value ptr, Value value, int64_t t);

  /// One thread's result of a scalar-level op.
  Bits eval(Operation *op, int64_t t);

  Bits constant(Operation *op, Attribute value, Type rt);

  /// The bits of `from`'s lanes, reread as `to`'s (little-endian: lane 0 in the low bits).
  Bits bitcast(Operation *op, const Bits &in, Type from, Type to);

  /// The predicated global loads the copies lower to ("@p ld.global[.vN].bW {...}, [addr]" after
  /// setp.ne on the last operand); other inline assembly is not supported.
  Bits inlineAsm(LLVM::InlineAsmOp a, int64_t t);

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

} // namespace qla::simt::detail

#endif
