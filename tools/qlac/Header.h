// The C++ header `qlac compile` writes beside a kernel: a typed launcher over qla::CompiledKernel with
// the cubin and manifest embedded, so a program links only the runtime (no MLIR/LLVM, no files to ship).
#ifndef QLA_TOOLS_QLAC_HEADER_H
#define QLA_TOOLS_QLAC_HEADER_H

#include "qla/runtime/Json.h"

#include <string>

namespace qlac {

/// `className` (a C++ identifier) in namespace qla::aot; `command` is recorded in the header's comment.
std::string generateLauncherHeader(const qla::Json &manifest, const std::string &cubin, const std::string &className,
                                   const std::string &command);

/// "gdn_chunk_forward" -> "GdnChunkForward".
std::string launcherClassName(const std::string &kernel);

} // namespace qlac

#endif
