// The QLA tile DSL: C++ that builds qla-dialect IR. No MLIR in this header; values are handles.
//
//   qla::dsl::Kernel k("gemm");
//   auto A = k.tensor("A", {M, K}, DType::bf16);
//   ...
//   auto acc = k.loop(0, K / BK, 1, /*stages=*/4, {k.fill({BM, BN}, DType::f32, 0.0)},
//                     [&](Index kt, Tiles acc) { ... return Tiles{k.gemm(a, b, acc[0], true)}; });
//
// Every call records its C++ source location, so verifier and pass errors point at the DSL line.
#ifndef QLA_DSL_KERNEL_H
#define QLA_DSL_KERNEL_H

#include "qla/Interpreter/HostTensor.h"
#include "qla/runtime/CompiledKernel.h"
#include "qla/runtime/DType.h"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <source_location>
#include <string>
#include <vector>

namespace qla::dsl {

using qla::DType;
using Loc = std::source_location;
class Kernel;

/// An index value (loop variable, block id, offset arithmetic).
class Index {
public:
  Index(int64_t constant); // NOLINT: constants convert implicitly
  Index operator+(const Index &o) const;
  Index operator-(const Index &o) const;
  Index operator*(const Index &o) const;
  Index operator/(const Index &o) const;

private:
  friend class Kernel;
  friend Index combine(const Index &a, const Index &b, char op);
  Index(Kernel *k, void *v) : kernel_(k), value_(v) {}
  Kernel *kernel_ = nullptr;
  void *value_ = nullptr;
  int64_t constant_ = 0;
};

/// A scalar inside qla.map bodies (or loaded from a tensor): floats, integers, booleans.
/// Plain numbers convert implicitly and take the type of the other operand.
class Scalar {
public:
  Scalar(double constant); // NOLINT
  Scalar(int constant) : Scalar(static_cast<double>(constant)) {} // NOLINT
  friend Scalar operator+(const Scalar &a, const Scalar &b);
  friend Scalar operator-(const Scalar &a, const Scalar &b);
  friend Scalar operator*(const Scalar &a, const Scalar &b);
  friend Scalar operator/(const Scalar &a, const Scalar &b);
  friend Scalar operator-(const Scalar &a);
  friend Scalar operator<(const Scalar &a, const Scalar &b);
  friend Scalar operator<=(const Scalar &a, const Scalar &b);
  friend Scalar operator>(const Scalar &a, const Scalar &b);
  friend Scalar operator>=(const Scalar &a, const Scalar &b);
  friend Scalar operator==(const Scalar &a, const Scalar &b);
  friend Scalar operator&&(const Scalar &a, const Scalar &b);
  friend Scalar exp(const Scalar &x);
  friend Scalar exp2(const Scalar &x);
  friend Scalar log(const Scalar &x);
  friend Scalar log1p(const Scalar &x);
  friend Scalar sqrt(const Scalar &x);
  friend Scalar rsqrt(const Scalar &x);
  friend Scalar max(const Scalar &a, const Scalar &b);
  friend Scalar min(const Scalar &a, const Scalar &b);
  friend Scalar select(const Scalar &cond, const Scalar &a, const Scalar &b);
  /// Conversion to another float type (or int -> float).
  Scalar to(DType t) const;

private:
  friend class Kernel;
  friend Scalar scalarBinary(const Scalar &a, const Scalar &b, int op);
  friend Scalar scalarUnary(const Scalar &x, int op);
  Scalar(Kernel *k, void *v) : kernel_(k), value_(v) {}
  Kernel *kernel_ = nullptr;
  void *value_ = nullptr;
  double constant_ = 0;
};
using Scalars = std::vector<Scalar>;

enum class Reduce { add, max };

/// Which gemm operands are transposed: Aᵀ (A stored K x M), Bᵀ (B stored N x K).
struct Transpose {
  bool a = false;
  bool b = false;
};

/// A global tensor (a kernel argument).
struct Tensor {
  Kernel *kernel;
  void *value;
  std::string name;
  std::vector<int64_t> shape;
  DType dtype;
};

/// A tile in shared memory or in registers.
struct Tile {
  Kernel *kernel;
  void *value;
  std::vector<int64_t> shape;
  DType dtype;
  bool shared;
};
using Tiles = std::vector<Tile>;

/// Compiled form of a kernel.
struct CompiledPtx {
  std::string ptx;
  std::string manifestJson; // ABI, launch shape, shared memory; see docs/cache.md
  std::string entry;
  std::vector<std::string> remarks; // what the compiler declined to do, and why
  double seconds = 0;               // DSL IR -> PTX
};

struct CompileOptions {
  std::string ptxFeatures = "+ptx80";
  std::string dumpAfter;   // a pass name: `dump` receives the IR after it
  std::string dumpDir;     // the IR after every pass, one file each
  std::string *dump = nullptr;
};

class Kernel {
public:
  explicit Kernel(std::string name, Loc loc = Loc::current());
  ~Kernel();
  Kernel(const Kernel &) = delete;
  Kernel &operator=(const Kernel &) = delete;

