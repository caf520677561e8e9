#include "qla/runtime/Nvjitlink.h"

#include <nvJitLink.h>

#include <fmt/format.h>

#include <vector>

#include "qla/runtime/DynamicLibrary.h"
#include "qla/runtime/Error.h"

namespace qla {

namespace {

// The header wraps these in static inline functions bound to versioned symbols
// (__nvJitLinkCreate_13_0); the library also exports the plain names, which we load.
struct NvJitLinkApi {
  using Create = nvJitLinkResult (*)(nvJitLinkHandle*, uint32_t, const char**);
  using Destroy = nvJitLinkResult (*)(nvJitLinkHandle*);
  using AddData = nvJitLinkResult (*)(nvJitLinkHandle, nvJitLinkInputType, const void*, size_t,
                                      const char*);
  using Complete = nvJitLinkResult (*)(nvJitLinkHandle);
  using GetSize = nvJitLinkResult (*)(nvJitLinkHandle, size_t*);
  using GetCubin = nvJitLinkResult (*)(nvJitLinkHandle, void*);
  using GetLog = nvJitLinkResult (*)(nvJitLinkHandle, char*);
  using Version = nvJitLinkResult (*)(unsigned int*, unsigned int*);

  DynamicLibrary library;
  std::string unavailableReason;
  Create create = nullptr;
  Destroy destroy = nullptr;
  AddData addData = nullptr;
  Complete complete = nullptr;
  GetSize getLinkedCubinSize = nullptr;
  GetCubin getLinkedCubin = nullptr;
  GetSize getErrorLogSize = nullptr;
  GetLog getErrorLog = nullptr;
  GetSize getInfoLogSize = nullptr;
  GetLog getInfoLog = nullptr;
  Version version = nullptr;

  NvJitLinkApi() {
    std::string errors;
    library = DynamicLibrary::open({"libnvJitLink.so.13", "libnvJitLink.so"}, &errors);
    if (!library.loaded()) {
      unavailableReason = fmt::format("libnvJitLink could not be loaded ({})", errors);
      return;
    }
    std::string missing;
    auto load = [&]<typename Fn>(Fn& fn, const char* name) {
      fn = reinterpret_cast<Fn>(library.symbol(name));
      if (!fn)
        missing += (missing.empty() ? "" : ", ") + std::string(name);
    };
    load(create, "nvJitLinkCreate");
    load(destroy, "nvJitLinkDestroy");
    load(addData, "nvJitLinkAddData");
    load(complete, "nvJitLinkComplete");
    load(getLinkedCubinSize, "nvJitLinkGetLinkedCubinSize");
    load(getLinkedCubin, "nvJitLinkGetLinkedCubin");
    load(getErrorLogSize, "nvJitLinkGetErrorLogSize");
    load(getErrorLog, "nvJitLinkGetErrorLog");
    load(getInfoLogSize, "nvJitLinkGetInfoLogSize");
    load(getInfoLog, "nvJitLinkGetInfoLog");
    load(version, "nvJitLinkVersion");
    if (!missing.empty())
      unavailableReason = fmt::format("{} lacks {}", library.name(), missing);
  }

  bool available() const { return unavailableReason.empty(); }
  void require() const {
    if (!available())
      throw Error(fmt::format("nvJitLink is not available: {}", unavailableReason));
  }
};

const NvJitLinkApi& api() {
  static const NvJitLinkApi instance;
  return instance;
}

std::string resultName(nvJitLinkResult result) {
  switch (result) {
  case NVJITLINK_SUCCESS: return "NVJITLINK_SUCCESS";
  case NVJITLINK_ERROR_UNRECOGNIZED_OPTION: return "NVJITLINK_ERROR_UNRECOGNIZED_OPTION";
  case NVJITLINK_ERROR_MISSING_ARCH: return "NVJITLINK_ERROR_MISSING_ARCH";
  case NVJITLINK_ERROR_INVALID_INPUT: return "NVJITLINK_ERROR_INVALID_INPUT";
  case NVJITLINK_ERROR_PTX_COMPILE: return "NVJITLINK_ERROR_PTX_COMPILE";
  case NVJITLINK_ERROR_NVVM_COMPILE: return "NVJITLINK_ERROR_NVVM_COMPILE";
  case NVJITLINK_ERROR_INTERNAL: return "NVJITLINK_ERROR_INTERNAL";
  case NVJITLINK_ERROR_THREADPOOL: return "NVJITLINK_ERROR_THREADPOOL";
  case NVJITLINK_ERROR_UNRECOGNIZED_INPUT: return "NVJITLINK_ERROR_UNRECOGNIZED_INPUT";
  case NVJITLINK_ERROR_FINALIZE: return "NVJITLINK_ERROR_FINALIZE";
  case NVJITLINK_ERROR_NULL_INPUT: return "NVJITLINK_ERROR_NULL_INPUT";
  case NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS: return "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS";
  case NVJITLINK_ERROR_INCORRECT_INPUT_TYPE: return "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE";
  case NVJITLINK_ERROR_ARCH_MISMATCH: return "NVJITLINK_ERROR_ARCH_MISMATCH";
  case NVJITLINK_ERROR_OUTDATED_LIBRARY: return "NVJITLINK_ERROR_OUTDATED_LIBRARY";
  case NVJITLINK_ERROR_MISSING_FATBIN: return "NVJITLINK_ERROR_MISSING_FATBIN";
  case NVJITLINK_ERROR_UNRECOGNIZED_ARCH: return "NVJITLINK_ERROR_UNRECOGNIZED_ARCH";
  case NVJITLINK_ERROR_UNSUPPORTED_ARCH: return "NVJITLINK_ERROR_UNSUPPORTED_ARCH";
  case NVJITLINK_ERROR_LTO_NOT_ENABLED: return "NVJITLINK_ERROR_LTO_NOT_ENABLED";
  }
  return fmt::format("nvJitLinkResult {}", static_cast<int>(result));
}

class LinkHandle {
public:
  LinkHandle(const NvJitLinkApi& api, const std::vector<const char*>& options) : api_(api) {
    std::vector<const char*> opts = options;
    check(api_.create(&handle_, static_cast<uint32_t>(opts.size()), opts.data()), "nvJitLinkCreate");
  }
  ~LinkHandle() {
    if (handle_)
      api_.destroy(&handle_);
  }
  LinkHandle(const LinkHandle&) = delete;
  LinkHandle& operator=(const LinkHandle&) = delete;

