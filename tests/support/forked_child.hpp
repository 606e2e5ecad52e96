// Child processes for tests: one that runs some work, says when it is ready, and is killed; one
// whose exit code is the result (a resource limit set there cannot affect the other tests).
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <functional>

namespace candle_graph::testing {

// Forks a child that runs `body(ready_fd)` (which writes one byte to ready_fd once the state to
// test is reached and never returns), waits for that byte, runs `before_kill` (to wait for more
// state), then kills the child with SIGKILL and reaps it. True when the child was ready and
// died of the kill.
inline bool kill_child_when_ready(const std::function<void(int ready_fd)>& body,
                                  const std::function<void()>& before_kill = {}) {
  int fds[2];
  if (::pipe(fds) != 0) return false;
  const pid_t child = ::fork();
  if (child < 0) return false;
  if (child == 0) {
    ::close(fds[0]);
    body(fds[1]);
    ::_exit(3);  // body returned: the parent sees no kill
  }
  ::close(fds[1]);
  char byte = 0;
  const bool ready = ::read(fds[0], &byte, 1) == 1;
  ::close(fds[0]);
  if (ready && before_kill) before_kill();
  ::kill(child, SIGKILL);
  int status = 0;
  if (::waitpid(child, &status, 0) != child) return false;
  return ready && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

// Runs `body` in a forked child and returns its exit code; -1 when it did not exit normally, -2
// when fork failed.
template <typename Body>
int exit_code_in_child(Body&& body) {
  const pid_t child = ::fork();
  if (child < 0) return -2;
  if (child == 0) ::_exit(body());
  int status = 0;
  if (::waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// Limits this process's address space to its present size and `headroom` bytes more (for a
// child of exit_code_in_child). 0 when set; 10 when the present size cannot be read, 11 when
// the limit is refused (child exit codes for the caller to pass on).
inline int limit_address_space_to_present_and(rlim_t headroom) {
  long pages = 0;  // the address space's present size (statm's first field, in pages)
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  if (pages <= 0) return 10;
  const rlim_t bytes = static_cast<rlim_t>(pages) * static_cast<rlim_t>(::sysconf(_SC_PAGESIZE));
  const rlimit limit{bytes + headroom, bytes + headroom};
  return ::setrlimit(RLIMIT_AS, &limit) == 0 ? 0 : 11;
}

}  // namespace candle_graph::testing
