#include "export/chrome_trace_writer.hpp"

#include <algorithm>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "candle_graph/graph.hpp"
#include "export/chrome_device.hpp"
#include "export/chrome_events.hpp"
#include "export/chrome_json.hpp"
#include "export/chrome_tracks.hpp"
#include "output/json_text.hpp"
#include "output/test_hook.hpp"
#include "trace/huge_pages.hpp"
#include "trace/progress_counter.hpp"
#include "trace/short_string_hash.hpp"

namespace candle_graph::exporting {
namespace {

// `"pid":1,"tid":T,"ts":X` after the event's name: pid 1 is the run.
void on_run(ChromeJson& w, std::uint32_t tid, double ts_us) {
  where(w, 1, tid, ts_us);
}

// The common head of a span or op slice, up to the opening brace of its args:
// `{"ph":"X","cat":CAT,"name":…,"pid":1,"tid":…,"ts":…,"dur":…,"args":{`. An op of no duration
// (a runtime call shorter than Kineto's µs) is a thread-scoped instant (`"ph":"i","s":"t"`): two
// zero-length slices at one instant have no nesting order, and viewers misnest them.
void begin_slice(ChromeJson& w, std::string_view quoted_cat, std::string_view name,
                 const PlacedSlice& p) {
  const bool instant = p.is_op && p.dur_us == 0;
  begin_event(w, instant ? 'i' : 'X');
  w.key("cat").raw(quoted_cat);
  w.key("name").str(name);
  on_run(w, p.tid, p.ts_us);
  if (instant)
    w.key("s").raw("\"t\"");
  else
    w.key("dur").f64(p.dur_us);
  w.key("args").raw("{");
}

void write_span(ChromeJson& w, const SpanRecord& s, const PlacedSlice& p) {
  begin_slice(w, "\"span\"", s.name, p);
  w.first_key("span_id").str(s.id);
  if (s.parent_id) w.key("parent_id").str(*s.parent_id);
  w.key("measured").boolean(s.measured);
  if (s.step) w.key("step").str(to_string(*s.step));
  w.key("span_kind").str(to_string(s.kind));
  w.key("start_ns").u64(s.start_ns);
  w.key("duration_ns").u64(s.duration_ns);
  w.raw("}");
  w.end();
}

void write_op(ChromeJson& w, const OpEvent& o, const PlacedSlice& p) {
  begin_slice(w, "\"op\"", o.op_name, p);
  w.first_key("span_id").str(o.span_id);
  w.key("inputs").raw("[");
  for (std::size_t i = 0; i < o.inputs.size(); ++i) {
    if (i) w.raw(",");
    w.str(o.inputs[i]);
  }
  w.raw("]");
  if (o.output) w.key("output").str(*o.output);
  w.key("shape").raw("[");
  for (std::size_t i = 0; i < o.shape.size(); ++i) {
    if (i) w.raw(",");
    w.u64(o.shape[i]);
  }
  w.raw("]");
  w.key("dtype").str(o.dtype);
  w.key("device").str(o.device);
  w.key("timestamp_ns").u64(o.timestamp_ns);
  w.key("duration_ns").u64(o.duration_ns);
  w.key("storage_bytes").u64(o.storage_bytes.value_or(0));
  // trace6.md §4.5.1, each when present, so that convert(export(trace)) keeps them.
  if (o.input_storage_bytes) w.key("input_storage_bytes").u64(*o.input_storage_bytes);
  if (o.op_kind != OpKind::host) w.key("op_kind").str(to_string(o.op_kind));
  if (o.total_ns) w.key("total_ns").u64(*o.total_ns);
  if (o.lane) w.key("thread").u64(*o.lane);
  if (o.correlation) w.key("correlation").u64(*o.correlation);
  collective_args(w, o);
  w.raw("}");
  w.end();
}

void write_slice(ChromeJson& w, const TraceDocument& doc, const PlacedSlice& p) {
  if (p.is_op)
    write_op(w, doc.ops()[p.index], p);
  else
    write_span(w, doc.spans()[p.index], p);
}

// Events formatted in batches on other threads and written to `w` in the order added: the
// formatting is most of the export's own work, and what produces the events (the layout, the
// producer index of the data flows) is far faster, so it runs on every core. `format(w, item)`
// writes one item's event; at most `threads` batches (a few MB of text each) wait.
template <typename Item, typename Format>
class OrderedBatches {
 public:
  OrderedBatches(ChromeJson& w, unsigned threads, Format format)
      : w_(w), threads_(threads), batch_size_(batch_size()), format_(std::move(format)) {
    batch_.reserve(batch_size_);
  }
  OrderedBatches(const OrderedBatches&) = delete;
  OrderedBatches& operator=(const OrderedBatches&) = delete;