  nvJitLinkHandle get() const { return handle_; }

  std::string log(NvJitLinkApi::GetSize getSize, NvJitLinkApi::GetLog getLog) const {
    size_t size = 0;
    if (!handle_ || getSize(handle_, &size) != NVJITLINK_SUCCESS || size == 0)
      return {};
    std::string text(size, '\0');
    if (getLog(handle_, text.data()) != NVJITLINK_SUCCESS)
      return {};
    while (!text.empty() && (text.back() == '\0' || text.back() == '\n'))
      text.pop_back();
    return text;
  }
  std::string errorLog() const { return log(api_.getErrorLogSize, api_.getErrorLog); }
  std::string infoLog() const { return log(api_.getInfoLogSize, api_.getInfoLog); }

  void check(nvJitLinkResult result, const char* what) const {
    if (result == NVJITLINK_SUCCESS)
      return;
    std::string log = errorLog();
    throw Error(fmt::format("nvJitLink: {} failed: {}{}{}", what, resultName(result),
                            log.empty() ? "" : "\n", log));
  }

private:
  const NvJitLinkApi& api_;
  nvJitLinkHandle handle_ = nullptr;
};

// "sm_90", "sm_90a", "sm_100f": the form nvJitLink's -arch accepts for SASS output.
bool isRealArch(std::string_view arch) {
  if (!arch.starts_with("sm_"))
    return false;
  std::size_t i = 3;
  while (i < arch.size() && arch[i] >= '0' && arch[i] <= '9')
    ++i;
  if (i == 3)
    return false;
  if (i < arch.size() && arch[i] >= 'a' && arch[i] <= 'z')
    ++i;
  return i == arch.size();
}

} // namespace

bool nvJitLinkAvailable(std::string* why) {
  if (!api().available() && why)
    *why = api().unavailableReason;
  return api().available();
}

std::string nvJitLinkVersion() {
  api().require();
  unsigned major = 0, minor = 0;
  if (nvJitLinkResult r = api().version(&major, &minor); r != NVJITLINK_SUCCESS)
    throw Error(fmt::format("nvJitLink: nvJitLinkVersion failed: {}", resultName(r)));
  return fmt::format("{}.{}", major, minor);
}

std::string linkPtxToCubin(std::string_view ptx, std::string_view arch, std::string* infoLog) {
  if (!isRealArch(arch))
    throw Error(fmt::format("linkPtxToCubin: expected a real GPU architecture such as 'sm_90a', "
                            "got '{}'",
                            arch));
  if (ptx.empty())
    throw Error("linkPtxToCubin: the PTX is empty");
  const NvJitLinkApi& nv = api();
  nv.require();

  const std::string archOption = fmt::format("-arch={}", arch);
  LinkHandle link(nv, {archOption.c_str(), "-O3"});
  // nvJitLink reads PTX as text; a std::string guarantees the terminating NUL.
  const std::string source(ptx);
  const std::string what = fmt::format("linking PTX for {}", arch);
  link.check(nv.addData(link.get(), NVJITLINK_INPUT_PTX, source.data(), source.size(), "qla.ptx"),
             what.c_str());
  link.check(nv.complete(link.get()), what.c_str());

  size_t size = 0;
  link.check(nv.getLinkedCubinSize(link.get(), &size), "nvJitLinkGetLinkedCubinSize");
  std::string cubin(size, '\0');
  link.check(nv.getLinkedCubin(link.get(), cubin.data()), "nvJitLinkGetLinkedCubin");
  if (infoLog)
    *infoLog = link.infoLog();
  return cubin;
}

} // namespace qla
