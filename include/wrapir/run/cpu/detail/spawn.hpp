#pragma once
/// \file
/// Runs a program with an argument vector, never through a shell, and
/// collects what it printed: how the kernel cache invokes the compiler.
///
/// The program's standard output and error go to one file in a directory
/// the caller owns (no pipe, so a chatty compiler cannot fill a pipe and
/// deadlock against us); its standard input is /dev/null. The child gets
/// this process's environment. A program still running after `timeout` is
/// killed with its whole process group (a compiler's cc1plus and as too),
/// so a hanging or endless compiler cannot hang its caller.

#include <wrapir/detail/safe_file.hpp>
#include <wrapir/diagnostic.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <thread>
#include <string>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;  // NOLINT: POSIX declares it nowhere

namespace wrapir::run::cpu::detail {

struct ProcessOutcome {
  int exit_status = -1;    // the exit code, or -1 when it did not exit normally
  int signal = 0;          // the signal that ended it, or 0
  bool timed_out = false;  // killed after the timeout
  std::string output{};    // stdout and stderr, interleaved, up to a cap
  std::size_t output_bytes = 0;  // the full size of what it printed
};

/// Runs `argv[0]` (a path, not searched for) with `argv`, output to
/// `output_file` (created, must not exist). A diagnostic when it cannot be
/// started; its exit status otherwise.
[[nodiscard]] inline Result<ProcessOutcome> run_process(const std::vector<std::string>& argv,
                                                        const std::filesystem::path& output_file,
                                                        std::size_t keep_output_bytes = 1 << 20,
                                                        std::chrono::milliseconds timeout = std::chrono::minutes(10)) {
  if (argv.empty()) return Diagnostic{"no program to run"};
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  if (::posix_spawn_file_actions_init(&actions) != 0) return Diagnostic{"posix_spawn_file_actions_init failed"};
  struct Cleanup {
    posix_spawn_file_actions_t* a;
    ~Cleanup() { ::posix_spawn_file_actions_destroy(a); }
  } cleanup{&actions};
  if (::posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0) != 0 ||
      ::posix_spawn_file_actions_addopen(&actions, 1, output_file.c_str(),
                                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600) != 0 ||
      ::posix_spawn_file_actions_adddup2(&actions, 1, 2) != 0)
    return Diagnostic{"cannot prepare the redirections of " + wrapir::detail::quoted_path(argv[0])};

  // Its own process group, so that a timeout kills what it started too.
  posix_spawnattr_t attributes;
  if (::posix_spawnattr_init(&attributes) != 0) return Diagnostic{"posix_spawnattr_init failed"};
  struct AttributesCleanup {
    posix_spawnattr_t* a;
    ~AttributesCleanup() { ::posix_spawnattr_destroy(a); }
  } attributes_cleanup{&attributes};
  if (::posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP) != 0 ||
      ::posix_spawnattr_setpgroup(&attributes, 0) != 0)
    return Diagnostic{"cannot give " + wrapir::detail::quoted_path(argv[0]) + " a process group"};

  pid_t pid = -1;
  const int started = ::posix_spawn(&pid, argv[0].c_str(), &actions, &attributes, args.data(), environ);
  if (started != 0)
    return Diagnostic{"cannot run " + wrapir::detail::quoted_path(argv[0]) + ": " + wrapir::detail::errno_text(started)};
  ProcessOutcome outcome;
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) return Diagnostic{"waiting for " + wrapir::detail::quoted_path(argv[0]) + " failed"};
    if (std::chrono::steady_clock::now() >= deadline && !outcome.timed_out) {
      outcome.timed_out = true;
      ::kill(-pid, SIGKILL);  // the group: the program and what it started
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
  if (WIFEXITED(status)) outcome.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
  // A program that could not be executed (exec failed in the child) exits 127.
  wrapir::detail::ReadOptions read{.max_bytes = std::uint64_t{256} << 20, .follow_symlinks = false, .limit_hint = {}};
  if (auto text = wrapir::detail::read_regular_file(output_file, read)) {
    outcome.output_bytes = text->size();
    if (text->size() > keep_output_bytes) text->resize(keep_output_bytes);
    outcome.output = std::move(*text);
  }
  return outcome;
}

}  // namespace wrapir::run::cpu::detail
