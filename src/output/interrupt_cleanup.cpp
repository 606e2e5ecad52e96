#include "output/interrupt_cleanup.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>

namespace candle_graph::output {

namespace fs = std::filesystem;

namespace {

struct Registered {
  fs::path path;
  Removal removal;
};

struct Registry {
  std::mutex mutex;
  std::map<std::uint64_t, Registered> paths;
  std::uint64_t next_id = 1;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: the waiting thread may outlive main
  return *r;
}

// The signals this process takes: those it was not started with ignored.
sigset_t interrupt_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction current {};
    if (::sigaction(sig, nullptr, &current) == 0 && current.sa_handler != SIG_IGN)
      sigaddset(&set, sig);
  }
  return set;
}

[[noreturn]] void remove_registered_and_die(int sig) {
  {
    // Held to the end: no output registers a path after the removal. An output renamed into
    // place meanwhile is complete; its temporary path is then gone and removing it does nothing.
    Registry& r = registry();
    r.mutex.lock();
    // Newest first: a temporary file before the directories created to hold it.
    for (auto it = r.paths.rbegin(); it != r.paths.rend(); ++it) {
      const Registered& entry = it->second;
      if (entry.removal == Removal::if_empty) {
        ::rmdir(entry.path.c_str());  // fails, as it should, on a directory that holds anything
        continue;
      }
      std::error_code ignored;
      fs::remove_all(entry.path, ignored);  // a symbolic link inside is removed, not followed
    }
  }
  // Die of the signal itself, as the default action would have.
  ::signal(sig, SIG_DFL);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, sig);
  ::pthread_sigmask(SIG_UNBLOCK, &only, nullptr);
  ::raise(sig);
  ::_exit(128 + sig);  // only if the signal did not end the process
}

}  // namespace

void watch_interrupts() {
  const sigset_t set = interrupt_signals();
  if (::pthread_sigmask(SIG_BLOCK, &set, nullptr) != 0) return;
  try {
    std::thread([set] {
      int sig = 0;
      while (::sigwait(&set, &sig) != 0) {
      }
      remove_registered_and_die(sig);
    }).detach();
  } catch (const std::system_error&) {
    // No thread to spare (a thread limit): the signals act as they did, without the clean-up;
    // the next write of the same name removes what an interrupt leaves.
    ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  }
}

namespace {

// Registers `path` under a new id; the registry's mutex is held by the caller.
std::uint64_t add_locked(Registry& r, const fs::path& path, Removal removal) {
  const std::uint64_t id = r.next_id++;
  // Absolute: nothing changes the working directory meanwhile, but the removal must not depend
  // on it.
  std::error_code ec;
  fs::path absolute = fs::absolute(path, ec);
  r.paths.emplace(id, Registered{ec ? path : std::move(absolute), removal});
  return id;
}

}  // namespace

RemovedOnInterrupt::RemovedOnInterrupt(const fs::path& path, Removal removal) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  id_ = add_locked(r, path, removal);
}

RemovedOnInterrupt RemovedOnInterrupt::create(const std::function<fs::path()>& make, int& error,
                                              Removal removal) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  RemovedOnInterrupt registered;
  errno = 0;
  const fs::path path = make();
  // errno is read before anything else can change it; a failure that set none is still one.
  error = path.empty() ? (errno != 0 ? errno : EIO) : 0;
  if (!path.empty()) registered.id_ = add_locked(r, path, removal);
  return registered;
}

RemovedOnInterrupt& RemovedOnInterrupt::operator=(RemovedOnInterrupt&& other) noexcept {
  if (this != &other) {
    reset();
    id_ = other.id_;
    other.id_ = 0;
  }
  return *this;
}

void RemovedOnInterrupt::reset() noexcept {
  if (id_ == 0) return;
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  r.paths.erase(id_);
  id_ = 0;
}

}  // namespace candle_graph::output
