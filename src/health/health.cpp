// trace6.md §6 analyze_health: the 21 checks in the original's emission order. Every check is one
// pass over an index built once (parent links, child duration sums, cycle memo), so the whole
// analysis is linear in the events, plus a stable sort of the memory events.
#include "candle_graph/health.hpp"

#include <algorithm>
#include <charconv>
#include <future>
#include <numeric>
#include <unordered_map>

#include "events/saturating.hpp"
#include "output/markdown_text.hpp"
#include "trace/host_nesting.hpp"
#include "trace/live_key_table.hpp"

namespace candle_graph {

std::string_view to_string(HealthSeverity v) noexcept {
  return v == HealthSeverity::error ? "error" : "warning";
}

namespace {

std::string tick(std::string_view s) {
  return output::quoted_code(s);
}

// Checks 11–13 key live allocations by (device, tensor_id). When every memory event names the
// same device (the usual trace) the id alone tells keys apart and the table settles short ids
// from its slots; otherwise every match is confirmed with the full comparison. The device's
// number salts the hash either way. The events are visited in `order`, one call of insert or
// erase per position, in turn.
class LiveAllocations {
  // The full comparison, for keys the slot cannot settle (ids of 8 bytes or more; every key when
  // the trace has several devices).
  struct SameKey {
    const std::vector<MemoryEvent>& memory;
    bool operator()(std::uint32_t a, std::uint32_t b) const {
      return memory[a].tensor_id == memory[b].tensor_id && memory[a].device == memory[b].device;
    }
  };
  struct KeyAt {
    LiveAllocations* self;
    detail::LiveKey operator()(std::size_t pos) const { return self->key(self->order_[pos]); }
  };

 public:
  // `one_device`: every event names the same device.
  LiveAllocations(const std::vector<MemoryEvent>& memory, const std::vector<std::uint32_t>& order,
                  bool one_device)
      : memory_(memory),
        order_(order),
        one_device_(one_device),
        keys_(order.size(), KeyAt{this}, table_) {}

  // False when an equal key is already live.
  bool insert(std::size_t pos) {
    return table_.insert(order_[pos], keys_.next(pos, table_), {}, SameKey{memory_}).event ==
           kNoIndex;
  }
  // False when no equal key is live.
  bool erase(std::size_t pos) {
    return table_.take(keys_.next(pos, table_), order_[pos], SameKey{memory_}).event != kNoIndex;
  }
  std::size_t size() const noexcept { return table_.size(); }
  bool empty() const noexcept { return table_.empty(); }

 private:
  detail::LiveKey key(std::uint32_t event) {
    const MemoryEvent& m = memory_[event];
    if (!have_last_ || m.device != last_device_) {  // consecutive events nearly always agree
      have_last_ = true;
      last_device_ = m.device;
      last_number_ =
          devices_.emplace(m.device, static_cast<std::uint32_t>(devices_.size())).first->second;
    }
    return detail::LiveKey::of(m.tensor_id, last_number_, one_device_);
  }

