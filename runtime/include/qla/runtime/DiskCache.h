#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "qla/runtime/Json.h"

namespace qla {

struct CacheEntry {
  std::filesystem::path dir;
  std::map<std::string, std::string> files; // name -> contents, every file the manifest lists
  Json manifest;                            // the metadata plus "files" and "manifest_sha256"
};

// A content-addressed cache of compiled kernels on disk:
//
//   <root>/<versionTag>/<key>/{<files>…, manifest.json}
//
// manifest.json holds the caller's metadata, a "files" object {name: {"sha256", "bytes"}} and a
// "manifest_sha256" over the rest of the manifest, so that a flipped byte anywhere is detected.
//
// Concurrency without locks: an entry is written into a private folder
// `.tmp-<key>-<pid>-<random>` (files fsynced, manifest last) and published with one rename(2) of
// the folder onto <key>. rename is atomic, so other processes and threads see either no entry or a
// complete one. When two writers race, the second rename fails because <key> is a non-empty
// folder; the loser verifies the winner's entry and discards its own copy (both have the same
// content, the key being a hash of it). Removal renames the entry aside to a unique
// `.trash-…` name first, so readers never see a half-deleted entry under <key>; a reader that
// had already opened the folder either finishes reading it or sees files vanish and reports a
// miss. lookup() verifies sizes and checksums and removes what fails, so a corrupt or partial
// entry is rebuilt by the caller, never returned.
class DiskCache {
public:
  // `root` is the cache root (see defaultRoot()); `versionTag` names the folder below it, e.g.
  // "qla-0.1.0-<compiler hash>+sm_90a" ([A-Za-z0-9._+-], not starting with '.'). Creates nothing yet.
  explicit DiskCache(std::filesystem::path root, std::string versionTag);

  // $QLA_CACHE_DIR, else $XDG_CACHE_HOME/qla, else $HOME/.cache/qla. Throws when none is set.
  static std::filesystem::path defaultRoot();

  // <root>/<versionTag>
  const std::filesystem::path& dir() const { return dir_; }

  // The verified entry, or nullopt (a corrupt or partial entry is removed first).
  std::optional<CacheEntry> lookup(const std::string& key);

  // Writes and publishes an entry, or returns the one another writer published first. `metadata`
  // is a JSON object without the reserved members "files" and "manifest_sha256"; file names are
  // [A-Za-z0-9._-] without a leading '.', and not "manifest.json".
  CacheEntry publish(const std::string& key, const std::map<std::string, std::string>& files,
                     const Json& metadata);

  // Published keys, sorted (not verified).
  std::vector<std::string> keys();

  // Verifies an entry without removing it; *why says what is wrong.
  bool verify(const std::string& key, std::string* why = nullptr);

  // Removes an entry if present.
  void remove(const std::string& key);

  // Removes every entry, leftover trash and stale temporary folders. Publishes in progress
  // still complete.
  void clear();

  // Removes `.tmp-*` folders older than maxAge (left by killed writers) and `.trash-*` folders.
  // publish() calls it with the default age.
  void removeStaleTemporaries(std::chrono::seconds maxAge = std::chrono::hours(1));

  // Throws qla::Error unless `key` is 1–128 characters of [A-Za-z0-9_-].
  static void validateKey(const std::string& key);

private:
  std::filesystem::path dir_;
};

} // namespace qla
