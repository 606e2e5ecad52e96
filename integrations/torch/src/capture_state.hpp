// The buffers one capture fills while the step runs. Plain data, no LibTorch type: the callback
// unit (recorder.cpp) appends to them with no per-op heap allocation once the vectors have
// grown, and the writer (event_writer.cpp) turns them into trace/6 events after the measured
// region ended, so formatting JSON never adds to the measured time (libtorch.md §4).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "candle_graph/instrument.hpp"
#include "pointer_table.hpp"

namespace candle_graph::libtorch::detail {

inline constexpr std::int8_t kNoStep = -1;

// Tensor identity, formatted as `t{serial}` (or the label), `@{version}`, `~{view_op}`.
struct TensorKey {
  std::uint64_t serial = 0;   // one per allocator block / first sight
  std::uint32_t version = 0;  // in-place writes since first seen
  std::uint32_t view_op = 0;  // op index + 1 of the op that produced this view, 0 if none
  bool operator==(const TensorKey&) const = default;
};

// The span an op or memory event belongs to: the innermost span open on the training thread
// (opened through the capture or directly on its TraceSession) and the step of the innermost
// open span that has one, so a plain span inside backward still counts as backward.
struct SpanRef {
  std::uint64_t number = 0;
  std::int8_t step = kNoStep;  // ExecutionStep value or kNoStep
};

struct OpSample {
  std::uint32_t name = 0;
  std::int32_t parent = -1;  // enclosing recorded op, -1 at top level
  SpanRef span;
  std::int64_t start_tick = 0;
  std::int64_t end_tick = 0;
  std::int64_t child_ticks = 0;  // wall time of directly nested recorded ops
  std::uint32_t inputs_begin = 0;
  std::uint32_t inputs_count = 0;
  std::uint64_t input_bytes = 0;
  bool has_output = false;
  TensorKey output;
  std::uint32_t shape_begin = 0;
  std::uint32_t shape_len = 0;
  std::uint8_t dtype = 0;   // index into CaptureState::dtype_labels
  std::uint8_t device = 0;  // index into CaptureState::device_labels
  std::uint64_t output_bytes = 0;
};

struct MemorySample {
  std::int64_t tick = 0;
  std::int64_t bytes = 0;  // > 0 alloc, < 0 free
  std::uint64_t serial = 0;
  std::int32_t op = -1;  // innermost recorded op open at the time
  SpanRef span;
  std::uint8_t device = 0;
};

// What the capture knows about one live allocator block (keyed by its data pointer).
struct Identity {
  std::uint64_t serial = 0;
  std::int64_t first_version = -1;  // version counter when first seen by an op, -1 before
  bool captured_alloc = false;      // allocated while the capture was recording
  void* storage = nullptr;          // weakly referenced c10::StorageImpl (recorder.cpp)
  std::uint64_t bytes = 0;
};

// Per serial (index = serial; [0] unused): what the writer needs once the block is gone.
struct SerialInfo {
  std::uint32_t label = 0;     // index into CaptureState::labels, 0 = `t{serial}`
  std::int32_t producer = -1;  // first op whose output is this block (shape/dtype source)
  bool internal = false;       // allocated by the capture's own work: never written
};

// What the capture's own bookkeeping costs per recorded event on this thread, measured when the
// capture starts (measure_capture_cost): nanoseconds added to the update per op and per memory
// event (0 when memory capture is off).
struct CaptureCost {
  std::uint64_t per_op_ns = 0;
  std::uint64_t per_memory_event_ns = 0;
  std::uint64_t calibration_records = 0;  // records timed with the callbacks on
};

struct CaptureState {
  TraceSession* session = nullptr;
  std::string measurement_name;
  std::string run_device;        // ProfileRun device, for the device_memory checkpoints
  std::int64_t origin_tick = 0;  // session-clock tick (instrument/clock.hpp) of ...
  std::uint64_t origin_ns = 0;   // ... this session timestamp
  bool paused = false;           // the capture's own tensor work runs unrecorded
  bool memory = false;           // the allocator reporter is installed

  std::vector<OpSample> ops;
  std::vector<TensorKey> inputs;  // flat, OpSample::inputs_begin/count
  std::vector<std::uint64_t> shapes;
  std::vector<MemorySample> memory_samples;
  std::vector<std::int32_t> open_ops;  // stack of recorded ops in progress
  std::int32_t last_top_level = -1;    // latest op recorded outside any other op
  std::optional<SpanGuard> auto_backward;
  std::uint64_t serial = 0;  // distinguishes captures for the engine's final callback
  CaptureCost cost;          // measured as this capture started (measure_capture_cost)

  // Interned op names (std::deque keeps the strings in place), by content and by pointer. Kept
  // when the state is recycled, so a later capture on the thread finds its names at once.
  std::deque<std::string> names;
  std::unordered_map<std::string_view, std::uint32_t> name_index;
  PointerTable<std::uint32_t> name_by_pointer;  // schema ops only
  std::vector<std::string> dtype_labels;
  std::vector<std::string> device_labels;
  std::vector<std::string> labels{""};  // tensor labels; 0 = none

  PointerTable<Identity> identities;  // by data pointer of the block
  std::vector<SerialInfo> serials{SerialInfo{}};

  // Blocks that are parameters/buffers or parameter gradients at the end (memory categories).
  std::unordered_set<std::uint64_t> parameter_serials;
  std::unordered_set<std::uint64_t> gradient_serials;

  std::uint64_t pre_capture_frees = 0;
  std::uint64_t pre_capture_free_bytes = 0;
  std::uint64_t frees_seen = 0;  // every free the reporter saw (matched or not)

  // Sizes the previous capture on this thread reached (what warm() reads).
  struct Used {
    std::size_t ops = 0, inputs = 0, shapes = 0, memory = 0, serials = 0;
  } used;

  // First use: room for a typical update, written once now so that the measured step neither
  // grows these buffers nor takes first-touch page faults on them.
  void preallocate();
  // Empties the state for the next capture on this thread; keeps every buffer's capacity and the
  // interned names (see acquire_capture_state).
  void reset_for_reuse();
  // Reads the memory the coming update will write (the previous capture's share of each buffer,
  // the lookup tables, the interned names) so that the update's first stores and probes hit the
  // cache instead of fetching lines that other work evicted since the last capture.
  void warm() const noexcept;

  std::uint64_t new_serial(bool internal) {
    serials.push_back(SerialInfo{0, -1, internal});
    return serials.size() - 1;
  }
  std::uint64_t timestamp_ns(std::int64_t tick) const {
    return tick <= origin_tick ? origin_ns
                               : origin_ns + static_cast<std::uint64_t>(tick - origin_tick);
  }
  // Asks the session (one uncontended lock): only top-level ops and memory events outside any
  // op need it, nested ops inherit their parent's span.
  SpanRef current_span() const {
    if (session == nullptr) return SpanRef{1, kNoStep};
    const TraceSession::CurrentSpan c = session->current_span();
    return SpanRef{c.id.number(), c.step ? static_cast<std::int8_t>(*c.step) : kNoStep};
  }
};

// Capture states are recycled per thread: the one of the previous capture on this thread (warm
// buffers, interned names), else a new preallocated one. Release after the recorder stopped.
std::unique_ptr<CaptureState> acquire_capture_state();
void release_capture_state(std::unique_ptr<CaptureState> state) noexcept;

// Formats a tensor id into `out` (cleared first).
void format_tensor_id(const CaptureState& state, const TensorKey& key, std::string& out);

}  // namespace candle_graph::libtorch::detail