  const std::string &name() const { return name_; }

  /// A tensor argument; -1 marks a dimension known only at launch (read it with dim()).
  Tensor tensor(std::string name, std::vector<int64_t> shape, DType dtype, Loc loc = Loc::current());
  Index dim(const Tensor &t, int d, Loc loc = Loc::current());
  /// One element of an integer tensor, as an index (e.g. cu_seqlens[n]).
  Index loadIndex(const Tensor &t, std::vector<Index> indices, Loc loc = Loc::current());
  /// One element of a floating-point tensor.
  Scalar loadScalar(const Tensor &t, std::vector<Index> indices, Loc loc = Loc::current());
  /// Blocks of the launch; -1 for a dimension given at launch (e.g. the number of sequences).
  void grid(int64_t x, int64_t y = 1, int64_t z = 1);
  void threads(int64_t n, Loc loc = Loc::current());
  /// Asks that `n` blocks fit on one SM at once: ptxas caps the registers a thread to make room
  /// (spilling if it must). For latency-bound kernels that need more blocks in flight.
  void minBlocksPerSM(int64_t n, Loc loc = Loc::current());
  /// Programmatic dependent launch: the kernel starts by waiting for the grids before it on the
  /// stream, so its launch may overlap their tail (the manifest says so; the runtime launches it with
  /// programmatic stream serialization).
  void dependentLaunch();
  /// Broadcasts into accumulator fragments read vectors laid out like the rows or columns they fill
  /// (#qla.acc_slice: each thread loads and computes its own) instead of exchanging them through shared
  /// memory (two block barriers each). More registers and loads, fewer barriers.
  void sliceBroadcasts();
  /// The warpgroups of a block without roles exchange on their own: round-robin fragments are held by
  /// each warpgroup, and their broadcasts and the staged stores of accumulator fragments in loops wait
  /// on a barrier of one warpgroup (in scratch of their own), so no block barrier holds the warpgroups
  /// in step.
  void warpgroupLocal();
  /// The warpgroups of a block without roles take turns at issuing the gemm groups of its loops
  /// (qla-order-warpgroups: one's tensor-core work beside the others' conversions).
  void warpgroupTurns();
  /// Warp specialization: the kernel's roles, in warpgroup order (this sets threads()). A role's
  /// `registers` is its setmaxnreg budget (0: none); a `producer` role issues the loads.
  struct Role {
    std::string name;
    int64_t warpgroups = 1;
    int64_t registers = 0;
    bool producer = false;
  };
  void roles(const std::vector<Role> &roles, Loc loc = Loc::current());
  /// Ops built inside `body` run in role `name` (qla.role); ops built outside any role get one from
  /// qla-assign-roles.
  void inRole(const std::string &name, const std::function<void()> &body, Loc loc = Loc::current());

