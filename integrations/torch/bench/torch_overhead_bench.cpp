// Overhead of the LibTorch capture: one process, one model, batch 8 and 64,
// interleaved rounds of four ways to run the same training update:
//   none     no instrumentation;
//   capture  TorchCapture around the update (op callbacks + allocator reporter + spans);
//   kineto   LibTorch's profiler, kineto API on CPU (shapes + memory on);
//   legacy   LibTorch's legacy profiler (shapes + memory on);
//   floor-*  what any RecordFunction observer pays to LibTorch before doing any work of its own:
//            thread-local callbacks on the capture's scopes that return at once, with inputs
//            and outputs boxed or not, with an allocator reporter that ignores every report or
//            not. These are the floors under the capture's collection ratio on this machine.
// "step" is the update itself (zero_grad, forward + loss, backward, Adam step) with the
// instrumentation active: the collection cost. "setup" (open the trace, checkpoint parameters /
// enable the profiler) and "finish" (gradient facts, formatting and writing every buffered event,
// closing the file / disabling the profiler and building its event list) are timed separately.
// Figures are medians over all updates, as wall time and as CPU time of the training thread;
// ratios divide by the median of `none` in the same run and on the same clock.
//
// Usage: torch_overhead_bench [--rounds R] [--steps K] [--trace-dir DIR] [--settle N] [--only W]
//   runs R rounds × K updates per way and batch (defaults 12 × 25), interleaved update by update;
//   --settle N runs N plain, unmeasured updates before every measured one (as in a training loop
//   that captures one update after ordinary ones; default 0);
//   --only runs one way (and the baseline), e.g. under `perf record -g`.
#include <unistd.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <ATen/record_function.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <torch/csrc/profiler/orchestration/observer.h>

#include "torch_example_model.hpp"

namespace {

using torch_example::StepTiming;
using torch_example::Trainer;

struct Samples {
  std::vector<double> setup, step, finish, total, step_cpu, total_cpu;  // ms
  std::vector<double> step_faults;  // minor page faults of the training thread in the step
  void add(const StepTiming& t) {
    auto ms = [](std::uint64_t ns) { return static_cast<double>(ns) / 1e6; };
    setup.push_back(ms(t.setup.wall_ns));
    step.push_back(ms(t.step.wall_ns));
    finish.push_back(ms(t.finish.wall_ns));
    total.push_back(ms(t.setup.wall_ns + t.step.wall_ns + t.finish.wall_ns));
    step_cpu.push_back(ms(t.step.cpu_ns));
    total_cpu.push_back(ms(t.setup.cpu_ns + t.step.cpu_ns + t.finish.cpu_ns));
    step_faults.push_back(static_cast<double>(t.step.minor_faults));
  }
};

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

double median(const std::vector<double>& v) {
  return quantile(v, 0.5);
}

enum Way { none, capture, kineto, legacy, floor_bare, floor_inputs, floor_boxed, ways };
constexpr int kWays = ways;
const char* const kWayName[ways] = {
    "no capture",
    "candle-graph capture",
    "LibTorch profiler, kineto API (CPU)",
    "LibTorch profiler, legacy",
    "floor: empty callbacks, nothing boxed, no reporter",
    "floor: empty callbacks, inputs boxed, empty reporter",
    "floor: empty callbacks, inputs + outputs boxed, empty reporter"};
const char* const kWayFlag[ways] = {"none",       "capture",      "kineto",     "legacy",
                                    "floor-bare", "floor-inputs", "floor-boxed"};

// An allocator reporter that ignores every report: what c10's memory reporting costs by itself.
// Derived from ProfilerStateBase like the capture's (libtorch.md §5.2).
struct EmptyReporter final : torch::profiler::impl::ProfilerStateBase {
  EmptyReporter()
      : ProfilerStateBase(
            torch::profiler::impl::ProfilerConfig(torch::profiler::impl::ProfilerState::Disabled)) {
  }
  bool memoryProfilingEnabled() const override { return true; }
  torch::profiler::impl::ActiveProfilerType profilerType() override {
    return torch::profiler::impl::ActiveProfilerType::NONE;
  }
  void reportMemoryUsage(void*, std::int64_t, std::int64_t, std::int64_t, c10::Device) override {}
};

std::unique_ptr<at::ObserverContext> empty_start(const at::RecordFunction&) {
  return nullptr;
}
void empty_end(const at::RecordFunction&, at::ObserverContext*) {}

// Installs the floor observer of `w` on this thread for its lifetime (same scopes, and the same
// thread-local registration, as the capture's Recorder).
class FloorObserver {
 public:
  explicit FloorObserver(Way w) {
    if (w != floor_bare)
      guard_.emplace(c10::DebugInfoKind::PROFILER_STATE, std::make_shared<EmptyReporter>());
    handle_ = at::addThreadLocalCallback(
        at::RecordFunctionCallback(&empty_start, &empty_end)
            .needsInputs(w != floor_bare)
            .needsOutputs(w == floor_boxed)
            .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION}));
  }
  ~FloorObserver() { at::removeCallback(handle_); }
  FloorObserver(const FloorObserver&) = delete;
  FloorObserver& operator=(const FloorObserver&) = delete;

 private:
  std::optional<c10::DebugInfoGuard> guard_;
  at::CallbackHandle handle_ = 0;
};

