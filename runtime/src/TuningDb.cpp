#include "qla/runtime/TuningDb.h"

#include "qla/runtime/DiskCache.h"
#include "qla/runtime/Error.h"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include <cmath>
#include <limits>

namespace qla {

namespace {

constexpr int64_t kVersion = 1;

TuningEntry entryOf(const Json &j) {
  // A non-finite error (an output NaN: a failed check) is stored as null, JSON having no NaN.
  auto number = [&](const char *name) {
    return j.at(name).isNull() ? std::numeric_limits<double>::quiet_NaN() : j.at(name).asDouble();
  };
  return {j.at("kernel").asString(), j.at("shape").asString(), j.at("config").asString(), number("ms"),
          number("error"), j.at("pass").asBool(), j.contains("date") ? j.at("date").asString() : ""};
}

Json jsonOf(const TuningEntry &e) {
  Json j = Json::object();
  j.set("kernel", e.kernel);
  j.set("shape", e.shape);
  j.set("config", e.config);
  j.set("ms", std::isfinite(e.ms) ? Json(e.ms) : Json());
  j.set("error", std::isfinite(e.error) ? Json(e.error) : Json());
  j.set("pass", e.pass && std::isfinite(e.error) && std::isfinite(e.ms));
  j.set("date", e.date);
  return j;
}

} // namespace

TuningDb TuningDb::load(const std::filesystem::path &file) {
  TuningDb db;
  db.doc_.set("version", kVersion);
  db.doc_.set("gpus", Json::object());
  std::ifstream f(file);
  if (!f)
    return db;
  std::stringstream ss;
  ss << f.rdbuf();
  try {
    Json doc = Json::parse(ss.str());
    if (!doc.contains("version") || doc.at("version").asInt() != kVersion || !doc.contains("gpus"))
      throw Error("not version 1 with \"gpus\"");
    for (const auto &[key, gpu] : doc.at("gpus").asObject())
      for (const Json &e : gpu.at("entries").asArray())
        (void)entryOf(e); // every entry readable
    db.doc_ = std::move(doc);
  } catch (const std::exception &e) {
    throw Error(fmt::format("tuning database {}: not a tuning database ({})", file.string(), e.what()));
  }
  return db;
}

void TuningDb::save(const std::filesystem::path &file) const {
  std::filesystem::path tmp = file;
  tmp += fmt::format(".tmp-{}", std::random_device{}());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << doc_.dump() << "\n";
    if (!f)
      throw Error(fmt::format("tuning database: cannot write {}", tmp.string()));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, file, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw Error(fmt::format("tuning database: cannot replace {}", file.string()));
  }
}

std::filesystem::path TuningDb::defaultPath() {
  const char *env = std::getenv("QLA_TUNING_DB");
  return env && *env ? std::filesystem::path(env) : DiskCache::defaultRoot() / "tuning.json";
}

std::optional<std::string> TuningDb::gpuFor(const DeviceInfo &d, const std::string &kernel) const {
  auto holds = [&](const Json &gpu) {
    if (kernel.empty())
      return true;
    for (const Json &e : gpu.at("entries").asArray())
      if (e.at("kernel").asString() == kernel)
        return true;
    return false;
  };
  const std::string own = gpuKey(d);
  if (const Json *g = doc_.at("gpus").find(own); g && holds(*g))
    return own;
  for (const auto &[key, gpu] : doc_.at("gpus").asObject()) {
    const Json &dev = gpu.at("device");
    if (dev.contains("name") && dev.at("name").asString() == d.name && dev.contains("sm_count") &&
        dev.at("sm_count").asInt() == d.smCount && holds(gpu))
      return key;
  }
  return std::nullopt;
}

std::string TuningDb::gpuKey(const DeviceInfo &d) {
  return fmt::format("{} | {} SMs | {} B smem/block | {} B L2 | {} kHz", d.name, d.smCount, d.smemPerBlockOptin,
                     d.l2Bytes, d.clockKHz);
}

std::optional<TuningEntry> TuningDb::find(const std::string &gpu, const std::string &kernel, const std::string &shape,
                                          const std::string &config) const {
  const Json *g = doc_.at("gpus").find(gpu);
  if (!g)
    return std::nullopt;
  for (const Json &e : g->at("entries").asArray())
    if (e.at("kernel").asString() == kernel && e.at("shape").asString() == shape &&
        e.at("config").asString() == config)
      return entryOf(e);
  return std::nullopt;
}

void TuningDb::record(const DeviceInfo &device, const TuningEntry &entry) {
  const std::string key = gpuKey(device);
  Json &gpus = doc_["gpus"];
  if (!gpus.contains(key)) {
    Json g = Json::object();
    g.set("device", toJson(device));
    g.set("entries", Json::array());
    gpus.set(key, std::move(g));
  }
  Json &list = gpus[key]["entries"];
  for (Json &e : list.asArray())
    if (e.at("kernel").asString() == entry.kernel && e.at("shape").asString() == entry.shape &&
        e.at("config").asString() == entry.config) {
      e = jsonOf(entry);
      return;
    }
  list.push_back(jsonOf(entry));
}

std::optional<TuningEntry> TuningDb::best(const std::string &gpu, const std::string &kernel,
                                          const std::string &shape) const {
  std::optional<TuningEntry> best;
  for (const TuningEntry &e : entries(gpu))
    if (e.kernel == kernel && e.shape == shape && e.pass && (!best || e.ms < best->ms))
      best = e;
  return best;
}

std::vector<TuningEntry> TuningDb::entries(const std::string &gpu) const {
  std::vector<TuningEntry> out;
  if (const Json *g = doc_.at("gpus").find(gpu))
    for (const Json &e : g->at("entries").asArray())
      out.push_back(entryOf(e));
  return out;
}

std::vector<std::string> TuningDb::gpus() const {
  std::vector<std::string> out;
  for (const auto &[key, gpu] : doc_.at("gpus").asObject())
    out.push_back(key);
  return out;
}

} // namespace qla
