#pragma once
// Test helper shared by the safe-file and choice-cache tests: a FIFO read
// that regresses into blocking fails the test instead of hanging it.

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

namespace wrapir_test {

/// Runs `read` on another thread; if it has not returned within a few
/// seconds (a reader stuck opening `fifo`), opens the FIFO for writing,
/// which releases it. Returns whether `read` returned in time.
template <class Read>
bool returns_promptly(const std::filesystem::path& fifo, Read read) {
  std::atomic<bool> done{false};
  std::thread reader([&] {
    read();
    done = true;
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!done && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const bool in_time = done;
  while (!done) {
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);  // succeeds once a reader waits
    if (fd >= 0) ::close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  reader.join();
  return in_time;
}

}  // namespace wrapir_test