  void add(const Item& item) {
    batch_.push_back(item);
    if (batch_.size() == batch_size_) submit();
  }
  // Writes what is left; `w` then continues after these events.
  void finish() {
    if (!batch_.empty()) submit();
    while (!pending_.empty()) write_oldest();
    if (submitted_ > 0) w_.continue_after_element();
  }

 private:
  // 8192 events; tests make batches tiny so that batch boundaries fall everywhere.
  static std::size_t batch_size() {
    return output::size_from_env("CANDLE_GRAPH_TEST_EXPORT_BATCH", 8192);
  }

  // A batch's text and the writer's piece buffer, reused from batch to batch: fresh multi-MB
  // allocations are fresh pages, and their faults cost more than the formatting gained.
  struct Buffers {
    std::string text;
    std::unique_ptr<char[]> piece{new char[ChromeJson::kPiece]};
  };

  void submit() {
    if (pending_.size() >= threads_) write_oldest();
    // Only the very first event of the array has no separator before it.
    const bool after_element = submitted_++ > 0 || w_.wrote_element();
    std::unique_ptr<Buffers> buffers;
    if (spare_.empty()) {
      buffers = std::make_unique<Buffers>();
    } else {
      buffers = std::move(spare_.back());
      spare_.pop_back();
    }
    // Room for the largest batch so far and an eighth more, taken at once: a text that grows
    // by doubling faults in its pages again at every step (the buffers circulate through the
    // writing thread, which hands back its own). A buffer short of that gets half as much more,
    // in whole huge pages, so that it still fits as the batches grow by a few bytes: reserving
    // just the eighth sent 17 of the 57 batches of a 98 MB export to fresh memory.
    const std::size_t need = largest_text_ + largest_text_ / 8;
    const std::size_t page = std::max<std::size_t>(huge_page_size(), 1);
    const std::size_t room = (largest_text_ + largest_text_ / 2 + page - 1) / page * page;
    pending_.push_back(
        std::async(std::launch::async, [this, after_element, need, room, items = std::move(batch_),
                                        b = std::move(buffers)]() mutable {
          b->text.clear();
          if (b->text.capacity() < need) reserve_in_huge_pages(b->text, room);
          ChromeJson w([&](std::string_view piece) { b->text.append(piece); }, after_element,
                       b->piece.get());
          for (const Item& item : items) format_(w, item);
          w.flush();
          return std::move(b);
        }));
    batch_ = {};
    batch_.reserve(batch_size_);
  }
  void write_oldest() {
    std::unique_ptr<Buffers> b = pending_.front().get();
    pending_.pop_front();
    largest_text_ = std::max(largest_text_, b->text.size());
    w_.hand_over(b->text);
    spare_.push_back(std::move(b));
  }

  ChromeJson& w_;
  unsigned threads_;
  std::size_t batch_size_;
  Format format_;
  std::vector<Item> batch_;
  std::vector<std::unique_ptr<Buffers>> spare_;
  std::deque<std::future<std::unique_ptr<Buffers>>> pending_;  // destroyed first: waits
  std::size_t submitted_ = 0;
  std::size_t largest_text_ = 0;
};

// One s/f pair. Both ends bind to the slice enclosing (pid 1, tid, ts).
void write_flow(ChromeJson& w, std::uint64_t id, std::string_view cat, std::string_view name,
                std::uint32_t from_tid, double from_us, std::uint32_t to_tid, double to_us) {
  for (int end = 0; end < 2; ++end) {
    begin_event(w, end == 0 ? 's' : 'f');
    if (end == 1) w.key("bp").raw("\"e\"");
    w.key("id").u64(id);
    w.key("cat").str(cat);
    w.key("name").str(name);
    on_run(w, end == 0 ? from_tid : to_tid, end == 0 ? from_us : to_us);
    w.end();
  }
}

// A data flow: the op that produced `tensor` (its track and bind point) → an op that read it.
struct DataFlow {
  std::uint64_t id;
  std::string_view tensor;
  std::uint32_t from_tid;
  double from_us;
  std::uint32_t to_tid;
  double to_us;
};

// Producer of each tensor id, in document order: an open-addressing table of op indices keyed
// by the op's output id, 8 bytes per slot (the op and half of its id's hash: a probe reads the op
// and its id only when that half agrees, nearly always the op sought, which is a recent one and
// still in the cache). A table of the ids' views and whole hashes was 4 times the size, 32 MiB
// for a 295 MB trace, and missed the cache more often than the ops do.
class ProducerTable {
 public:
  ProducerTable(std::span<const OpEvent> ops, std::size_t outputs) : ops_(ops) {
    std::size_t cap = 16;
    while (cap < outputs + outputs / 2) cap <<= 1;  // load ≤ 2/3
    slots_.assign(cap, Slot{});
  }
  std::uint32_t find(std::string_view id) const {
    return slots_[place(id, ShortStringHash{}(id))].op;
  }
  // `op` produces `id`; it replaces an earlier producer of the id.
  void set(std::string_view id, std::uint32_t op) {
    const std::uint64_t h = ShortStringHash{}(id);
    slots_[place(id, h)] = Slot{tag(h), op};
  }

