#include "qla/runtime/DiskCache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

#include "qla/runtime/Error.h"
#include "qla/runtime/Sha256.h"

namespace fs = std::filesystem;

namespace qla {

namespace {

constexpr const char* kManifestName = "manifest.json";
constexpr const char* kFilesMember = "files";
constexpr const char* kManifestHashMember = "manifest_sha256";
constexpr std::size_t kMaxNameLength = 128;
constexpr std::size_t kMaxManifestBytes = 16 << 20;
// Test hook: milliseconds publish() sleeps between writing its temporary folder and the rename,
// so that tests can kill a writer at the worst moment.
constexpr const char* kPauseBeforeRenameEnv = "QLA_CACHE_TEST_PAUSE_BEFORE_RENAME";

class FileDescriptor {
public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }

private:
  int fd_;
};

std::string errnoText(int err) { return std::strerror(err); }

bool isKeyChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

bool isValidKey(std::string_view key) {
  return !key.empty() && key.size() <= kMaxNameLength && std::all_of(key.begin(), key.end(), isKeyChar);
}

bool isValidFileName(std::string_view name) {
  return !name.empty() && name.size() <= kMaxNameLength && name.front() != '.' &&
         name != kManifestName &&
         std::all_of(name.begin(), name.end(), [](char c) { return isKeyChar(c) || c == '.'; });
}

bool isHex64(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::string randomSuffix() {
  thread_local std::mt19937_64 rng([] {
    std::random_device device;
    std::uint64_t seed = (std::uint64_t(device()) << 32) ^ device();
    seed ^= std::uint64_t(::getpid()) << 17;
    seed ^= static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    return seed;
  }());
  return fmt::format("{:016x}", rng());
}

void writeFileDurably(const fs::path& path, std::string_view data) {
  FileDescriptor fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (!fd)
    throw Error(fmt::format("DiskCache: cannot create '{}': {}", path.string(), errnoText(errno)));
  const char* p = data.data();
  std::size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd.get(), p, left);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      throw Error(fmt::format("DiskCache: writing '{}' failed: {}", path.string(), errnoText(errno)));
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd.get()) != 0)
    throw Error(fmt::format("DiskCache: fsync of '{}' failed: {}", path.string(), errnoText(errno)));
}

// Best effort: makes a rename or a new directory entry durable. Correctness never depends on it.
void syncDirectory(const fs::path& path) {
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd)
    ::fsync(fd.get());
}

