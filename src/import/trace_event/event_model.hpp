// The compact, in-memory form of a PyTorch trace: one small struct per event that matters, names
// interned once, timestamps converted to integer nanoseconds. Everything the mapping and assembly
// stages need, nothing of the source's JSON text (so memory stays well below the input size).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "candle_graph/trace_format.hpp"
#include "import/trace_event/bad_values.hpp"

namespace candle_graph::import::trace_event {

inline constexpr std::uint32_t kNone = 0xFFFFFFFFu;
inline constexpr std::size_t kMaxHostProcesses = 64;

// Strings stored once; ids are dense from 0.
class Interner {
 public:
  std::uint32_t intern(std::string_view s);
  std::string_view str(std::uint32_t id) const { return by_id_[id]; }
  std::size_t size() const noexcept { return by_id_.size(); }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>{}(s);
    }
  };
  std::deque<std::string> store_;
  std::unordered_map<std::string_view, std::uint32_t, Hash, std::equal_to<>> ids_;
  std::vector<std::string_view> by_id_;
};

// What one complete (`X`) event is for the converter (see kineto_mapping.cpp, legacy_mapping.cpp).
enum class Role : std::uint8_t {
  cpu_op,         // -> op on the host
  annotation,     // user_annotation / record_function -> span
  step_marker,    // ProfilerStep#N -> the measured region candidates
  device_op,      // kernel, memcpy, memset, cuda_sync -> device work on its device and stream
  runtime,        // cuda_runtime / cuda_driver / hip* calls -> runtime calls on the host
  candle_span,    // candle-graph's own Chrome export (cat "span")
  candle_op,      // candle-graph's own Chrome export (cat "op")
  candle_device,  // candle-graph's own Chrome export: device work (cat "device" or "sync")
  ignored,        // counted per category, not mapped
};

struct Slice {
  std::int64_t ts_ns = 0;
  std::int64_t dur_ns = 0;
  std::uint32_t name = kNone;
  std::uint32_t dtype = kNone;  // mapped dtype label of the first input (when recorded)
  std::uint32_t dims = kNone;   // index into Model::dims (first input's shape), kNone if absent
  // index into Model::candle_spans / candle_ops for candle roles, into Model::collectives for a
  // host op or kernel that carries `record_param_comms`' collective arguments
  std::uint32_t extra = kNone;
  std::uint64_t input_bytes = 0;  // sum of the recorded inputs' dense sizes
  std::uint64_t bytes = 0;        // memcpy / memset bytes
  std::int64_t correlation = -1;
  // The host thread of a host op or runtime call (`tid`), the stream of device work
  // (`args.stream`, else its `tid`); a string tid is interned and marked with bit 62.
  std::uint64_t lane = 0;
  std::int32_t device = -1;  // GPU index of a device op
  Role role = Role::ignored;
  OpKind kind = OpKind::host;  // runtime, or the kind of device work
};

struct Flow {
  std::int64_t id = 0;
  std::int64_t ts_ns = 0;
  std::uint32_t cat = kNone;
  char ph = 's';
};

struct MemoryInstant {
  std::int64_t ts_ns = 0;
  std::uint64_t addr = 0;
  std::int64_t bytes = 0;
  std::uint32_t device = kNone;  // interned device label ("cpu", "cuda:0", ...)
  std::uint64_t order = 0;       // position in the file (stable order for equal timestamps)
};

// candle-graph/chrome/1 span and op arguments (the export's exact ns values and ids).
struct CandleSpanArgs {
  std::uint32_t span_id = kNone;
  std::uint32_t parent_id = kNone;
  bool measured = false;
  std::int8_t step = -1;      // ExecutionStep or -1
  std::int8_t span_kind = 0;  // SpanKind
  std::optional<std::uint64_t> start_ns;
  std::optional<std::uint64_t> duration_ns;
};
struct CandleOpArgs {
  std::uint32_t span_id = kNone;
  std::uint32_t op_name = kNone;   // device slices: the raw name (the slice shows it demangled)
  std::uint32_t inputs_begin = 0;  // range in Model::candle_inputs
  std::uint32_t inputs_count = 0;
  std::uint32_t output = kNone;
  std::uint32_t shape = kNone;  // index into Model::dims
  std::uint32_t dtype = kNone;
  std::uint32_t device = kNone;
  std::optional<std::uint64_t> timestamp_ns;
  std::optional<std::uint64_t> duration_ns;
  std::optional<std::uint64_t> storage_bytes;
  std::optional<std::uint64_t> input_storage_bytes;
  // trace6.md §4.5.1
  std::int8_t op_kind = 0;  // OpKind
  std::optional<std::uint64_t> total_ns;
  std::optional<std::uint64_t> lane;  // `thread` of a host op, `stream` of device work
  std::optional<std::uint64_t> correlation;
  std::uint32_t collective = kNone;  // trace6.md §4.5.1, as our export writes them
  std::uint32_t process_group = kNone;
  std::optional<std::uint64_t> collective_seq;
};

// PyTorch's collective arguments (`Collective name`, `Process Group Name`, `Seq`), interned.
struct CollectiveArgs {
  std::uint32_t name = kNone;
  std::uint32_t process_group = kNone;
  std::optional<std::uint64_t> seq;
};

struct Model {
  Interner strings;
  std::vector<Slice> slices;
  std::vector<Flow> flows;
  std::vector<MemoryInstant> memory;
  std::vector<std::uint64_t> dims;  // shapes: [count, d0, d1, ...] back to back
  std::vector<CandleSpanArgs> candle_spans;
  std::vector<CandleOpArgs> candle_ops;
  std::vector<std::uint32_t> candle_inputs;
  std::vector<CollectiveArgs> collectives;
  // correlation id -> launch time of the runtime call (cuda_runtime / hip* / ac2g flow start)
  std::unordered_map<std::int64_t, std::int64_t> launch_ns;
  // counts of events not mapped, by "category" or "ph:X" (reported in tags and on stderr)
  std::map<std::string, std::uint64_t> ignored;
  std::uint64_t events = 0;
  std::uint64_t metadata_events = 0;
  std::uint64_t malformed_events = 0;  // valid JSON but missing ph/ts/name: skipped, counted
  std::uint64_t zeroed_durations = 0;  // a `dur` that was negative or not a number: read as 0
  BadValues bad_values;                // the two counts above (and more) by reason
  std::uint64_t slice_events_with_cat = 0;
  // The pids of Kineto's host ops (cpu_op rows), each once in order of first appearance (integers
  // and interned strings apart), at most kMaxHostProcesses in all: a profiler trace holds one
  // process, so more than one is a file that merges several (traces of several ranks, say).
  std::vector<std::int64_t> host_pids;
  std::vector<std::uint32_t> host_pid_names;
  bool more_host_processes = false;  // distinct pids beyond kMaxHostProcesses were seen
  // top-level values (raw JSON) the Kineto object carried
  std::map<std::string, std::string> top_level;

  std::uint32_t push_dims(const std::vector<std::uint64_t>& shape);
  std::vector<std::uint64_t> dims_at(std::uint32_t index) const;
};

}  // namespace candle_graph::import::trace_event