 private:
  struct Slot {
    std::uint32_t tag = 0;
    std::uint32_t op = kNoIndex;
  };
  static std::uint32_t tag(std::uint64_t h) noexcept { return static_cast<std::uint32_t>(h >> 32); }
  std::size_t mask() const noexcept { return slots_.size() - 1; }
  // The slot holding `id`'s producer, or the empty slot where it would go.
  std::size_t place(std::string_view id, std::uint64_t h) const {
    const std::uint32_t t = tag(h);
    for (std::size_t i = h & mask();; i = (i + 1) & mask()) {
      const Slot& s = slots_[i];
      if (s.op == kNoIndex || (s.tag == t && *ops_[s.op].output == id)) return i;
    }
  }

  std::span<const OpEvent> ops_;  // every op in the table has an output
  std::vector<Slot> slots_;
};

// Counter samples of the memory replay: one sample per device and instant (the last state at
// that timestamp), written when the device's next instant arrives, as two events (live bytes,
// bytes by category). Their text up to the timestamp is the same for every sample of a device,
// so it is formatted once, and the two events of a sample share the timestamp's text.
struct CounterState {
  ChromeJson* w = nullptr;
  ProgressCounter* progress = nullptr;
  std::uint64_t samples = 0;
  struct Device {
    // `,"name":NAME,"pid":1,"tid":1,"ts":` (on_run's members for track 1) after `{"ph":"C"`,
    // for each of the two counters.
    std::string live_head, category_head;
    MemoryTimelinePoint point;
  };
  std::vector<Device> devices;  // few devices: a linear search by name