  const std::vector<MemoryEvent>& memory_;
  const std::vector<std::uint32_t>& order_;
  const bool one_device_;
  // Declared before keys_, which reads them while it is constructed.
  detail::LiveKeyTable<> table_;
  std::unordered_map<std::string_view, std::uint32_t> devices_;
  bool have_last_ = false;
  std::string_view last_device_;
  std::uint32_t last_number_ = 0;
  detail::KeysAhead<KeyAt> keys_;
};

// The memory events' indices in (stable) timestamp order, and whether they all name one device.
// Producers write them in time order, so that is checked first, in the same pass as the devices
// (each pass over the events reads 128 bytes per event from memory); otherwise (timestamp, index)
// pairs are sorted, which is the stable order and reads the timestamps once, sequentially,
// instead of from the events in every comparison (a cache miss each on a large trace).
struct MemoryStream {
  std::vector<std::uint32_t> order;
  bool one_device = true;
};

MemoryStream memory_stream(const std::vector<MemoryEvent>& memory) {
  MemoryStream s;
  s.order.resize(memory.size());
  std::iota(s.order.begin(), s.order.end(), 0u);
  if (memory.empty()) return s;
  const std::string_view device = memory[0].device;
  // The document interns device names, so equal names are nearly always the same view.
  auto same_device = [&](const MemoryEvent& m) {
    return (m.device.data() == device.data() && m.device.size() == device.size()) ||
           m.device == device;
  };
  std::size_t i = 1;
  for (; i < memory.size(); ++i) {
    if (memory[i].timestamp_ns < memory[i - 1].timestamp_ns) break;
    s.one_device = s.one_device && same_device(memory[i]);
  }
  if (i == memory.size()) return s;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> keyed(memory.size());
  for (std::uint32_t k = 0; k < memory.size(); ++k) {
    keyed[k] = {memory[k].timestamp_ns, k};
    s.one_device = s.one_device && same_device(memory[k]);
  }
  std::sort(keyed.begin(), keyed.end());
  for (std::size_t k = 0; k < keyed.size(); ++k) s.order[k] = keyed[k].second;
  return s;
}

// For every span: does walking its parent links ever revisit a span? Memoized, so linear.
std::vector<bool> spans_in_cycles(const TraceDocument& doc) {
  const auto& parent = doc.span_parent();
  const std::size_t n = doc.spans().size();
  enum : std::uint8_t { kUnseen, kOnPath, kAcyclic, kCyclic };
  std::vector<std::uint8_t> state(n, kUnseen);
  std::vector<std::uint32_t> path;
  for (std::size_t start = 0; start < n; ++start) {
    if (state[start] != kUnseen) continue;
    path.clear();
    std::uint32_t cur = static_cast<std::uint32_t>(start);
    std::uint8_t verdict = kAcyclic;
    while (true) {
      if (cur == kNoIndex) break;
      if (state[cur] == kOnPath) {
        verdict = kCyclic;
        break;
      }
      if (state[cur] != kUnseen) {
        verdict = state[cur];
        break;
      }
      state[cur] = kOnPath;
      path.push_back(cur);
      cur = parent[cur];
    }
    for (std::uint32_t s : path) state[s] = verdict;
  }
  std::vector<bool> cyclic(n);
  for (std::size_t i = 0; i < n; ++i) cyclic[i] = state[i] == kCyclic;
  return cyclic;
}

class HealthBuilder {
 public:
  explicit HealthBuilder(TraceHealth& h) : h_(h) {}
  void error(std::string_view code, std::string message) {
    h_.trusted = false;
    h_.issues.push_back({HealthSeverity::error, code, std::move(message)});
  }
  void warning(std::string_view code, std::string message) {
    h_.issues.push_back({HealthSeverity::warning, code, std::move(message)});
  }
  void append(std::vector<HealthIssue> issues) {
    for (HealthIssue& i : issues) {
      if (i.severity == HealthSeverity::error) h_.trusted = false;
      h_.issues.push_back(std::move(i));
    }
  }