// Reads `name` inside the directory `dirFd`; nullopt (and *why) when it is missing or unreadable.
std::optional<std::string> readFileAt(int dirFd, const std::string& name, std::size_t maxBytes,
                                      std::string* why) {
  FileDescriptor fd(::openat(dirFd, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) {
    *why = fmt::format("cannot open '{}': {}", name, errnoText(errno));
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    *why = fmt::format("'{}' is not a regular file", name);
    return std::nullopt;
  }
  if (static_cast<std::size_t>(st.st_size) > maxBytes) {
    *why = fmt::format("'{}' has {} bytes, expected at most {}", name, st.st_size, maxBytes);
    return std::nullopt;
  }
  std::string data(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::read(fd.get(), data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      *why = fmt::format("reading '{}' failed: {}", name, n < 0 ? errnoText(errno) : "short read");
      return std::nullopt;
    }
    done += static_cast<std::size_t>(n);
  }
  return data;
}

// The manifest hash covers the compact dump of every other member, so any change is caught.
std::string manifestHash(Json manifest) {
  manifest.erase(kManifestHashMember);
  return sha256Hex(manifest.dump(0));
}

Json buildManifest(const std::map<std::string, std::string>& files, const Json& metadata) {
  Json manifest = metadata.isNull() ? Json::object() : metadata;
  Json fileList = Json::object();
  for (const auto& [name, contents] : files) {
    Json info = Json::object();
    info.set("sha256", sha256Hex(contents));
    info.set("bytes", contents.size());
    fileList.set(name, std::move(info));
  }
  manifest.set(kFilesMember, std::move(fileList));
  manifest.set(kManifestHashMember, manifestHash(manifest));
  return manifest;
}

// Reads and verifies the entry folder open as `dirFd`. On failure returns false and sets *why.
bool readEntry(int dirFd, CacheEntry& entry, std::string* why) {
  std::optional<std::string> text = readFileAt(dirFd, kManifestName, kMaxManifestBytes, why);
  if (!text)
    return false;
  try {
    entry.manifest = Json::parse(*text);
  } catch (const Error& e) {
    *why = fmt::format("{} does not parse: {}", kManifestName, e.what());
    return false;
  }
  const Json& manifest = entry.manifest;
  const Json* hash = manifest.find(kManifestHashMember);
  const Json* files = manifest.find(kFilesMember);
  if (!manifest.isObject() || !hash || !hash->isString() || !files || !files->isObject()) {
    *why = fmt::format("{} lacks the '{}' object or the '{}' string", kManifestName, kFilesMember,
                       kManifestHashMember);
    return false;
  }
  if (hash->asString() != manifestHash(manifest)) {
    *why = fmt::format("{} does not match its '{}'", kManifestName, kManifestHashMember);
    return false;
  }
  for (const auto& [name, info] : files->asObject()) {
    const Json* sha = info.find("sha256");
    const Json* bytes = info.find("bytes");
    if (!isValidFileName(name) || !sha || !sha->isString() || !isHex64(sha->asString()) || !bytes ||
        !bytes->isInt() || bytes->asInt() < 0) {
      *why = fmt::format("{} has an invalid record for '{}'", kManifestName, name);
      return false;
    }
    const auto expectedBytes = static_cast<std::size_t>(bytes->asInt());
    std::optional<std::string> contents = readFileAt(dirFd, name, expectedBytes, why);
    if (!contents)
      return false;
    if (contents->size() != expectedBytes) {
      *why = fmt::format("'{}' has {} bytes, the manifest says {}", name, contents->size(),
                         expectedBytes);
      return false;
    }
    if (sha256Hex(*contents) != sha->asString()) {
      *why = fmt::format("'{}' does not match its sha256 in the manifest", name);
      return false;
    }
    entry.files.emplace(name, std::move(*contents));
  }
  return true;
}

bool sameDirectory(int dirFd, const fs::path& path) {
  struct stat opened {}, current {};
  if (::fstat(dirFd, &opened) != 0 || ::lstat(path.c_str(), &current) != 0)
    return false;
  return opened.st_dev == current.st_dev && opened.st_ino == current.st_ino;
}

void pauseForTests() {
  if (const char* value = std::getenv(kPauseBeforeRenameEnv)) {
    const long ms = std::strtol(value, nullptr, 10);
    if (ms > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  }
}

std::string nonEmptyEnv(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

} // namespace

DiskCache::DiskCache(fs::path root, std::string versionTag) {
  if (root.empty())
    throw Error("DiskCache: the cache root is empty");
  const bool tagOk =
      !versionTag.empty() && versionTag.size() <= kMaxNameLength && versionTag.front() != '.' &&
      std::all_of(versionTag.begin(), versionTag.end(),
                  [](char c) { return isKeyChar(c) || c == '.' || c == '+'; });
  if (!tagOk)
    throw Error(fmt::format("DiskCache: invalid version tag '{}': expected 1 to {} characters of "
                            "[A-Za-z0-9._+-], not starting with '.'",
                            versionTag, kMaxNameLength));
  dir_ = std::move(root) / versionTag;
}

fs::path DiskCache::defaultRoot() {
  if (std::string dir = nonEmptyEnv("QLA_CACHE_DIR"); !dir.empty())
    return dir;
  if (std::string xdg = nonEmptyEnv("XDG_CACHE_HOME"); !xdg.empty())
    return fs::path(xdg) / "qla";
  if (std::string home = nonEmptyEnv("HOME"); !home.empty())
    return fs::path(home) / ".cache" / "qla";
  throw Error("DiskCache: no cache folder: set QLA_CACHE_DIR (or XDG_CACHE_HOME or HOME)");
}

void DiskCache::validateKey(const std::string& key) {
  if (!isValidKey(key))
    throw Error(fmt::format("DiskCache: invalid key '{}': expected 1 to {} characters of "
                            "[A-Za-z0-9_-] (e.g. a hex digest)",
                            key, kMaxNameLength));
}

std::optional<CacheEntry> DiskCache::lookup(const std::string& key) {
  validateKey(key);
  const fs::path path = dir_ / key;
  // A second round only when another writer replaced the entry while we were reading it.
  for (int round = 0; round < 2; ++round) {
    FileDescriptor dirFd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dirFd) {
      if (errno == ENOENT)
        return std::nullopt;
      if (errno == ENOTDIR) { // a stray file where an entry belongs
        remove(key);
        return std::nullopt;
      }
      throw Error(fmt::format("DiskCache: cannot open '{}': {}", path.string(), errnoText(errno)));
    }
    CacheEntry entry;
    std::string why;
    if (readEntry(dirFd.get(), entry, &why)) {
      entry.dir = path;
      return entry;
    }
    // Only remove the folder we examined: if <key> is now another folder, a writer just
    // published it and it deserves its own check.
    if (sameDirectory(dirFd.get(), path)) {
      remove(key);
      return std::nullopt;
    }
  }
  return std::nullopt;
}

CacheEntry DiskCache::publish(const std::string& key, const std::map<std::string, std::string>& files,
                              const Json& metadata) {
  validateKey(key);
  for (const auto& [name, contents] : files)
    if (!isValidFileName(name))
      throw Error(fmt::format("DiskCache: invalid file name '{}' for key '{}': expected 1 to {} "
                              "characters of [A-Za-z0-9._-], not starting with '.' and not '{}'",
                              name, key, kMaxNameLength, kManifestName));
  if (!metadata.isNull() && !metadata.isObject())
    throw Error(fmt::format("DiskCache: metadata for key '{}' must be a JSON object, got {}", key,
                            jsonTypeName(metadata.type())));
  for (const char* reserved : {kFilesMember, kManifestHashMember})
    if (metadata.contains(reserved))
      throw Error(fmt::format("DiskCache: metadata for key '{}' uses the reserved member '{}'", key,
                              reserved));

  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec)
    throw Error(fmt::format("DiskCache: cannot create '{}': {}", dir_.string(), ec.message()));
  removeStaleTemporaries();

  const Json manifest = buildManifest(files, metadata);
  const std::string manifestText = manifest.dump(2) + "\n";

  const fs::path tmp = dir_ / fmt::format(".tmp-{}-{}-{}", key, ::getpid(), randomSuffix());
  if (::mkdir(tmp.c_str(), 0755) != 0)
    throw Error(fmt::format("DiskCache: cannot create '{}': {}", tmp.string(), errnoText(errno)));
  const fs::path path = dir_ / key;
  try {
    for (const auto& [name, contents] : files)
      writeFileDurably(tmp / name, contents);
    writeFileDurably(tmp / kManifestName, manifestText); // last: its presence implies the rest
    syncDirectory(tmp);
    pauseForTests();

    for (int attempt = 0; attempt < 4; ++attempt) {
      if (::rename(tmp.c_str(), path.c_str()) == 0) {
        syncDirectory(dir_);
        return CacheEntry{path, files, manifest};
      }
      const int err = errno;
      if (err != ENOTEMPTY && err != EEXIST && err != ENOTDIR)
        throw Error(fmt::format("DiskCache: cannot publish '{}' as '{}': {}", tmp.string(),
                                path.string(), errnoText(err)));
      // Another writer won. Its entry is as good as ours unless it is corrupt, in which case
      // lookup() removed it and the next rename can succeed.
      if (std::optional<CacheEntry> theirs = lookup(key)) {
        fs::remove_all(tmp, ec);
        return *std::move(theirs);
      }
    }
    throw Error(fmt::format("DiskCache: cannot publish key '{}': '{}' kept being replaced by "
                            "corrupt entries",
                            key, path.string()));
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

std::vector<std::string> DiskCache::keys() {
  std::vector<std::string> result;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    std::error_code typeEc;
    if (isValidKey(name) && it->is_directory(typeEc))
      result.push_back(std::move(name));
  }
  std::sort(result.begin(), result.end());
  return result;
}

bool DiskCache::verify(const std::string& key, std::string* why) {
  validateKey(key);
  std::string reason;
  std::string* out = why ? why : &reason;
  const fs::path path = dir_ / key;
  FileDescriptor dirFd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dirFd) {
    *out = fmt::format("cannot open '{}': {}", path.string(), errnoText(errno));
    return false;
  }
  CacheEntry entry;
  return readEntry(dirFd.get(), entry, out);
}

