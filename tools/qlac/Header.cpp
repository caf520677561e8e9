#include "Header.h"

#include "qla/runtime/Error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>

namespace qlac {

namespace {

struct TensorParam {
  std::string name, dtype;
  std::vector<int64_t> shape;
};

/// A tensor's parameter name: its name made an identifier, with a trailing `_t` where that would clash
/// with C++ or with the launcher's own names (stream, grid, …; tensors named alike get numbered).
std::string identifier(const std::string &name, std::vector<std::string> &taken) {
  static const char *reserved[] = {"stream", "grid", "arguments", "cubin", "kernel_", "alignas", "auto", "bool",
                                   "break", "case", "char", "class", "const", "default", "delete", "do", "double",
                                   "else", "enum", "float", "for", "if", "int", "long", "new", "operator", "private",
                                   "public", "return", "short", "signed", "sizeof", "static", "struct", "switch",
                                   "this", "typename", "union", "unsigned", "using", "virtual", "void", "while"};
  std::string s;
  for (char c : name)
    s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    s = "t_" + s;
  for (const char *r : reserved)
    if (s == r)
      s += "_t";
  auto clash = [&](const std::string &id) {
    for (const std::string &t : taken)
      if (t == id || t == id + "_dim0" || t == id + "_dim1" || t == id + "_dim2" || t == id + "_dim3")
        return true;
    return false;
  };
  std::string unique = s;
  for (int n = 2; clash(unique); ++n)
    unique = s + "_" + std::to_string(n);
  taken.push_back(unique);
  return unique;
}

std::string dtypeEnum(const std::string &dtype) {
  static const char *known[] = {"bf16", "f16", "f32", "f64", "i32", "i64", "u8", "i8"};
  for (const char *k : known)
    if (dtype == k)
      return fmt::format("qla::DType::{}", dtype);
  throw qla::Error(fmt::format("qlac header: unknown dtype '{}' in the manifest", dtype));
}

} // namespace

std::string launcherClassName(const std::string &kernel) {
  std::string s;
  bool upper = true;
  for (char c : kernel) {
    if (!std::isalnum(static_cast<unsigned char>(c))) {
      upper = true;
      continue;
    }
    s += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return s.empty() ? "Kernel" : s;
}

std::string generateLauncherHeader(const qla::Json &manifest, const std::string &cubin, const std::string &className,
                                   const std::string &command) {
  std::vector<TensorParam> tensors;
  for (const qla::Json &p : manifest.at("params").asArray())
    if (p.at("kind").asString() == "tensor") {
      TensorParam t{p.at("name").asString(), p.at("dtype").asString(), {}};
      for (const qla::Json &d : p.at("shape").asArray())
        t.shape.push_back(d.asInt());
      tensors.push_back(std::move(t));
    }
  std::vector<int> launchGrid; // grid extents given at launch
  const auto &grid = manifest.at("grid").asArray();
  for (size_t d = 0; d < grid.size(); ++d)
    if (grid[d].asInt() <= 0)
      launchGrid.push_back(static_cast<int>(d));

  // The launcher's parameters: each tensor's pointer, then its extents given at launch, then the grid's.
  std::vector<std::string> params, docs, args, taken;
  for (const TensorParam &t : tensors) {
    std::string id = identifier(t.name, taken);
    params.push_back(fmt::format("CUdeviceptr {}", id));
    std::vector<std::string> dims;
    for (size_t d = 0; d < t.shape.size(); ++d) {
      if (t.shape[d] >= 0) {
        dims.push_back(std::to_string(t.shape[d]));
        continue;
      }
      std::string extent = fmt::format("{}_dim{}", id, d);
      params.push_back(fmt::format("std::int64_t {}", extent));
      dims.push_back(extent);
    }
    docs.push_back(fmt::format("  ///   {}: {} [{}]", t.name, t.dtype, fmt::join(dims, ", ")));
    args.push_back(fmt::format("{{{}, {}, {{{}}}, {{}}}}", id, dtypeEnum(t.dtype), fmt::join(dims, ", ")));
  }
  std::vector<std::string> gridArgs{"0", "0", "0"}, gridParams;
  for (int d : launchGrid) {
    std::string g = fmt::format("grid_{}", "xyz"[d]);
    gridParams.push_back(fmt::format("std::uint32_t {}", g));
    gridArgs[d] = g;
  }
  auto names = [](const std::vector<std::string> &ps) { // the parameters' names, to forward them
    std::vector<std::string> n;
    for (const std::string &p : ps)
      n.push_back(p.substr(p.rfind(' ') + 1));
    return n;
  };
  std::vector<std::string> all = params;
  all.insert(all.end(), gridParams.begin(), gridParams.end());
  all.push_back("CUstream stream = nullptr");

  std::string bytes;
  for (size_t i = 0; i < cubin.size(); ++i)
    bytes += fmt::format("{}{}", i % 24 == 0 ? "\n    " : "", static_cast<unsigned>(static_cast<unsigned char>(cubin[i])))
             + ",";
  std::string json = manifest.dump();
  if (json.find(")qla_manifest\"") != std::string::npos)
    throw qla::Error("qlac header: the manifest contains the raw-string delimiter");

  return fmt::format(R"(// Generated by `{command}`. Do not edit: regenerate with qlac.
// A typed launcher for kernel '{kernel}' (config: {config}) over qla::CompiledKernel, with its cubin
// (sm_90a) and manifest embedded: link qla_runtime only (no MLIR or LLVM, no files to ship). C++20.
#pragma once

#include "qla/runtime/CompiledKernel.h"
#include "qla/runtime/Json.h"

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace qla::aot {{

class {cls} {{
public:
  static constexpr std::string_view kKernel = "{kernel}";
  static constexpr std::string_view kConfig = "{config}";
  static constexpr std::string_view kManifest = R"qla_manifest({json})qla_manifest";

  /// Loads the embedded cubin into the current CUDA context (needs a GPU).
  {cls}() : kernel_(qla::Json::parse(kManifest), cubin()) {{}}

  /// The launch arguments, checked against the manifest by qla::KernelSignature (no GPU needed):
{docs}
  static std::vector<qla::TensorArg> arguments({params}) {{
    return {{{args}}};
  }}
  static std::array<std::uint32_t, 3> grid({gridParams}) {{ return {{{gridArgs}}}; }}

  /// Validates the arguments (qla::Error naming the kernel and the argument when one does not fit) and
  /// launches on `stream`.
  void operator()({allParams}) {{
    kernel_.launch(arguments({tensorNames}), stream, grid({gridNames}));
  }}

  static std::string_view cubin() {{ return {{reinterpret_cast<const char *>(kCubin), sizeof kCubin}}; }}

private:
  static constexpr unsigned char kCubin[] = {{{bytes}
  }};
  qla::CompiledKernel kernel_;
}};

}} // namespace qla::aot
)",
                     fmt::arg("command", command), fmt::arg("kernel", manifest.at("kernel").asString()),
                     fmt::arg("config", manifest.contains("config") ? manifest.at("config").asString() : ""),
                     fmt::arg("cls", className), fmt::arg("json", json), fmt::arg("docs", fmt::join(docs, "\n")),
                     fmt::arg("params", fmt::join(params, ", ")), fmt::arg("args", fmt::join(args, ", ")),
                     fmt::arg("allParams", fmt::join(all, ", ")), fmt::arg("gridParams", fmt::join(gridParams, ", ")),
                     fmt::arg("gridArgs", fmt::join(gridArgs, ", ")), fmt::arg("tensorNames", fmt::join(names(params), ", ")),
                     fmt::arg("gridNames", fmt::join(names(gridParams), ", ")), fmt::arg("bytes", bytes));
}

} // namespace qlac
