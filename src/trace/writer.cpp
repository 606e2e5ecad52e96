// trace6.md §5.3 writer: a whole document as JSONL, each event written by append_event_json.
#include "candle_graph/trace_io.hpp"
#include "output/atomic_file.hpp"

namespace candle_graph {
namespace {

template <typename F>
void for_each_event(const TraceDocument& doc, F&& f) {
  f(TraceEvent(MetaEvent{doc.schema(), doc.run()}));
  for (const SpanRecord& s : doc.spans()) {
    f(TraceEvent(
        SpanStartEvent{s.id, s.parent_id, s.name, s.start_ns, s.kind, s.measured, s.step}));
    if (s.closed) f(TraceEvent(SpanEndEvent{s.id, s.duration_ns}));
  }
  for (const auto& e : doc.ops()) f(TraceEvent(e));
  for (const auto& e : doc.device_ops()) f(TraceEvent(e));
  for (const auto& e : doc.tensors()) f(TraceEvent(e));
  for (const auto& e : doc.memory()) f(TraceEvent(e));
  for (const auto& e : doc.device_memory()) f(TraceEvent(e));
  for (const auto& e : doc.gradients()) f(TraceEvent(e));
  for (const auto& e : doc.edges()) f(TraceEvent(e));
}

}  // namespace

std::vector<TraceEvent> to_events(const TraceDocument& doc) {
  std::vector<TraceEvent> events;
  for_each_event(doc, [&](TraceEvent&& e) { events.push_back(std::move(e)); });
  return events;
}

std::string write_jsonl_string(const TraceDocument& doc) {
  std::string out;
  for_each_event(doc, [&](const TraceEvent& e) {
    append_event_json(out, e);
    out.push_back('\n');
  });
  return out;
}

void write_jsonl(const std::filesystem::path& path, const TraceDocument& doc) {
  output::AtomicFile file(path);
  std::string buf;
  for_each_event(doc, [&](const TraceEvent& e) {
    append_event_json(buf, e);
    buf.push_back('\n');
    if (buf.size() >= (1u << 20)) {
      file.write(buf);
      buf.clear();
    }
  });
  file.write(buf);
  file.commit();
}

}  // namespace candle_graph
