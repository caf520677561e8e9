#include <catch2/catch_test_macros.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <exception>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "TempDir.h"
#include "qla/runtime/DiskCache.h"
#include "qla/runtime/Sha256.h"

namespace fs = std::filesystem;
using qla::DiskCache;
using qla::Json;

namespace {

constexpr int kRounds = 20;

std::string keyFor(int round) { return qla::sha256Hex("race-" + std::to_string(round)); }

// Deterministic per round, so every racer publishes identical contents for a key.
std::map<std::string, std::string> filesFor(int round, std::size_t bytes = 256 * 1024) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(round) * 7919 + 1);
  std::string cubin(bytes, '\0');
  for (char& c : cubin)
    c = static_cast<char>(rng());
  return {{"kernel.cubin", cubin}, {"kernel.ptx", "// round " + std::to_string(round) + "\n"}};
}

Json metadataFor(int round) {
  Json meta = Json::object();
  meta.set("round", round);
  return meta;
}

// Publishes every round's key and reads it back; returns the number of failures.
int raceOnce(const fs::path& root) {
  int failures = 0;
  DiskCache cache(root, "v");
  for (int round = 0; round < kRounds; ++round) {
    try {
      const auto files = filesFor(round);
      const qla::CacheEntry published = cache.publish(keyFor(round), files, metadataFor(round));
      if (published.files != files)
        ++failures;
      const auto entry = cache.lookup(keyFor(round));
      if (!entry || entry->files != files || entry->manifest.at("round").asInt() != round)
        ++failures;
    } catch (const std::exception&) {
      ++failures;
    }
  }
  return failures;
}

int countDotFolders(const fs::path& dir) {
  int n = 0;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().filename().string().starts_with("."))
      ++n;
  return n;
}

void checkAllRoundsIntact(const fs::path& root) {
  DiskCache cache(root, "v");
  CHECK(cache.keys().size() == static_cast<std::size_t>(kRounds));
  for (int round = 0; round < kRounds; ++round) {
    const auto entry = cache.lookup(keyFor(round));
    REQUIRE(entry.has_value());
    CHECK(entry->files == filesFor(round));
  }
  CHECK(countDotFolders(cache.dir()) == 0);
}

} // namespace

TEST_CASE("disk cache: processes racing to publish the same keys", "[runtime][cache][concurrency]") {
  qla::test::TempDir tmp;
  constexpr int kProcesses = 3;
  int startPipe[2];
  REQUIRE(::pipe(startPipe) == 0);
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::close(startPipe[1]);
      char go;
      // Wait until every racer exists, so that they start together.
      if (::read(startPipe[0], &go, 1) != 1)
        ::_exit(100);
      int failures = raceOnce(tmp.path());
      ::_exit(failures > 99 ? 99 : failures);
    }
    children.push_back(pid);
  }
  ::close(startPipe[0]);
  const std::string go(kProcesses, 'g');
  CHECK(::write(startPipe[1], go.data(), go.size()) == static_cast<ssize_t>(go.size()));
  ::close(startPipe[1]);
  for (pid_t pid : children) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  checkAllRoundsIntact(tmp.path());
}

TEST_CASE("disk cache: threads racing to publish the same keys", "[runtime][cache][concurrency]") {
  qla::test::TempDir tmp;
  constexpr int kThreads = 4;
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] { failures[t] = raceOnce(tmp.path()); });
  for (std::thread& thread : threads)
    thread.join();
  for (int t = 0; t < kThreads; ++t)
    CHECK(failures[t] == 0);
  checkAllRoundsIntact(tmp.path());
}

TEST_CASE("disk cache: a writer killed before its rename leaves no loadable entry",
          "[runtime][cache][concurrency]") {
  qla::test::TempDir tmp;
  const std::string key = keyFor(1000);
  DiskCache cache(tmp.path(), "v");

  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // The test hook makes publish sleep with its temporary folder complete but not yet renamed.
    ::setenv("QLA_CACHE_TEST_PAUSE_BEFORE_RENAME", "60000", 1);
    try {
      DiskCache(tmp.path(), "v").publish(key, filesFor(1000), metadataFor(1000));
    } catch (...) {
      ::_exit(2);
    }
    ::_exit(1); // the pause should have outlasted the test
  }

  // Wait until the child's manifest (written last) is on disk, then kill it.
  fs::path tempFolder;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (tempFolder.empty() && std::chrono::steady_clock::now() < deadline) {
    std::error_code ec;
    for (fs::directory_iterator it(cache.dir(), ec), end; !ec && it != end; it.increment(ec))
      if (it->path().filename().string().starts_with(".tmp-") &&
          fs::exists(it->path() / "manifest.json"))
        tempFolder = it->path();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFSIGNALED(status));
  REQUIRE_FALSE(tempFolder.empty());

  CHECK_FALSE(cache.lookup(key).has_value());
  CHECK(cache.keys().empty());
  CHECK(fs::exists(tempFolder)); // younger than an hour: left alone

  const auto published = cache.publish(key, filesFor(1000), metadataFor(1000));
  CHECK(published.files == filesFor(1000));
  REQUIRE(cache.lookup(key).has_value());
  CHECK(cache.lookup(key)->files == filesFor(1000));

  // Once stale, the dead writer's folder is collected.
  fs::last_write_time(tempFolder, fs::file_time_type::clock::now() - std::chrono::hours(2));
  cache.removeStaleTemporaries();
  CHECK_FALSE(fs::exists(tempFolder));
  CHECK(cache.lookup(key).has_value());
}

TEST_CASE("disk cache: a writer killed while writing a large file leaves no loadable entry",
          "[runtime][cache][concurrency]") {
  qla::test::TempDir tmp;
  const std::string key = keyFor(2000);
  constexpr std::size_t kBig = 32u << 20;
  DiskCache cache(tmp.path(), "v");
  fs::create_directories(cache.dir());

  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    try {
      DiskCache(tmp.path(), "v").publish(key, filesFor(2000, kBig), metadataFor(2000));
    } catch (...) {
      ::_exit(2);
    }
    ::_exit(0);
  }
  // Kill as soon as the child has started writing.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  bool started = false;
  while (!started && std::chrono::steady_clock::now() < deadline) {
    std::error_code ec;
    for (fs::directory_iterator it(cache.dir(), ec), end; !ec && it != end; it.increment(ec))
      started = started || it->path().filename().string().starts_with(".tmp-");
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(started);

  // Whatever moment the kill hit, the entry is absent or complete, never partial.
  const auto entry = cache.lookup(key);
  if (entry)
    CHECK(entry->files == filesFor(2000, kBig));
  const auto published = cache.publish(key, filesFor(2000, kBig), metadataFor(2000));
  CHECK(published.files == filesFor(2000, kBig));
  CHECK(cache.lookup(key).has_value());
}
