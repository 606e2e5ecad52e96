// Copies an event's strings and arrays into an arena, so that the event outlives the buffer it was
// parsed from. The document assembler uses one for the events it receives on one thread; with
// `-j N` each reading thread uses its own, into an arena of its own that joins the document's at
// the end (Arena::absorb), so that placing the events in file order, one chunk at a time, does not
// also copy them. Equal values share a copy where they repeat (ArenaCopies); which copy an event
// views never changes what it holds.
#pragma once

#include <string_view>
#include <vector>

#include "candle_graph/trace.hpp"
#include "trace/arena_copies.hpp"

namespace candle_graph {

class EventCopier {
 public:
  explicit EventCopier(Arena& arena) : arena_(&arena), copies_(arena) {}

  // Every field but the span references (an op's, tensor's or memory event's span_id, a span's
  // parent_id, an edge's spans): the assembler resolves those to the span's own id when it knows
  // the span, and copies them only when it does not.
  void own_fields(SpanStartEvent& e);
  void own_fields(OpEvent& e);
  void own_fields(TensorEvent& e);
  void own_fields(MemoryEvent& e);
  void own_fields(DeviceMemoryEvent& e);
  void own_fields(GradientEvent& e);

  // A value with few distinct values (a device, a root): one copy each.
  std::string_view intern(std::string_view s) { return copies_.intern(s); }

 private:
  std::string_view copy(std::string_view s) { return arena_->copy(s); }
  std::span<const std::string_view> copy_ids(std::span<const std::string_view> ids);
  const OpCollective* copy_collective(const OpCollective& c);

  Arena* arena_;
  ArenaCopies copies_;
  std::vector<std::string_view> scratch_ids_;
};

// Inline: the single-threaded read calls these once per event.
inline void EventCopier::own_fields(SpanStartEvent& e) {
  e.id = copy(e.id);
  e.name = copy(e.name);
}

inline void EventCopier::own_fields(OpEvent& e) {
  e.op_name = copies_.intern(e.op_name);
  e.inputs = copy_ids(e.inputs);
  if (e.output) e.output = copies_.recent(*e.output);
  e.shape = copies_.recent(e.shape);
  e.dtype = copies_.intern(e.dtype);
  e.device = copies_.intern(e.device);
  if (e.collective) e.collective = copy_collective(*e.collective);
}

inline void EventCopier::own_fields(TensorEvent& e) {
  e.tensor_id = copies_.recent(e.tensor_id);
  e.shape = copies_.recent(e.shape);
  e.dtype = copies_.intern(e.dtype);
  e.device = copies_.intern(e.device);
}

inline void EventCopier::own_fields(MemoryEvent& e) {
  e.tensor_id = copies_.recent(e.tensor_id);
  if (e.op_name) e.op_name = copies_.intern(*e.op_name);
  e.device = copies_.intern(e.device);
  e.shape = copies_.recent(e.shape);
  e.dtype = copies_.intern(e.dtype);
}

inline void EventCopier::own_fields(DeviceMemoryEvent& e) {
  e.device = copies_.intern(e.device);
}

inline void EventCopier::own_fields(GradientEvent& e) {
  e.event_id = copy(e.event_id);
  e.root = copies_.intern(e.root);
  e.key = copy(e.key);
}

}  // namespace candle_graph
