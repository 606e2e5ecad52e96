// A child process for kill tests: it runs some work, says when it is ready, and is killed.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

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

}  // namespace candle_graph::testing