struct Options {
  int rounds = 12;
  int steps = 25;
  std::filesystem::path trace_dir;
  bool own_trace_dir = true;  // made by the bench: removed at exit
  int only = -1;              // --only WAY: run one way (for perf record), -1 = all
  int settle = 0;             // plain unmeasured updates before each measured one
};

[[noreturn]] void usage() {
  std::fprintf(
      stderr,
      "usage: torch_overhead_bench [--rounds R] [--steps K] [--trace-dir DIR] [--settle N] "
      "[--only none|capture|kineto|legacy|floor-bare|floor-inputs|floor-boxed]\n");
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  o.trace_dir =
      std::filesystem::temp_directory_path() / ("cg_torch_overhead_" + std::to_string(::getpid()));
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rounds" && i + 1 < argc) {
      o.rounds = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--steps" && i + 1 < argc) {
      o.steps = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--only" && i + 1 < argc) {
      const std::string w = argv[++i];
      o.only = -2;
      for (int k = 0; k < kWays; ++k)
        if (w == kWayFlag[k]) o.only = k;
      if (o.only == -2) usage();
    } else if (a == "--settle" && i + 1 < argc) {
      o.settle = std::max(0, std::atoi(argv[++i]));
    } else if (a == "--trace-dir" && i + 1 < argc) {
      o.trace_dir = argv[++i];
      o.own_trace_dir = false;
    } else {
      usage();
    }
  }
  return o;
}

struct BatchResult {
  std::int64_t batch = 0;
  Samples samples[ways];
  std::uint64_t ops = 0, memory_events = 0;
  std::size_t kineto_events = 0, legacy_events = 0;
  std::uintmax_t trace_bytes = 0;
};

