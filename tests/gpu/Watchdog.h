// A hang becomes a test failure: a background thread ends the process with exit code 3 and the name
// of the step it was in when a step takes longer than its limit (a kernel waiting forever on an
// mbarrier never returns from the synchronisation that follows its launch).
#ifndef QLA_TESTS_GPU_WATCHDOG_H
#define QLA_TESTS_GPU_WATCHDOG_H

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace qla::testing {

class Watchdog {
public:
  explicit Watchdog(double seconds) : limit_(seconds) {
    thread_ = std::thread([this] { watch(); });
    thread_.detach();
  }
  /// Starts the clock for `what` (the kernel and shape being run).
  void step(const std::string &what) {
    std::lock_guard<std::mutex> lock(mutex_);
    what_ = what;
    since_ = std::chrono::steady_clock::now();
  }

private:
  void watch() {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      std::lock_guard<std::mutex> lock(mutex_);
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - since_).count();
      if (!what_.empty() && s > limit_) {
        fmt::print("watchdog: '{}' did not finish within {:.0f} s (a hang: a kernel waiting forever?) -> FAIL\n",
                   what_, limit_);
        std::fflush(stdout);
        std::_Exit(3);
      }
    }
  }
  double limit_;
  std::mutex mutex_;
  std::string what_;
  std::chrono::steady_clock::time_point since_ = std::chrono::steady_clock::now();
  std::thread thread_;
};

} // namespace qla::testing

#endif
