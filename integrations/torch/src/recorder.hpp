// The LibTorch hooks of one capture (recorder.cpp, the only unit that reads RecordFunction
// inputs and is therefore always compiled with NDEBUG — libtorch.md §5.1).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "capture_state.hpp"

namespace at {
class Tensor;
}

namespace candle_graph::libtorch::detail {

// Why memory capture cannot run on this thread (LibTorch's own profiler holds the
// PROFILER_STATE slot, libtorch.md §5.2), or nullopt when it can.
std::optional<std::string> memory_slot_problem();

// Whether a Recorder is installed on the calling thread.
bool recording_on_this_thread() noexcept;

// Installs the thread-local RecordFunction callbacks and (when `memory`) the allocator reporter
// on the calling thread; stop() (or the destructor) removes them on the same thread.
class Recorder {
 public:
  Recorder(CaptureState& state, bool memory);
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;
  ~Recorder();
  // Removes the hooks, counts pre-capture blocks that disappeared unreported, and drops the
  // weak references the identity table held. Idempotent.
  void stop();

 private:
  struct Hooks;
  CaptureState& state_;
  Hooks* hooks_ = nullptr;
};

// The id a tensor has in this capture right now (registers its block on first sight).
TensorKey identify(CaptureState& state, const at::Tensor& tensor);
// Names the tensor's block (parameter name, recorded input) in every later id.
void label_tensor(CaptureState& state, const at::Tensor& tensor, std::string_view label);
// Times small real ops (addmm, relu, sum on tiny tensors) and allocations through this thread's
// recorder against the same work with the hooks off, median over batches, then discards
// everything they recorded. Call with the recorder installed, before the measured region, and
// not while LibTorch's profiler is active (it would record them).
CaptureCost measure_capture_cost(CaptureState& state);
// Ends the automatic backward span if one is open.
void end_auto_backward(CaptureState& state) noexcept;
// The same for the capture with this serial, if it is the one recording on the calling thread.
void end_auto_backward_of(std::uint64_t capture_serial) noexcept;

}  // namespace candle_graph::libtorch::detail
