#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <random>
#include <string>

namespace qla::test {

// A fresh folder under the system temp directory, removed with everything in it on destruction.
class TempDir {
public:
  TempDir() {
    static std::atomic<int> counter{0};
    std::random_device device;
    path_ = std::filesystem::temp_directory_path() /
            ("qla-runtime-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) +
             "-" + std::to_string(device()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

private:
  std::filesystem::path path_;
};

} // namespace qla::test
