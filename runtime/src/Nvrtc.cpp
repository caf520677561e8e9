#include "qla/runtime/Nvrtc.h"

#include <nvrtc.h>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <initializer_list>

#include "qla/runtime/DynamicLibrary.h"
#include "qla/runtime/Error.h"

namespace qla {

namespace {

constexpr const char* kCudaIncludeDir = "/usr/local/cuda/include";

struct NvrtcApi {
  DynamicLibrary library;
  std::string unavailableReason;
  decltype(&::nvrtcVersion) version = nullptr;
  decltype(&::nvrtcGetErrorString) getErrorString = nullptr;
  decltype(&::nvrtcCreateProgram) createProgram = nullptr;
  decltype(&::nvrtcDestroyProgram) destroyProgram = nullptr;
  decltype(&::nvrtcCompileProgram) compileProgram = nullptr;
  decltype(&::nvrtcGetPTXSize) getPTXSize = nullptr;
  decltype(&::nvrtcGetPTX) getPTX = nullptr;
  decltype(&::nvrtcGetProgramLogSize) getProgramLogSize = nullptr;
  decltype(&::nvrtcGetProgramLog) getProgramLog = nullptr;

  NvrtcApi() {
    std::string errors;
    library = DynamicLibrary::open({"libnvrtc.so.13", "libnvrtc.so"}, &errors);
    if (!library.loaded()) {
      unavailableReason = fmt::format("libnvrtc could not be loaded ({})", errors);
      return;
    }
    std::string missing;
    auto load = [&]<typename Fn>(Fn& fn, const char* name) {
      fn = reinterpret_cast<Fn>(library.symbol(name));
      if (!fn)
        missing += (missing.empty() ? "" : ", ") + std::string(name);
    };
    load(version, "nvrtcVersion");
    load(getErrorString, "nvrtcGetErrorString");
    load(createProgram, "nvrtcCreateProgram");
    load(destroyProgram, "nvrtcDestroyProgram");
    load(compileProgram, "nvrtcCompileProgram");
    load(getPTXSize, "nvrtcGetPTXSize");
    load(getPTX, "nvrtcGetPTX");
    load(getProgramLogSize, "nvrtcGetProgramLogSize");
    load(getProgramLog, "nvrtcGetProgramLog");
    if (!missing.empty())
      unavailableReason = fmt::format("{} lacks {}", library.name(), missing);
  }

  bool available() const { return unavailableReason.empty(); }
  void require() const {
    if (!available())
      throw Error(fmt::format("NVRTC is not available: {}", unavailableReason));
  }
  std::string errorName(nvrtcResult result) const {
    const char* name = getErrorString ? getErrorString(result) : nullptr;
    return name ? name : fmt::format("nvrtcResult {}", static_cast<int>(result));
  }
};

const NvrtcApi& api() {
  static const NvrtcApi instance;
  return instance;
}

class Program {
public:
  Program(const NvrtcApi& api, const std::string& source, const std::string& name) : api_(api) {
    nvrtcResult r = api_.createProgram(&program_, source.c_str(), name.c_str(), 0, nullptr, nullptr);
    if (r != NVRTC_SUCCESS)
      throw Error(fmt::format("NVRTC: nvrtcCreateProgram for '{}' failed: {}", name,
                              api_.errorName(r)));
  }
  ~Program() {
    if (program_)
      api_.destroyProgram(&program_);
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  nvrtcProgram get() const { return program_; }

  std::string log() const {
    size_t size = 0;
    if (api_.getProgramLogSize(program_, &size) != NVRTC_SUCCESS || size == 0)
      return {};
    std::string text(size, '\0');
    if (api_.getProgramLog(program_, text.data()) != NVRTC_SUCCESS)
      return {};
    while (!text.empty() && (text.back() == '\0' || text.back() == '\n'))
      text.pop_back();
    return text;
  }

private:
  const NvrtcApi& api_;
  nvrtcProgram program_ = nullptr;
};

bool startsWithAny(const std::string& option, std::initializer_list<std::string_view> prefixes) {
  for (std::string_view prefix : prefixes)
    if (std::string_view(option).starts_with(prefix))
      return true;
  return false;
}

} // namespace

std::vector<std::string> defaultNvrtcOptions() {
  std::vector<std::string> options = {"-arch=compute_90a", "-std=c++17"};
  std::error_code ec;
  if (std::filesystem::is_directory(kCudaIncludeDir, ec))
    options.push_back(fmt::format("--include-path={}", kCudaIncludeDir));
  return options;
}

bool nvrtcAvailable(std::string* why) {
  if (!api().available() && why)
    *why = api().unavailableReason;
  return api().available();
}

std::string nvrtcVersion() {
  api().require();
  int major = 0, minor = 0;
  if (nvrtcResult r = api().version(&major, &minor); r != NVRTC_SUCCESS)
    throw Error(fmt::format("NVRTC: nvrtcVersion failed: {}", api().errorName(r)));
  return fmt::format("{}.{}", major, minor);
}

NvrtcResult compileCudaToPtx(std::string_view source, std::string_view name,
                             const std::vector<std::string>& options) {
  const NvrtcApi& nv = api();
  nv.require();

  const bool userArch = std::any_of(options.begin(), options.end(), [](const std::string& o) {
    return startsWithAny(o, {"-arch", "--gpu-architecture"});
  });
  const bool userStd = std::any_of(options.begin(), options.end(), [](const std::string& o) {
    return startsWithAny(o, {"-std", "--std"});
  });
  std::vector<std::string> all;
  for (std::string& option : defaultNvrtcOptions()) {
    if ((userArch && option.starts_with("-arch")) || (userStd && option.starts_with("-std")))
      continue;
    all.push_back(std::move(option));
  }
  all.insert(all.end(), options.begin(), options.end());
  std::vector<const char*> argv;
  for (const std::string& option : all)
    argv.push_back(option.c_str());

  const std::string sourceText(source);
  const std::string sourceName = name.empty() ? std::string("source.cu") : std::string(name);
  Program program(nv, sourceText, sourceName);
  nvrtcResult r = nv.compileProgram(program.get(), static_cast<int>(argv.size()), argv.data());
  NvrtcResult result;
  result.log = program.log();
  if (r != NVRTC_SUCCESS)
    throw Error(fmt::format("NVRTC: compiling '{}' failed: {}\n{}", sourceName, nv.errorName(r),
                            result.log));

  size_t size = 0;
  if (nvrtcResult e = nv.getPTXSize(program.get(), &size); e != NVRTC_SUCCESS)
    throw Error(fmt::format("NVRTC: nvrtcGetPTXSize for '{}' failed: {}", sourceName,
                            nv.errorName(e)));
  result.ptx.assign(size, '\0');
  if (nvrtcResult e = nv.getPTX(program.get(), result.ptx.data()); e != NVRTC_SUCCESS)
    throw Error(fmt::format("NVRTC: nvrtcGetPTX for '{}' failed: {}", sourceName, nv.errorName(e)));
  while (!result.ptx.empty() && result.ptx.back() == '\0')
    result.ptx.pop_back();
  return result;
}

} // namespace qla
