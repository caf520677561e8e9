#pragma once

#include <string>
#include <string_view>

namespace qla {

// PTX -> cubin with nvJitLink (libnvJitLink.so.13, loaded with dlopen on first use). Needs no GPU.
// `arch` is a real architecture such as "sm_90a"; the link uses -O3. Throws qla::Error with the
// nvJitLink error log on failure, or when the library cannot be loaded. *infoLog receives the
// info log (e.g. register and spill reports) when given.
std::string linkPtxToCubin(std::string_view ptx, std::string_view arch,
                           std::string* infoLog = nullptr);

// "13.0"; throws qla::Error when the library cannot be loaded.
std::string nvJitLinkVersion();

// Whether libnvJitLink could be loaded; *why says why not.
bool nvJitLinkAvailable(std::string* why = nullptr);

} // namespace qla