  Index blockId(int dim, Loc loc = Loc::current());
  /// A box of `src` into shared memory. Elements past the tensor's end, or at or past `bounds`
  /// (exclusive limits in tensor coordinates, one per dimension, or none), read as zero.
  Tile copy(const Tensor &src, std::vector<Index> offsets, std::vector<int64_t> tileShape,
            std::vector<Index> bounds = {}, Loc loc = Loc::current());
  /// As copy, into registers.
  Tile load(const Tensor &src, std::vector<Index> offsets, std::vector<int64_t> tileShape,
            std::vector<Index> bounds = {}, Loc loc = Loc::current());
  /// Brings the lines of a box of `src` into L2 (each element's line, inside `bounds`), for a load
  /// of a later iteration that no copy brings: a strided column, one element a line. No result.
  void prefetch(const Tensor &src, std::vector<Index> offsets, std::vector<int64_t> boxShape,
                std::vector<Index> bounds = {}, Loc loc = Loc::current());
  /// As load, transposed (2-D): element (i, j) of the tile is element (offsets[0] + j, offsets[1] + i)
  /// of `src`, so the box read is tileShape swapped.
  Tile loadTransposed(const Tensor &src, std::vector<Index> offsets, std::vector<int64_t> tileShape,
                      std::vector<Index> bounds = {}, Loc loc = Loc::current());
  /// A box of a shared tile (a copy's) into registers: element (i, j) is element (offsets[0] + i,
  /// offsets[1] + j) of `smem`, or with `transpose` (2-D) (offsets[0] + j, offsets[1] + i). The box must lie
  /// inside the tile. For data a pipelined copy brings that elementwise code needs.
  Tile read(const Tile &smem, std::vector<Index> offsets, std::vector<int64_t> shape, bool transpose = false,
            Loc loc = Loc::current());
  /// One element of a shared tile, read by every thread.
  Scalar readScalar(const Tile &smem, std::vector<Index> indices, Loc loc = Loc::current());
  Index min(Index a, Index b);
  /// An index as an i32 scalar, for comparisons inside map bodies (e.g. with iota).
  Scalar scalar(Index i);
  Tile fill(std::vector<int64_t> shape, DType dtype, double value, Loc loc = Loc::current());
  Tile gemm(const Tile &a, const Tile &b, const Tile &acc, Transpose t, Loc loc = Loc::current());
  /// acc + op(A)·op(B) summed over the listed 16-wide slices of K only (increasing): for operands known
  /// to be zero outside them (block-triangular factors), so the tensor cores skip the other k-steps.
  Tile gemm(const Tile &a, const Tile &b, const Tile &acc, Transpose t, std::vector<int64_t> kSlices,
            Loc loc = Loc::current());
  /// Elementwise: f receives one Scalar per input element and returns the result element.
  Tile map(const Tiles &inputs, DType result, const std::function<Scalar(const Scalars &)> &f,
           Loc loc = Loc::current());
  /// Each element's index along `dim` (i32), for masks.
  Tile iota(std::vector<int64_t> shape, int64_t dim, Loc loc = Loc::current());
  /// `t` repeated along new dimensions; dims[i] is the result dimension of t's dimension i.
  Tile broadcast(const Tile &t, std::vector<int64_t> shape, std::vector<int64_t> dims, Loc loc = Loc::current());
  Tile reduce(const Tile &t, int64_t dim, Reduce kind, Loc loc = Loc::current());
  Tile cumsum(const Tile &t, int64_t dim, Loc loc = Loc::current());
  /// A register fragment written to shared memory (e.g. to be a gemm operand).
  Tile share(const Tile &t, Loc loc = Loc::current());
  /// A fragment parked in shared memory by its own threads (qla.stash: 16-byte pieces, no barrier to read
  /// it back), freeing its registers until unstash() brings it back into the same layout.
  Tile stash(const Tile &t, Loc loc = Loc::current());
  Tile unstash(const Tile &stashed, Loc loc = Loc::current());
  /// (I + StrictLower(t))^-1 of a square fragment.
  /// With `block` > 0, only the diagonal blocks of that size, each on its own (zero elsewhere).
  Tile triInverse(const Tile &t, int64_t block = 0, Loc loc = Loc::current());
  /// With `f16Merges` (a 64x64 f32 tile, block = 0): the whole inverse inside the warps of the warpgroup
  /// holding it, the diagonal blocks' merges on mma.sync with f16 operands (qla.tri_inverse f16_merges).
  Tile triInverse(const Tile &t, int64_t block, bool f16Merges, Loc loc = Loc::current());
  /// Elementwise conversion of a fragment to another dtype.
  Tile cast(const Tile &t, DType to, Loc loc = Loc::current());
  /// Elements past the tensor's end or at or past `bounds` are not written.
  void store(const Tile &t, const Tensor &dst, std::vector<Index> offsets, std::vector<Index> bounds = {},
             Loc loc = Loc::current());
  /// As store, transposed (2-D): element (i, j) of `t` goes to (offsets[0] + j, offsets[1] + i).
  void storeTransposed(const Tile &t, const Tensor &dst, std::vector<Index> offsets, std::vector<Index> bounds = {},
                       Loc loc = Loc::current());
  /// for i in [lb, ub) step `step`, carrying `carried`; with stages >= 2 its copies are pipelined.
  Tiles loop(Index lb, Index ub, Index step, int64_t stages, Tiles carried,
             const std::function<Tiles(Index, const Tiles &)> &body, Loc loc = Loc::current());
  /// A loop that carries one state through an affine map, H ↦ M_c·H + U_c (a gated linear recurrence),
  /// declared so that qla-context-split can cut it into segments: `inputTerms` names the tensors whose
  /// reads make up U_c. The initial state should be loaded from a tensor (its place there is what the
  /// transition run's identity takes).
  Tile scan(Index lb, Index ub, int64_t stages, const Tile &state, std::vector<std::string> inputTerms,
            const std::function<Tile(Index, const Tile &)> &body, Loc loc = Loc::current());

