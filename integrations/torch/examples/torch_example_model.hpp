// The small CNN of the LibTorch examples, tests and bench, behind a header without LibTorch
// includes (only torch_example_model.cpp pays for <torch/torch.h>).
//
// Model: Conv2d(1→4, 3×3, pad 1) → ReLU → MaxPool 2 → Linear(64→32) → ReLU → Linear(32→10),
// Adam (lr 1e-2), cross-entropy. Data: a deterministic generated set (seeded normal 8×8 images,
// labels = argmax of a fixed seeded projection), so the loss falls and no download is needed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "candle_graph/torch/capture.hpp"

namespace torch_example {

struct ModelOptions {
  std::int64_t batch = 8;
  std::uint64_t seed = 42;
  bool unused_parameter = false;  // adds `unused` (Linear 3→3) that never gets a gradient
};

struct CaptureRequest {
  std::filesystem::path trace{};
  std::uint64_t step = 1;         // one-based number of this update / call
  std::string poison_gradient{};  // parameter whose gradient is set to NaN after backward
  bool memory = true;
  bool under_torch_profiler = false;  // LibTorch's profiler holds the PROFILER_STATE slot
  // Open forward, backward and optimizer spans with capture.session().begin_step_span (the
  // normal instrumentation API) instead of the capture's own span functions.
  bool session_spans = false;
  // When set, a plain span of this name is opened with capture.session().begin_span right after
  // backward() returns (around the gradient poisoning, if any).
  std::string span_after_backward{};
};

// Where the time of one instrumented update went (the overhead bench): `setup` before the
// update (opening the trace / enabling the profiler), `step` the update itself (collection),
// `finish` after it (gradient facts + formatting + writing the trace / disabling the profiler
// and building its event list). Each as wall time (steady_clock) and as CPU time of the calling
// thread (CLOCK_THREAD_CPUTIME_ID: LibTorch runs this model on one intra-op thread, and CPU
// time does not count the time other processes of a busy machine took the core).
struct PhaseTime {
  std::uint64_t wall_ns = 0;
  std::uint64_t cpu_ns = 0;
  // Minor page faults of the calling thread (getrusage RUSAGE_THREAD): a fault costs ~1 µs of
  // CPU time here, so a way that makes the update fault fresh pages shows it in this column.
  std::uint64_t minor_faults = 0;
};
struct StepTiming {
  PhaseTime setup;
  PhaseTime step;
  PhaseTime finish;
};

enum class TorchProfiler { kineto_api, legacy };

class Trainer {
 public:
  explicit Trainer(const ModelOptions& options);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // One uncaptured update (zero_grad, forward, loss, backward, Adam step); returns the loss.
  double train_step();
  // The same update, captured into request.trace.
  candle_graph::libtorch::CaptureSummary captured_train_step(const CaptureRequest& request,
                                                             double* loss = nullptr);
  // One uncaptured inference call (no grad) on the next batch.
  void infer();
  // One inference call, captured.
  candle_graph::libtorch::CaptureSummary captured_inference(const CaptureRequest& request);
  // One update under LibTorch's own profiler (shapes + memory on), for the overhead bench;
  // returns the number of events it reported.
  std::size_t profiled_train_step(TorchProfiler profiler = TorchProfiler::kineto_api,
                                  StepTiming* timing = nullptr);
  // The bench's uncaptured update: the same work as the captured one (data made beforehand).
  StepTiming timed_train_step();
  // captured_train_step with the time split of StepTiming.
  candle_graph::libtorch::CaptureSummary timed_captured_train_step(const CaptureRequest& request,
                                                                   StepTiming& timing);

  std::vector<std::string> parameter_names() const;
  std::int64_t batch() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace torch_example