 private:
  TraceHealth& h_;
};

}  // namespace

std::vector<std::string> TraceHealth::gaps() const {
  std::vector<std::string> out;
  for (const auto& i : issues)
    if (i.severity == HealthSeverity::warning) out.push_back(i.message);
  return out;
}

std::string TraceHealth::error_summary() const {
  std::string out;
  for (const auto& i : issues) {
    if (i.severity != HealthSeverity::error) continue;
    if (!out.empty()) out.append("; ");
    out.append(i.message);
  }
  return out;
}

namespace {

std::string counted(std::uint64_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

// Whether a span enclosing span `i` is closed (parent links followed at most n times: cycles).
bool has_closed_ancestor(const std::vector<std::uint32_t>& parent,
                         const std::vector<SpanRecord>& spans, std::size_t i) {
  for (std::size_t hops = 0; hops < spans.size() && parent[i] != kNoIndex; ++hops) {
    i = parent[i];
    if (spans[i].closed) return true;
  }
  return false;
}

// Added (not in the original): what a lossy source did to the numbers, each with its count and
// the numbers it affects, after the original's 21 checks. Warnings only.
std::vector<HealthIssue> lossy_source_warnings(const TraceDocument& doc) {
  TraceHealth t;
  HealthBuilder b(t);
  const std::uint64_t partial = count_partial_overlaps(doc);
  if (partial > 0)
    b.warning("host_nesting_broken",
              counted(partial, "host op starts", "host ops start") +
                  " inside an op of their thread and end after it; they nest in "
                  "no op there, so host self and total times around them count some time twice");
  std::uint64_t unlinked = 0;
  std::unordered_map<std::uint64_t, char> calls;
  for (const OpEvent& op : doc.ops())
    if (op.op_kind == OpKind::runtime && op.correlation) calls.emplace(*op.correlation, 0);
  for (const OpEvent& op : doc.device_ops())
    if (op.op_kind != OpKind::sync) unlinked += !op.correlation || !calls.count(*op.correlation);
  if (unlinked > 0)
    b.warning("device_ops_without_launch",
              counted(unlinked, "device operation has", "device operations have") +
                  " no runtime call with their correlation id; their device time "
                  "is unattributed (no op's device time includes it)");
  // Work that the measured region launched or started but that ended after the region did: the
  // region's wall time does not cover it, though it counts in device and op times.
  std::uint64_t region_end = 0;
  bool measured = false;
  for (const SpanRecord& sp : doc.spans()) {
    if (!sp.measured || !sp.closed) continue;
    region_end = std::max(region_end, sp.start_ns + sp.duration_ns);
    measured = true;
  }
  std::uint64_t outside = 0;
  // Only events with a true extent (total_ns, trace6.md §4.5.1): an original op's duration_ns is
  // its self time, which says nothing of where it ended.
  auto crosses_end = [&](const OpEvent& op) {
    return op.total_ns && op.op_kind != OpKind::sync && op.timestamp_ns <= region_end &&
           host_end(op) > region_end;
  };
  if (measured) {
    for (const OpEvent& op : doc.device_ops()) outside += crosses_end(op);
    for (const OpEvent& op : doc.ops()) outside += crosses_end(op);
  }
  if (outside > 0)
    b.warning("events_outside_window",
              counted(outside, "op or device operation", "ops or device operations") +
                  " started in the measured region and ended after it: the region's wall time "
                  "does not cover them, while op and device times include them");
  return std::move(t.issues);
}

// 11–13: allocation pairing over the memory events in (stable) timestamp order.
std::vector<HealthIssue> allocation_pairing(const TraceDocument& doc) {
  TraceHealth t;
  HealthBuilder b(t);
  const MemoryStream stream = memory_stream(doc.memory());
  const std::vector<std::uint32_t>& order = stream.order;
  LiveAllocations live(doc.memory(), order, stream.one_device);
  for (std::size_t pos = 0; pos < order.size(); ++pos) {
    const std::uint32_t idx = order[pos];
    const MemoryEvent& m = doc.memory()[idx];
    if (m.action == MemoryAction::alloc) {
      if (!live.insert(pos))
        b.error("duplicate_allocation",
                "tensor " + tick(m.tensor_id) + " was allocated twice without a free");
    } else if (!live.erase(pos)) {
      b.error("unpaired_free",
              "tensor " + tick(m.tensor_id) + " was freed without a live allocation");
    }
  }
  if (!live.empty())
    b.warning("retained_allocations", std::to_string(live.size()) +
                                          " explicit allocations remained live at measurement end");
  return std::move(t.issues);
}

}  // namespace

TraceHealth analyze_health(const TraceDocument& doc) {
  return analyze_health(doc, 1);
}

TraceHealth analyze_health(const TraceDocument& doc, unsigned threads) {
  doc.check_indexed();
  // Two groups of checks need nothing the others compute: the allocation pairing and the last
  // checks (host nesting, launches, the region's end). With more threads they run beside the
  // rest, and their issues take their places in the list as before.
  std::future<std::vector<HealthIssue>> pairing, lossy;
  if (threads > 1) {
    pairing = std::async(std::launch::async, [&doc] { return allocation_pairing(doc); });
    lossy = std::async(std::launch::async, [&doc] { return lossy_source_warnings(doc); });
  }
  TraceHealth h;
  HealthBuilder b(h);
  const auto& spans = doc.spans();
  const auto& parent = doc.span_parent();
  const std::size_t n = spans.size();

  // 1. duplicate_span_id
  {
    // The original counts a set of all ids; the document's span index already holds each
    // distinct id once (a lookup per span here missed the cache on every span of a large trace).
    const std::size_t unique = doc.distinct_span_ids();
    if (unique != n)
      b.error("duplicate_span_id", "span IDs must be unique; found " + std::to_string(n) +
                                       " records but " + std::to_string(unique) + " unique IDs");
  }
  // 2. root_count, 3. measurement_count
  const auto roots = static_cast<std::uint64_t>(
      std::count_if(spans.begin(), spans.end(), [](const SpanRecord& s) { return !s.parent_id; }));
  if (roots != 1)
    b.error("root_count", "expected exactly one root span, found " + std::to_string(roots));
  const auto measured = static_cast<std::uint64_t>(
      std::count_if(spans.begin(), spans.end(), [](const SpanRecord& s) { return s.measured; }));
  if (measured != 1)
    b.error("measurement_count",
            "expected exactly one measured region, found " + std::to_string(measured));

  // 4–7, per span in document order.
  const std::vector<bool> cyclic = spans_in_cycles(doc);
  for (std::size_t i = 0; i < n; ++i) {
    const SpanRecord& s = spans[i];
    if (!s.closed) b.error("open_span", "span " + tick(s.id) + " was not closed");
    if (s.parent_id) {
      const std::uint32_t p = parent[i];
      if (p == kNoIndex) {
        b.error("unknown_parent",
                "span " + tick(s.id) + " refers to missing parent " + tick(*s.parent_id));
      } else {
        const SpanRecord& ps = spans[p];
        const std::uint64_t end = sat_add(s.start_ns, s.duration_ns);
        const std::uint64_t pend = sat_add(ps.start_ns, ps.duration_ns);
        if (s.start_ns < ps.start_ns || end > pend)
          b.error("child_outside_parent",
                  "span " + tick(s.id) + " interval " + std::to_string(s.start_ns) + ".." +
                      std::to_string(end) + " is outside parent " + tick(ps.id) + " interval " +
                      std::to_string(ps.start_ns) + ".." + std::to_string(pend));
      }
    }
    if (cyclic[i]) b.error("span_cycle", "span " + tick(s.id) + " participates in a parent cycle");
  }

  // 8. children_exceed_parent (direct child spans only; ops are not counted)
  {
    std::vector<std::uint64_t> child_sum(n, 0);
    std::vector<bool> has_child(n, false);
    for (std::size_t i = 0; i < n; ++i) {
      if (parent[i] == kNoIndex) continue;
      child_sum[parent[i]] = sat_add(child_sum[parent[i]], spans[i].duration_ns);
      has_child[parent[i]] = true;
    }
    for (std::size_t i = 0; i < n; ++i)
      if (has_child[i] && child_sum[i] > spans[i].duration_ns)
        b.error("children_exceed_parent",
                "children of span " + tick(spans[i].id) + " total " + std::to_string(child_sum[i]) +
                    " ns, exceeding its " + std::to_string(spans[i].duration_ns) + " ns duration");
  }

  // 9. unknown_span (ops, then tensors, then memory), 10. unknown_edge_span
  for (std::size_t i = 0; i < doc.ops().size(); ++i)
    if (doc.op_span()[i] == kNoIndex)
      b.error("unknown_span",
              "operation evidence refers to missing span " + tick(doc.ops()[i].span_id));
  for (std::size_t i = 0; i < doc.device_ops().size(); ++i)
    if (doc.device_op_span()[i] == kNoIndex)
      b.error("unknown_span",
              "operation evidence refers to missing span " + tick(doc.device_ops()[i].span_id));
  for (std::size_t i = 0; i < doc.tensors().size(); ++i)
    if (doc.tensor_span()[i] == kNoIndex)
      b.error("unknown_span",
              "tensor evidence refers to missing span " + tick(doc.tensors()[i].span_id));
  for (std::size_t i = 0; i < doc.memory().size(); ++i)
    if (doc.memory_span()[i] == kNoIndex)
      b.error("unknown_span",
              "memory evidence refers to missing span " + tick(doc.memory()[i].span_id));
  for (const auto& e : doc.edges())
    if (doc.find_span(e.from_span) == kNoIndex || doc.find_span(e.to_span) == kNoIndex)
      b.error("unknown_edge_span",
              "edge " + tick(e.from_span) + " -> " + tick(e.to_span) + " refers to a missing span");

  // 11–13. allocation pairing over memory events in (stable) timestamp order
  b.append(pairing.valid() ? pairing.get() : allocation_pairing(doc));

  // 14–21. missing evidence (warnings)
  EvidenceCoverage& c = h.coverage;
  c.spans = n;
  c.root_spans = roots;
  c.measured_spans = measured;
  for (const auto& s : spans) {
    c.closed_spans += s.closed;
    if (s.step == ExecutionStep::forward) ++c.forward_spans;
    if (s.step == ExecutionStep::backward) ++c.backward_spans;
    if (s.step == ExecutionStep::optimizer) ++c.optimizer_spans;
  }
  c.operations = doc.ops().size() + doc.device_ops().size();  // every op event, as the original
  c.tensors = doc.tensors().size();
  c.memory_events = doc.memory().size();
  c.device_memory_samples = doc.device_memory().size();
  c.gradients = doc.gradients().size();
  c.edges = doc.edges().size();

  const bool train = doc.run().phase == ExecutionPhase::train;
  if (c.operations == 0) b.warning("operations_absent", "no timed operation evidence was captured");
  if (c.tensors == 0) b.warning("tensors_absent", "no tensor checkpoints were captured");
  if (c.memory_events == 0) b.warning("memory_absent", "no tensor memory events were captured");
  if (c.device_memory_samples == 0)
    b.warning("device_memory_absent", "no device-memory checkpoints were captured");
  if (train && c.gradients == 0)
    b.warning("gradients_absent", "no gradient facts were captured for this training run");
  if (train && c.forward_spans == 0) b.warning("forward_absent", "no forward span was tagged");
  if (train && c.backward_spans == 0) b.warning("backward_absent", "no backward span was tagged");
  if (train && c.optimizer_spans == 0)
    b.warning("optimizer_absent", "no optimizer span was tagged");
  // open_span says a span stayed open; a measured region open inside spans that are all open
  // too means the capture itself never finished (its process was killed or crashed), which the
  // user should read first-hand. A closed enclosing span means the producer finished the file.
  for (std::size_t i = 0; i < n; ++i)
    if (spans[i].measured && !spans[i].closed && !has_closed_ancestor(parent, spans, i))
      b.error("capture_cut_short",
              "the measured region " + tick(spans[i].id) +
                  " never ended: the capture was cut short (its process stopped while "
                  "recording), so the trace holds only what was written before that");
  // A profiler trace holds one process. An importer that read the host ops of several in one
  // file (traces of several ranks merged, say) lists them in this tag: each process numbers its
  // own steps and correlation ids, so the steps, host times and launch links here mix them.
  if (const auto pids = doc.run().find_tag("source.host_processes"))
    b.error("processes_merged",
            "the host ops of several processes (pids " + std::string(*pids) +
                ") are in this one trace: their profiler steps, host times and kernel launches "
                "are mixed, since each process numbers its own; give each process (rank) its "
                "own trace, and compare them with `candle-graph ranks`");
  b.append(lossy.valid() ? lossy.get() : lossy_source_warnings(doc));
  return h;
}

}  // namespace candle_graph
