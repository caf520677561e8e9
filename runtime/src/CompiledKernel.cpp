#include "qla/runtime/CompiledKernel.h"

#include "qla/runtime/Error.h"
#include "qla/runtime/Sha256.h"
#include "qla/runtime/TensorMap.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fstream>
#include <sstream>

namespace qla {

namespace {

std::vector<std::int64_t> ints(const Json& j) {
  std::vector<std::int64_t> v;
  for (const Json& x : j.asArray())
    v.push_back(x.asInt());
  return v;
}

std::vector<std::int64_t> rowMajor(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> s(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;)
    s[i - 1] = s[i] * shape[i];
  return s;
}

// Stride d of `t` in elements: its own, or row-major when it gives none. No allocation (the launch path).
std::int64_t strideOf(const TensorArg& t, std::size_t d) {
  if (!t.strides.empty())
    return t.strides[d];
  std::int64_t s = 1;
  for (std::size_t i = d + 1; i < t.shape.size(); ++i)
    s *= t.shape[i];
  return s;
}

bool sameStrides(const TensorArg& t, const std::vector<std::int64_t>& strides) {
  if (strides.size() != t.shape.size())
    return false;
  for (std::size_t d = 0; d < strides.size(); ++d)
    if (strides[d] != strideOf(t, d))
      return false;
  return true;
}

std::string readFile(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f)
    throw Error(fmt::format("cannot read {}", p.string()));
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

} // namespace

KernelSignature::KernelSignature(const Json& manifest)
    : kernel_(manifest.at("kernel").asString()), entry_(manifest.at("entry").asString()) {
  for (const Json& p : manifest.at("params").asArray()) {
    Param param;
    const std::string& kind = p.at("kind").asString();
    if (kind == "dim") {
      param.kind = Param::Kind::Dim;
      param.tensor = static_cast<std::size_t>(p.at("tensor").asInt());
      param.dim = static_cast<std::size_t>(p.at("dim").asInt());
    } else if (kind == "tensor") {
      param.name = p.at("name").asString();
      param.dtype = parseDType(p.at("dtype").asString());
      param.shape = ints(p.at("shape"));
      param.strides = ints(p.at("strides"));
      ++numTensors_;
    } else {
      param.kind = Param::Kind::TensorMap;
      ++numTensorMaps_;
      param.isTensorMap = true;
      param.tensor = static_cast<std::size_t>(p.at("tensor").asInt());
      for (std::int64_t b : ints(p.at("box")))
        param.box.push_back(static_cast<std::uint32_t>(b));
      param.swizzle = static_cast<int>(p.at("swizzle").asInt());
    }
    params_.push_back(std::move(param));
  }
  auto grid = ints(manifest.at("grid")), block = ints(manifest.at("block"));
  for (int i = 0; i < 3; ++i) {
    config_.grid[i] = static_cast<std::uint32_t>(std::max<std::int64_t>(0, grid.at(i)));
    config_.block[i] = static_cast<std::uint32_t>(block.at(i));
  }
  config_.dynamicSmemBytes = static_cast<std::uint32_t>(manifest.at("smem_bytes").asInt());
  if (const Json* dependent = manifest.find("dependent_launch")) {
    if (!dependent->isBool())
      throw Error(fmt::format("kernel '{}': manifest field 'dependent_launch': expected true or false", kernel_));
    config_.dependentLaunch = dependent->asBool();
  }
}

CompiledKernel::CompiledKernel(const Json& manifest, std::string_view image)
    : signature_(manifest), module_(image, manifest.at("kernel").asString()) {
  for (std::size_t i = 0; i < signature_.numTensorMaps(); ++i)
    maps_.push_back(std::make_unique<CachedMap>());
  args_.resize(signature_.params().size());
  pointers_.resize(signature_.numTensors());
  extents_.resize(signature_.params().size());
  function_ = module_.function(signature_.entry());
}

std::unique_ptr<CompiledKernel> CompiledKernel::fromDirectory(const std::filesystem::path& dir) {
  Json manifest = Json::parse(readFile(dir / "manifest.json"));
  std::string cubin = readFile(dir / "kernel.cubin");
  if (const Json* files = manifest.find("files"); files && files->contains("kernel.cubin")) {
    if (files->at("kernel.cubin").at("sha256").asString() != sha256Hex(cubin))
      throw Error(fmt::format("{}: kernel.cubin does not match its sha256 in manifest.json; recompile it",
                              dir.string()));
  }
  return std::make_unique<CompiledKernel>(manifest, cubin);
}

void KernelSignature::validate(const std::vector<TensorArg>& tensors) const {
  if (tensors.size() != numTensors_)
    throw Error(fmt::format("{}: expected {} tensor arguments, got {}", kernel_, numTensors_, tensors.size()));
  for (std::size_t i = 0; i < numTensors_; ++i) {
    const Param& p = params_[i];
    const TensorArg& t = tensors[i];
    auto fail = [&](const std::string& what) {
      return Error(fmt::format("{}: argument '{}': {}", kernel_, p.name, what));
    };
    if (t.dtype != p.dtype)
      throw fail(fmt::format("expected a {} tensor, got {}", dtypeName(p.dtype), dtypeName(t.dtype)));
    if (t.shape.size() != p.shape.size())
      throw fail(fmt::format("expected {} dimensions, got {}", p.shape.size(), t.shape.size()));
    for (std::size_t d = 0; d < p.shape.size(); ++d)
      if (p.shape[d] >= 0 && t.shape[d] != p.shape[d])
        throw fail(fmt::format("expected shape [{}], got [{}]", fmt::join(p.shape, ", "), fmt::join(t.shape, ", ")));
    if (!t.strides.empty() && t.strides.size() != t.shape.size())
      throw fail(fmt::format("{} strides for {} dimensions", t.strides.size(), t.shape.size()));
    for (std::size_t d = 0; d < p.strides.size(); ++d)
      if (p.strides[d] >= 0 && strideOf(t, d) != p.strides[d])
        throw fail(fmt::format("expected strides [{}] (elements), got [{}]", fmt::join(p.strides, ", "),
                               fmt::join(t.strides.empty() ? rowMajor(t.shape) : t.strides, ", ")));
    if (t.data == 0)
      throw fail("null device pointer");
    if (t.data % 16 != 0)
      throw fail(fmt::format("device address 0x{:x} is not 16-byte aligned", t.data));
  }
}

void CompiledKernel::launch(const std::vector<TensorArg>& tensors, CUstream stream,
                            std::array<std::uint32_t, 3> grid) {
  signature_.validate(tensors);
  const auto& params_ = signature_.params();
  const std::string& name_ = signature_.kernel();
  // The argument arrays are the kernel's own (sized when it was made): a warm launch allocates nothing.
  std::lock_guard lock(mapsMutex_);
  std::vector<void*>& args = args_;
  std::vector<CUdeviceptr>& pointers = pointers_;
  std::vector<std::int64_t>& extents = extents_;
  std::size_t mapIndex = 0;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const KernelSignature::Param& p = params_[i];
    if (p.kind == KernelSignature::Param::Kind::Dim) {
      extents[i] = tensors[p.tensor].shape[p.dim];
      args[i] = &extents[i];
      continue;
    }
    if (!p.isTensorMap) {
      pointers[i] = tensors[i].data;
      args[i] = &pointers[i];
      continue;
    }
    const TensorArg& t = tensors[p.tensor];
    CachedMap& cached = *maps_[mapIndex++];
    if (cached.data != t.data || cached.shape != t.shape || !sameStrides(t, cached.strides)) {
      std::vector<std::int64_t> strides = t.strides.empty() ? rowMajor(t.shape) : t.strides;
      TensorMapSpec spec;
      spec.dtype = t.dtype;
      for (std::size_t d = t.shape.size(); d-- > 0;)
        spec.globalDims.push_back(static_cast<std::uint64_t>(t.shape[d]));
      for (std::size_t d = t.shape.size() - 1; d-- > 0;)
        spec.globalStridesBytes.push_back(static_cast<std::uint64_t>(strides[d]) * dtypeBytes(t.dtype));
      spec.box = p.box;
      spec.swizzleBytes = p.swizzle;
      cached.map = encodeTensorMap(spec, reinterpret_cast<void*>(t.data), name_, params_[p.tensor].name);
      cached.data = t.data;
      cached.shape = t.shape;
      cached.strides = strides;
    }
    args[i] = &cached.map;
  }
  LaunchConfig config = signature_.launchConfig();
  config.stream = stream;
  for (int d = 0; d < 3; ++d) {
    if (grid[d])
      config.grid[d] = grid[d];
    if (!config.grid[d])
      throw Error(fmt::format("{}: grid dimension {} is given at launch, and none was", name_, d));
  }
  qla::launch(function_, config, args.data(), name_);
}

} // namespace qla