BatchResult run_batch(std::int64_t batch, const Options& o) {
  BatchResult r;
  r.batch = batch;
  Trainer trainer({.batch = batch});
  // Each captured update writes a new file, removed after its finish (outside the timed
  // phases), as a user capturing one update writes a new trace: re-opening one path with O_TRUNC
  // made setup wait 1-4 ms in the file system for the previous trace's pages (strace -T).
  auto trace_of = [&](std::uint64_t step) {
    return o.trace_dir /
           ("update-b" + std::to_string(batch) + "-" + std::to_string(step) + ".jsonl");
  };
  std::uint64_t step_number = 1;
  auto run = [&](Way w, bool keep) {
    StepTiming t;
    switch (w) {
      case none:
        t = trainer.timed_train_step();
        break;
      case capture: {
        const std::filesystem::path trace = trace_of(step_number);
        const auto s = trainer.timed_captured_train_step({.trace = trace, .step = step_number}, t);
        r.ops = s.ops;
        r.memory_events = s.memory_events;
        std::error_code ec;
        r.trace_bytes = std::filesystem::file_size(trace, ec);
        std::filesystem::remove(trace, ec);
        break;
      }
      case kineto:
        r.kineto_events = trainer.profiled_train_step(torch_example::TorchProfiler::kineto_api, &t);
        break;
      case legacy:
        r.legacy_events = trainer.profiled_train_step(torch_example::TorchProfiler::legacy, &t);
        break;
      case floor_bare:
      case floor_inputs:
      case floor_boxed: {
        FloorObserver observer(w);  // installed and removed outside the timed update
        t = trainer.timed_train_step();
        break;
      }
      case ways:
        break;
    }
    ++step_number;
    if (keep) r.samples[w].add(t);
  };
  // Warm-up: allocator caches, oneDNN primitives, Adam state, first-call costs of each way.
  for (int i = 0; i < 20; ++i) run(none, false);
  for (int w = 0; w < ways; ++w)
    for (int i = 0; i < 5; ++i) run(static_cast<Way>(w), false);
  // Interleaved update by update, so drift (other load on the machine, thermal) hits every way
  // alike, in a fresh random order for each group of updates: each way leaves the heap and the
  // caches in its own state, and a fixed (even rotated) cyclic order would give every way the
  // same predecessor throughout (the floor way after the legacy profiler inherited its page
  // faults, the baseline always followed a floor way).
  std::mt19937 order_rng(static_cast<std::uint32_t>(batch));
  Way order[ways];
  for (int k = 0; k < ways; ++k) order[k] = static_cast<Way>(k);
  for (int round = 0; round < o.rounds; ++round)
    for (int i = 0; i < o.steps; ++i) {
      std::shuffle(order, order + ways, order_rng);
      for (const Way w : order)
        if (o.only < 0 || w == o.only || w == none) {
          for (int k = 0; k < o.settle; ++k) run(none, false);
          run(w, true);
        }
    }
  return r;
}

void print(const BatchResult& r) {
  const double base = median(r.samples[none].step);
  const double base_cpu = median(r.samples[none].step_cpu);
  std::printf("\n### batch %lld (%zu updates per row)\n\n", static_cast<long long>(r.batch),
              r.samples[none].step.size());
  std::printf(
      "| way | step wall ms | **wall ratio** | step CPU ms | **CPU ratio** | setup wall ms | "
      "finish wall ms | setup+step+finish wall ratio | CPU ratio | step page faults |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n");
  for (int w = 0; w < ways; ++w) {
    const Samples& s = r.samples[w];
    if (s.step.empty()) continue;
    std::printf(
        "| %s | %.3f | **%.2f×** | %.3f | **%.2f×** | %.3f | %.3f | %.2f× | %.2f× | %.0f |\n",
        kWayName[w], median(s.step), median(s.step) / base, median(s.step_cpu),
        median(s.step_cpu) / base_cpu, median(s.setup), median(s.finish), median(s.total) / base,
        median(s.total_cpu) / base_cpu, median(s.step_faults));
  }
  std::printf(
      "\nper update: capture %llu op events + %llu memory events (trace file %ju bytes); kineto "
      "%zu events; legacy %zu events\n",
      static_cast<unsigned long long>(r.ops), static_cast<unsigned long long>(r.memory_events),
      r.trace_bytes, r.kineto_events, r.legacy_events);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  std::filesystem::create_directories(o.trace_dir);
  std::printf(
      "torch_overhead_bench: %d rounds x %d updates per way and batch; ratios vs the "
      "no-capture median of the same run\n",
      o.rounds, o.steps);
  for (const std::int64_t batch : {8, 64}) print(run_batch(batch, o));
  if (o.own_trace_dir) {
    std::error_code ec;
    std::filesystem::remove_all(o.trace_dir, ec);
  }
  return 0;
}
