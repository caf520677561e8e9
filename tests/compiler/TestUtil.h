// Helpers for the compiler tests: temporary folders and running a command.
#ifndef QLA_TESTS_COMPILER_TESTUTIL_H
#define QLA_TESTS_COMPILER_TESTUTIL_H

#include <cstdio>
#include <filesystem>
#include <random>
#include <string>

namespace qla::test {

/// A fresh folder under the system temp dir, removed with its contents on destruction.
class TempDir {
public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("qla-compiler-test-" + std::to_string(rd()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const std::filesystem::path &path() const { return path_; }

private:
  std::filesystem::path path_;
};

struct CommandResult {
  int status = -1; // exit status, or -1 when it could not be run
  std::string output; // stdout and stderr
};

inline CommandResult runCommand(const std::string &command) {
  CommandResult r;
  FILE *pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe)
    return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0)
    r.output.append(buf, n);
  int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

} // namespace qla::test

#endif
