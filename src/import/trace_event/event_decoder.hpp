// Receives the scanner's event objects, parses them in batches with simdjson (one stage 1 per
// ~1 MiB batch: parse_many over the events copied back to back) and reduces each to the compact
// model. Errors name the file and the byte offset of the event.
#pragma once

#include <simdjson.h>

#include <string>
#include <utility>
#include <vector>

#include "import/trace_event/event_model.hpp"
#include "import/trace_event/event_scanner.hpp"
#include "trace/memory_budget.hpp"

namespace candle_graph::import::trace_event {

class EventDecoder final : public EventScanner::Handler {
 public:
  EventDecoder(std::string path, Model& model);
  void event(std::string_view bytes, std::uint64_t offset) override;
  void top_level_value(std::string_view key, std::string_view raw, std::uint64_t offset) override;
  // Decode what is still batched; call once after the scan.
  void finish();

 private:
  struct Fields;
  void flush();
  // One event, in passes: its members, then by `ph` a slice, a memory instant or a flow.
  void decode(simdjson::dom::element event, std::uint64_t offset);
  Fields read_fields(simdjson::dom::object obj) const;
  // Counts and drops an event whose `ts` is missing or unreadable; true when it did.
  bool reject_without_time(const Fields& f);
  void decode_slice(const Fields& f);
  std::int64_t correlation_of(simdjson::dom::element c, std::uint64_t offset);
  void record_launch(const Fields& f, std::int64_t ts_ns);
  void read_input_shapes(simdjson::dom::object args, Slice& s);
  void read_collective_args(simdjson::dom::object args, Slice& s);
  void read_device_args(simdjson::dom::object args, Slice& s, std::uint64_t offset);
  std::uint64_t lane_of(simdjson::dom::element tid);
  void note_host_process(simdjson::dom::element pid);
  CandleSpanArgs read_candle_span_args(simdjson::dom::object args);
  CandleOpArgs read_candle_op_args(simdjson::dom::object args);
  void decode_memory(const Fields& f);
  void decode_flow(const Fields& f, char ph);
  [[noreturn]] void fail(std::uint64_t offset, const std::string& what) const;

  std::string path_;
  Model& m_;
  std::vector<char> batch_;
  std::vector<std::pair<std::size_t, std::uint64_t>> starts_;  // (position in batch, file offset)
  simdjson::dom::parser parser_;
  simdjson::dom::parser single_;
  std::vector<std::uint64_t> shape_;
  std::uint64_t order_ = 0;
  std::int64_t last_host_pid_ = 0;  // spares the search for the usual repeated pid
  MemoryWatch memory_;              // checked after every batch
};

}  // namespace candle_graph::import::trace_event