  static std::string head(std::string_view name) {
    std::string text = ",\"name\":";
    output::append_json_string(text, name);
    text += ",\"pid\":1,\"tid\":1,\"ts\":";
    return text;
  }
  void write(const Device& d) {
    const MemoryTimelinePoint& p = d.point;
    const std::string_view ts = w->f64_text(static_cast<double>(p.timestamp_ns) / 1000.0);
    begin_event(*w, 'C');
    w->raw(d.live_head);
    w->raw(ts);
    w->key("args").lit("{");
    w->first_key("bytes").u64(p.live_bytes);
    w->lit("}}");
    begin_event(*w, 'C');
    w->raw(d.category_head);
    w->raw(ts);
    w->key("args").lit("{");
    bool first = true;
    p.by_category.for_each([&](MemoryCategory c, std::uint64_t bytes) {
      if (!first) w->lit(",");
      first = false;
      w->first_key(to_string(c)).u64(bytes);
    });
    w->lit("}}");
    samples += 2;
  }
  void add(const MemoryTimelinePoint& p) {
    progress->add();
    for (Device& d : devices) {
      if (d.point.device != p.device) continue;
      if (d.point.timestamp_ns != p.timestamp_ns) write(d);
      d.point = p;
      return;
    }
    const std::string device(p.device);
    devices.push_back(
        {head("live memory " + device), head("live memory " + device + " by category"), p});
  }
  void finish() {
    for (const Device& d : devices) write(d);
    devices.clear();
  }
  static void sink(const MemoryTimelinePoint& p, void* self) {
    static_cast<CounterState*>(self)->add(p);
  }
};

void write_device_memory(ChromeJson& w, const TraceDocument& doc, ChromeExportStats& stats) {
  std::vector<std::uint32_t> order(doc.device_memory().size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return doc.device_memory()[a].timestamp_ns < doc.device_memory()[b].timestamp_ns;
  });
  for (std::uint32_t i : order) {
    const DeviceMemoryEvent& d = doc.device_memory()[i];
    begin_event(w, 'C');
    w.key("name").str("device memory " + std::string(d.device));
    on_run(w, 1, static_cast<double>(d.timestamp_ns) / 1000.0);
    w.key("args").raw("{");
    w.first_key("used_bytes").u64(d.used_bytes);
    w.key("free_bytes").u64(d.free_bytes);
    if (d.reserved_bytes) w.key("reserved_bytes").u64(*d.reserved_bytes);
    w.raw("}");
    w.end();
    ++stats.counter_samples;
  }
}

void write_metadata(ChromeJson& w, const TraceDocument& doc, std::uint32_t tracks) {
  std::string process = "candle-graph: ";
  process += doc.run().entrypoint;
  process += " (run ";
  process += doc.run().run_id;
  process += ")";
  begin_event(w, 'M');
  w.key("name").raw("\"process_name\"");
  w.key("pid").raw("1");
  w.key("tid").raw("0");
  w.key("args").raw("{");
  w.first_key("name").str(process);
  w.raw("}");
  w.end();
  // One track's metadata event: `what` names the record, its one argument is `arg`.
  auto thread_meta = [&](std::uint32_t tid, const char* what, const char* arg) -> ChromeJson& {
    begin_event(w, 'M');
    w.key("name").raw(what);
    w.key("pid").raw("1");
    w.key("tid").u64(tid);
    w.key("args").raw("{");
    return w.first_key(arg);
  };
  for (std::uint32_t tid = 1; tid <= tracks; ++tid) {
    const std::string name = tid == 1 ? std::string("spans and ops")
                                      : "spans and ops, overlapping #" + std::to_string(tid - 1);
    thread_meta(tid, "\"thread_name\"", "name").str(name);
    w.raw("}");
    w.end();
    thread_meta(tid, "\"thread_sort_index\"", "sort_index").u64(tid);
    w.raw("}");
    w.end();
  }
}

void write_other_data(ChromeJson& w, const TraceDocument& doc) {
  const TraceRunMeta& r = doc.run();
  w.raw("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{");
  w.first_key("schema").str(kChromeSchema);
  w.key("trace_schema").str(doc.schema());
  w.key("run_id").str(r.run_id);
  w.key("correlation_id").str(r.correlation_id);
  w.key("entrypoint").str(r.entrypoint);
  w.key("phase").str(to_string(r.phase));
  w.key("capture_step").u64(r.capture_step);
  w.key("warmup_steps").u64(r.warmup_steps);
  w.key("device").str(r.device);
  w.key("timing_mode").str(to_string(r.timing_mode));
  w.key("timestamp").str(r.timestamp);
  w.key("measured_region_device_synchronized").boolean(r.measured_region_device_synchronized);
  if (r.candle_version) w.key("candle_version").str(*r.candle_version);
  w.key("tags").raw("{");
  for (std::size_t i = 0; i < r.tags.size(); ++i) {
    if (i) w.raw(",");
    w.str(r.tags[i].key);
    w.raw(":");
    w.str(r.tags[i].value);
  }
  w.raw("}");
  // A PyTorch trace's steps, so that the export read back still knows them (trace6.md §4.2.1).
  if (!r.profiler_steps.empty()) {
    w.key("profiler_steps").lit("[");
    for (std::size_t i = 0; i < r.profiler_steps.size(); ++i) {
      const ProfilerStepRecord& s = r.profiler_steps[i];
      if (i) w.lit(",");
      w.lit("{\"step\":").u64(s.step);
      w.key("wall_ns").u64(s.wall_ns);
      w.key("device_busy_ns").u64(s.device_busy_ns);
      w.lit("}");
    }
    w.lit("]");
  }
  w.raw("}}\n");
}

}  // namespace

