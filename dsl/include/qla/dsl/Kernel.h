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

  Tensor tensor(std::string name, std::vector<int64_t> shape, DType dtype, Loc loc = Loc::current());
  void grid(int64_t x, int64_t y = 1, int64_t z = 1);
  void threads(int64_t n, Loc loc = Loc::current());

  Index blockId(int dim, Loc loc = Loc::current());
  Tile copy(const Tensor &src, std::vector<Index> offsets, std::vector<int64_t> tileShape,
            Loc loc = Loc::current());
  Tile fill(std::vector<int64_t> shape, DType dtype, double value, Loc loc = Loc::current());
  Tile gemm(const Tile &a, const Tile &b, const Tile &acc, bool transposeB, Loc loc = Loc::current());
  /// Elementwise conversion of a fragment to another dtype.
  Tile cast(const Tile &t, DType to, Loc loc = Loc::current());
  void store(const Tile &t, const Tensor &dst, std::vector<Index> offsets, Loc loc = Loc::current());
  /// for i in [lb, ub) step `step`, carrying `carried`; with stages >= 2 its copies are pipelined.
  Tiles loop(Index lb, Index ub, Index step, int64_t stages, Tiles carried,
             const std::function<Tiles(Index, const Tiles &)> &body, Loc loc = Loc::current());

  /// The kernel's tile IR, as text.
  std::string ir() const;
  /// Structural hash of the tile IR (value names and source locations do not change it).
  std::string structuralHash() const;
  /// Runs the compiler pipeline and NVPTX; throws qla::Error with the DSL line on failure.
  CompiledPtx compile(const CompileOptions &options = {}) const;
  /// Runs the tile program on the CPU (one argument per tensor, in declaration order); throws
  /// qla::Error with the DSL line of the failing op.
  void interpret(const std::vector<HostTensor *> &args) const;
  /// JIT launch on the GPU: the first call takes the kernel from the disk cache (or compiles and
  /// publishes it) and loads it; later calls only validate the arguments and launch.
  void launch(const std::vector<TensorArg> &tensors, CUstream stream = nullptr);

  struct Impl;

private:
  friend Index combine(const Index &a, const Index &b, char op);
  Index indexOp(const Index &a, const Index &b, char op);
  void *materialize(const Index &i);
  std::string name_;
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<CompiledKernel> loaded_;
};

} // namespace qla::dsl

#endif
