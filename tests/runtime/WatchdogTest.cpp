// The GPU tests' watchdog (tests/gpu/Watchdog.h): a step that outlives its limit ends the process with
// exit code 3 and names the step; steps that finish in time do not. Run in child processes.
#include "../gpu/Watchdog.h"

#include <catch2/catch_test_macros.hpp>

#include <chrono>
#include <thread>
#include <sys/wait.h>
#include <unistd.h>

namespace {

/// Exit status of a child that runs `body` then exits 0.
template <typename F>
int inChild(F body) {
  pid_t pid = fork();
  if (pid == 0) {
    body();
    std::_Exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

} // namespace

TEST_CASE("the watchdog turns a step that hangs into exit code 3", "[watchdog]") {
  int status = inChild([] {
    qla::testing::Watchdog watchdog(0.3);
    watchdog.step("a kernel that never returns");
    std::this_thread::sleep_for(std::chrono::seconds(5));
  });
  CHECK(status == 3);
}

TEST_CASE("the watchdog lets steps that finish in time through", "[watchdog]") {
  int status = inChild([] {
    qla::testing::Watchdog watchdog(0.6);
    for (int i = 0; i < 4; ++i) { // 1.2 s in all, each step well inside its limit
      watchdog.step("step " + std::to_string(i));
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
  });
  CHECK(status == 0);
}