ChromeExportStats write_chrome_trace(const TraceDocument& doc,
                                     const std::function<void(std::string_view)>& sink,
                                     unsigned threads, const ChromeJson::Handover& hand_over,
                                     const ProgressCallback& report) {
  doc.check_indexed();
  ChromeExportStats stats;
  // The document's events handled, once per pass over them: the slices, the device slices and
  // their launch flows, the data flows over the ops, and the memory replay, which hands over one
  // timeline point per memory event.
  ProgressCounter progress(report, doc.spans().size() + 2 * doc.ops().size() +
                                       2 * doc.device_ops().size() + doc.memory().size());
  ChromeJson w(sink);
  if (hand_over) w.set_handover(hand_over);
  w.raw("{\"traceEvents\":[");

  // Slices, as they are placed. Per op: its track and where the data flows bind (a time in its
  // slice that no nested op covers).
  std::vector<std::uint32_t> op_tid(doc.ops().size(), 0);
  std::vector<double> op_bind;
  std::vector<std::uint32_t> span_tid(doc.spans().size(), 0);
  std::vector<double> span_bind;
  const auto format_slice = [&doc](ChromeJson& out, const PlacedSlice& p) {
    write_slice(out, doc, p);
  };
  std::optional<OrderedBatches<PlacedSlice, decltype(format_slice)>> batches;
  if (threads > 1) batches.emplace(w, threads, format_slice);
  const TrackLayoutStats layout = layout_tracks(
      doc,
      [&](const PlacedSlice& p) {
        if (batches)
          batches->add(p);
        else
          write_slice(w, doc, p);
        progress.add();
        if (p.is_op) {
          op_tid[p.index] = p.tid;
          ++stats.ops;
        } else {
          span_tid[p.index] = p.tid;
          ++stats.spans;
        }
      },
      &span_bind, &op_bind);
  if (batches) batches->finish();
  stats.tracks = layout.tracks;
  stats.clamped = layout.clamped;
  stats.overflowed = layout.overflowed;
  // Device work after the host slices, on its own processes (chrome.md §E8).
  const DeviceLayout device_layout = layout_device_lanes(doc);
  DeviceExportStats device_stats;
  write_device_slices(w, doc, device_layout, device_stats, progress);
  stats.device_slices = device_stats.slices;
  stats.device_overflowed = device_stats.overflowed;

  // Flows. Ids are unique per category pair (s and f of one flow share cat, name and id).
  std::uint64_t flow_id = 0;
  for (const EdgeEvent& e : doc.edges()) {
    const std::uint32_t from = doc.find_span(e.from_span), to = doc.find_span(e.to_span);
    if (from == kNoIndex || to == kNoIndex || span_tid[from] == 0 || span_tid[to] == 0) continue;
    write_flow(w, ++flow_id, format::chrome::kEdgeFlowCategory, "edge", span_tid[from],
               span_bind[from], span_tid[to], span_bind[to]);
    ++stats.edge_flows;
  }
  std::size_t outputs = 0;
  for (const OpEvent& o : doc.ops()) outputs += o.output ? 1 : 0;
  {
    const auto format_flow = [](ChromeJson& out, const DataFlow& f) {
      write_flow(out, f.id, format::chrome::kDataFlowCategory, f.tensor, f.from_tid, f.from_us,
                 f.to_tid, f.to_us);
    };
    std::optional<OrderedBatches<DataFlow, decltype(format_flow)>> flows;
    if (threads > 1) flows.emplace(w, threads, format_flow);
    ProducerTable producers(doc.ops(), outputs);
    for (std::uint32_t k = 0; k < doc.ops().size(); ++k) {
      const OpEvent& o = doc.ops()[k];
      progress.add();
      if (!o.output) continue;  // graph/3: ops without an output have no data edges
      for (std::size_t j = 0; j < o.inputs.size(); ++j) {
        const std::string_view in = o.inputs[j];
        if (std::find(o.inputs.begin(), o.inputs.begin() + j, in) != o.inputs.begin() + j)
          continue;  // the same input twice is one data edge
        const std::uint32_t p = producers.find(in);
        if (p == kNoIndex || op_tid[p] == 0 || op_tid[k] == 0) continue;
        const DataFlow flow{++flow_id, in, op_tid[p], op_bind[p], op_tid[k], op_bind[k]};
        if (flows)
          flows->add(flow);
        else
          format_flow(w, flow);
        ++stats.data_flows;
      }
      producers.set(*o.output, k);
    }
    if (flows) flows->finish();
  }
  write_launch_flows(w, doc, device_layout, HostPlacement{op_tid, op_bind}, flow_id, device_stats,
                     progress);
  stats.launch_flows = device_stats.launch_flows;
  std::vector<std::uint32_t>().swap(op_tid);
  std::vector<double>().swap(op_bind);

  // Counters: the memory replay's timeline, streamed; then the device checkpoints.
  CounterState counters;
  counters.w = &w;
  counters.progress = &progress;
  analyze_memory(doc, &CounterState::sink, &counters);
  counters.finish();
  stats.counter_samples = counters.samples;
  write_device_memory(w, doc, stats);

  write_metadata(w, doc, stats.tracks);
  write_device_metadata(w, device_layout);
  write_other_data(w, doc);
  w.flush();
  stats.bytes = w.bytes();
  progress.finish();
  return stats;
}

}  // namespace candle_graph::exporting
