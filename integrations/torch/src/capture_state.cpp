// Recycling of capture states (capture_state.hpp): the callbacks append to plain vectors, and a
// single-update capture would otherwise spend part of its measured step growing them from empty
// and faulting in their fresh pages (seen with perf on the overhead bench).
#include "capture_state.hpp"

#include <algorithm>

namespace candle_graph::libtorch::detail {
namespace {

// Capacities of a fresh state: the example CNN's update records ~350 ops with ~700 tensor
// inputs and ~200 memory events; larger models grow the buffers once, and the recycled state
// keeps that size for the next capture.
constexpr std::size_t kOps = 2048;
constexpr std::size_t kInputs = 4096;
constexpr std::size_t kShapes = 8192;
constexpr std::size_t kMemory = 2048;
constexpr std::size_t kSerials = 4096;
constexpr std::size_t kPointerNames = 4096;  // bound of the by-pointer name cache

thread_local std::unique_ptr<CaptureState> tl_spare;

// Reserves and writes every element once (resize value-initialises), then empties.
template <typename T>
void touch(std::vector<T>& v, std::size_t n) {
  v.resize(n);
  v.clear();
}

}  // namespace

void CaptureState::preallocate() {
  touch(ops, kOps);
  touch(inputs, kInputs);
  touch(shapes, kShapes);
  touch(memory_samples, kMemory);
  open_ops.reserve(64);
  serials.reserve(kSerials);
  serials.resize(kSerials);
  serials.resize(1);
  identities.reserve(512);  // live blocks of an update; a small table stays in cache
  name_index.reserve(512);
  name_by_pointer.reserve(512);
}

void CaptureState::reset_for_reuse() {
  used = Used{ops.size(), inputs.size(), shapes.size(), memory_samples.size(), serials.size()};
  session = nullptr;
  measurement_name.clear();
  run_device.clear();
  origin_tick = 0;
  origin_ns = 0;
  paused = false;
  memory = false;
  ops.clear();
  inputs.clear();
  shapes.clear();
  memory_samples.clear();
  open_ops.clear();
  last_top_level = -1;
  auto_backward.reset();
  serial = 0;
  cost = CaptureCost{};
  if (name_by_pointer.size() > kPointerNames) name_by_pointer.clear();
  labels.resize(1);
  identities.clear();
  serials.resize(1);
  parameter_serials.clear();
  gradient_serials.clear();
  pre_capture_frees = 0;
  pre_capture_free_bytes = 0;
  frees_seen = 0;
}

namespace {

// One load per cache line of [p, p + bytes).
void read_lines(const void* p, std::size_t bytes) noexcept {
  const auto* c = static_cast<const volatile unsigned char*>(p);
  for (std::size_t i = 0; i < bytes; i += 64) (void)c[i];
}

template <typename T>
void read_used(const std::vector<T>& v, std::size_t used) noexcept {
  read_lines(v.data(), std::min(used, v.capacity()) * sizeof(T));
}

}  // namespace

void CaptureState::warm() const noexcept {
  read_used(ops, used.ops);
  read_used(inputs, used.inputs);
  read_used(shapes, used.shapes);
  read_used(memory_samples, used.memory);
  read_used(serials, used.serials);
  read_lines(identities.data(), identities.bytes());
  read_lines(name_by_pointer.data(), name_by_pointer.bytes());
  for (const std::string& n : names) read_lines(n.data(), n.size() + 1);
}

std::unique_ptr<CaptureState> acquire_capture_state() {
  if (tl_spare) return std::move(tl_spare);
  auto state = std::make_unique<CaptureState>();
  state->preallocate();
  return state;
}

void release_capture_state(std::unique_ptr<CaptureState> state) noexcept {
  if (!state) return;
  state->reset_for_reuse();
  tl_spare = std::move(state);
}

}  // namespace candle_graph::libtorch::detail
