// qlac cache ls|verify|clear: the kernel cache on disk (docs/cache.md), through qla::DiskCache.
#include "Commands.h"

#include "qla/dsl/Jit.h"
#include "qla/runtime/DiskCache.h"
#include "qla/runtime/Error.h"
#include "qla/runtime/Json.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace qlac {

namespace {

constexpr const char *kUsage =
    "usage: qlac cache ls|verify|clear [--dir ROOT] [--all-versions] [--remove-bad]\n\n"
    "The kernel cache: ROOT is $QLA_CACHE_DIR, else $XDG_CACHE_HOME/qla, else $HOME/.cache/qla; entries live in\n"
    "ROOT/<version tag>/<key>/ (this build's tag: {}; --all-versions: every tag under ROOT).\n"
    "  ls      each entry: key, kernel, config, bytes\n"
    "  verify  checks every entry's sizes and checksums (exit 1 if one fails; --remove-bad removes those)\n"
    "  clear   removes every entry (and leftover temporary folders)\n";

std::string describe(const fs::path &entry) {
  std::ifstream f(entry / "manifest.json");
  std::stringstream ss;
  ss << f.rdbuf();
  try {
    qla::Json m = qla::Json::parse(ss.str());
    int64_t bytes = 0;
    if (m.contains("files"))
      for (const auto &[name, file] : m.at("files").asObject())
        bytes += file.at("bytes").asInt();
    std::string config = m.contains("config") ? m.at("config").asString() : std::string("-");
    return fmt::format("{:<20} {:>9} B  {}", m.at("kernel").asString(), bytes, config);
  } catch (const std::exception &) {
    return "(no readable manifest)";
  }
}

} // namespace

int cacheCommand(const Args &args) {
  const std::string tag = qla::dsl::cacheVersionTag();
  std::string sub = args.empty() ? "" : args[0];
  if (sub.empty() || sub == "--help" || sub == "-h") {
    fmt::print(sub.empty() ? stderr : stdout, fmt::runtime(kUsage), tag);
    return sub.empty() ? 2 : 0;
  }
  if (sub != "ls" && sub != "verify" && sub != "clear")
    throw qla::Error(fmt::format("cache: unknown subcommand '{}' (ls, verify, clear)", sub));
  fs::path root;
  bool allVersions = false, removeBad = false;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--dir" && i + 1 < args.size())
      root = args[++i];
    else if (args[i] == "--all-versions")
      allVersions = true;
    else if (args[i] == "--remove-bad" && sub == "verify")
      removeBad = true;
    else
      throw qla::Error(fmt::format("cache {}: unknown option '{}' (see 'qlac cache --help')", sub, args[i]));
  }
  if (root.empty())
    root = qla::DiskCache::defaultRoot();
  std::vector<std::string> tags{tag};
  if (allVersions) {
    tags.clear();
    if (fs::is_directory(root))
      for (const auto &d : fs::directory_iterator(root))
        if (d.is_directory() && d.path().filename().string().front() != '.')
          tags.push_back(d.path().filename().string());
    std::sort(tags.begin(), tags.end());
  }
  int bad = 0;
  for (const std::string &t : tags) {
    qla::DiskCache cache(root, t);
    std::vector<std::string> keys = fs::is_directory(cache.dir()) ? cache.keys() : std::vector<std::string>{};
    fmt::print("{}: {} entries\n", cache.dir().string(), keys.size());
    if (sub == "clear") {
      cache.clear();
      continue;
    }
    for (const std::string &key : keys) {
      if (sub == "ls") {
        fmt::print("  {}  {}\n", key, describe(cache.dir() / key));
        continue;
      }
      std::string why;
      if (cache.verify(key, &why)) {
        fmt::print("  ok   {}\n", key);
      } else {
        ++bad;
        fmt::print("  BAD  {}: {}{}\n", key, why, removeBad ? " (removed)" : "");
        if (removeBad)
          cache.remove(key);
      }
    }
  }
  if (sub == "verify" && bad)
    fmt::print("{} bad entr{}{}\n", bad, bad == 1 ? "y" : "ies", removeBad ? ", removed" : "");
  return sub == "verify" && bad && !removeBad ? 1 : 0;
}

} // namespace qlac
