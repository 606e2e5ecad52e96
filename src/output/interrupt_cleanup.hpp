// What an interrupted command leaves behind. SIGINT (Ctrl-C), SIGTERM (`timeout`, a cancelled
// job) and SIGHUP (a closed terminal) end a process at once, past every destructor, so the
// temporary file an output was being written to, or a bundle's staging directory, stayed on disk
// (hidden, up to the size of the output) until the next write of the same name removed it.
//
// Outputs register those paths here while they exist. Once watch_interrupts() runs, one thread
// takes those signals: it removes every registered path and then ends the process with the same
// signal, so the shell still sees Ctrl-C (exit status 130). A signal that the process was
// started with ignored (`nohup`, a background job of a script) stays ignored. Finished outputs
// are renamed into place before they are unregistered: removing a registered path never touches
// a complete output, and what was there before the command stays as it was.
//
// Without watch_interrupts() (the library in another program, tests, fuzzers) the registry is
// bookkeeping only and the program's own signal handling is left alone.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>

namespace candle_graph::output {

// Blocks SIGINT, SIGTERM and SIGHUP (those not ignored) in the calling thread and starts the
// thread that waits for them. Call once, first thing in main, before any other thread starts:
// threads inherit the blocked mask, so the signals reach only the waiting thread.
void watch_interrupts();

// How a registered path is removed: whole (a file, or a directory with its contents), or only if
// it is an empty directory (one an output created above itself, which others may use too).
enum class Removal : std::uint8_t { whole, if_empty };

// Registers `path` for removal on an interrupt, for the lifetime of this object. Paths are
// removed newest first, so a temporary file goes before the directories created to hold it.
// Removing the path is its owner's job otherwise.
class RemovedOnInterrupt {
 public:
  RemovedOnInterrupt() = default;
  explicit RemovedOnInterrupt(const std::filesystem::path& path, Removal removal = Removal::whole);
  // Runs `make`, which creates a file or directory and returns its path (empty when it created
  // nothing), and registers that path, with interrupts held off in between: a path whose name is
  // only known once it exists (mkdtemp) is then never left behind by a signal in between.
  // `error` becomes 0 when `make` created its path, else the errno that `make` left.
  static RemovedOnInterrupt create(const std::function<std::filesystem::path()>& make, int& error,
                                   Removal removal = Removal::whole);
  ~RemovedOnInterrupt() { reset(); }
  RemovedOnInterrupt(RemovedOnInterrupt&& other) noexcept : id_(other.id_) { other.id_ = 0; }
  RemovedOnInterrupt& operator=(RemovedOnInterrupt&& other) noexcept;
  RemovedOnInterrupt(const RemovedOnInterrupt&) = delete;
  RemovedOnInterrupt& operator=(const RemovedOnInterrupt&) = delete;

  // Unregisters the path (it was renamed into place, or removed).
  void reset() noexcept;

 private:
  std::uint64_t id_ = 0;  // 0: nothing registered
};

}  // namespace candle_graph::output