  /// Inside a scan's body: declares `logDecay` (a computed f32 scalar, ≤ 0) as the iteration's summed
  /// log-decay — how fast the state's past fades (the truncated context split's windows). Returns it.
  Scalar scanDecay(const Scalar &logDecay, Loc loc = Loc::current());

  /// The kernel's tile IR, as text.
  std::string ir() const;
  /// Structural hash of the tile IR (value names and source locations do not change it).
  std::string structuralHash() const;
  /// Makes this the state-only form of the kernel, in place: the stores inside loops that carry values
  /// go, with everything that only fed them (qla-drop-loop-outputs; the segment kernel of a context
  /// split, docs/context-split.md). Throws qla::Error if the pass fails.
  void dropLoopOutputs();
  /// One run of the context split (qla-context-split, docs/context-split.md), in place, over the kernel's
  /// scan: "ends" (from a zero state) or "transition" (from the identity, the input terms zero); both
  /// keep only the final state and take a new tensor `run_chunks` (i64, one entry per state of the
  /// initial-state tensor) giving how many of the last iterations to run; "decays" writes each
  /// iteration's declared log-decay (scanDecay) to a new tensor `decays` ([state][iteration], f32, or
  /// with decayColumns = n > 1 [state / n][iteration][state % n]) and nothing else. Throws qla::Error if
  /// it fails.
  void contextSplitRun(const std::string &form, int64_t decayColumns = 1);
  /// Runs the compiler pipeline and NVPTX; throws qla::Error with the DSL line on failure.
  CompiledPtx compile(const CompileOptions &options = {}) const;
  /// Runs the tile program on the CPU (one argument per tensor, in declaration order); throws
  /// qla::Error with the DSL line of the failing op.
  void interpret(const std::vector<HostTensor *> &args, std::array<int64_t, 3> grid = {0, 0, 0}) const;
  /// Like interpret(), but the kernel as the GPU would run it: lowered by the pipeline and run on the CPU's
  /// SIMT simulator (docs/simt.md), block after block, the tensors converted to and from their dtypes.
  /// Throws qla::Error on a lowering failure, an out-of-bounds access, a deadlock or a shared-memory race.
  void simulate(const std::vector<HostTensor *> &args, std::array<int64_t, 3> grid = {0, 0, 0}) const;
  /// JIT launch on the GPU: the first call takes the kernel from the disk cache (or compiles and
  /// publishes it) and loads it; later calls only validate the arguments and launch.
  void launch(const std::vector<TensorArg> &tensors, CUstream stream = nullptr);

  struct Impl;

private:
  friend Index combine(const Index &a, const Index &b, char op);
  friend class Scalar;
  friend Scalar scalarBinary(const Scalar &a, const Scalar &b, int op);
  friend Scalar scalarUnary(const Scalar &x, int op);
  friend Scalar select(const Scalar &cond, const Scalar &a, const Scalar &b);
  Index indexOp(const Index &a, const Index &b, char op);
  void *scalarValue(const Scalar &s, void *typeLike);
  void *materialize(const Index &i);
  void storeTile(const Tile &t, const Tensor &dst, std::vector<Index> offsets, std::vector<Index> bounds,
                 bool transpose, Loc loc);
  std::string name_;
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<CompiledKernel> loaded_;
};

} // namespace qla::dsl

#endif