void DiskCache::remove(const std::string& key) {
  validateKey(key);
  const fs::path path = dir_ / key;
  const fs::path trash = dir_ / fmt::format(".trash-{}-{}-{}", key, ::getpid(), randomSuffix());
  if (::rename(path.c_str(), trash.c_str()) != 0) {
    if (errno == ENOENT)
      return;
    throw Error(fmt::format("DiskCache: cannot remove '{}': {}", path.string(), errnoText(errno)));
  }
  std::error_code ec;
  fs::remove_all(trash, ec); // leftovers are collected by removeStaleTemporaries
}

void DiskCache::clear() {
  for (const std::string& key : keys())
    remove(key);
  removeStaleTemporaries();
}

void DiskCache::removeStaleTemporaries(std::chrono::seconds maxAge) {
  const auto now = fs::file_time_type::clock::now();
  std::error_code ec;
  std::vector<fs::path> stale;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.starts_with(".trash-")) {
      stale.push_back(it->path());
    } else if (name.starts_with(".tmp-")) {
      std::error_code timeEc;
      const auto modified = fs::last_write_time(it->path(), timeEc);
      if (!timeEc && now - modified > maxAge)
        stale.push_back(it->path());
    }
  }
  // Another process may be deleting the same folders: errors are expected and harmless.
  for (const fs::path& path : stale)
    fs::remove_all(path, ec);
}

} // namespace qla
