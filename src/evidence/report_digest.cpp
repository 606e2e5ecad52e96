// make_report_digest: selects and groups what the report's added sections show. Every figure is
// a field of the packet (graph nodes, memory summary and peak breakdown, Nsight rows, comparison)
// or a sum/quotient of such fields.
#include "evidence/report_digest.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <unordered_map>

#include "events/saturating.hpp"
#include "evidence/op_table.hpp"

namespace candle_graph::evidence {
namespace {

TimeDigest digest_time(const EvidencePacket& p, const DigestLimits& limits) {
  const ExecutionGraph& g = p.graph;
  const TraceDocument& doc = *p.doc;
  TimeDigest t;
  t.total_ms = g.summary.total_ms;
  std::vector<std::uint8_t> measured(doc.spans().size(), 0);
  for (std::uint32_t s : measured_subtree(doc)) measured[s] = 1;

  struct Group {
    OpNameCost cost;
    std::unordered_map<std::uint32_t, std::uint64_t> by_span;
  };
  std::vector<Group> groups;
  std::unordered_map<std::string_view, std::size_t> index;
  const std::size_t n_spans = doc.spans().size();
  // As key_averages (op_table.hpp), an op that is the only child of an op of its own name is part
  // of that call, not a call of its own.
  const std::vector<std::uint32_t> merged = merged_into_parent(g);
  auto same_call_as_parent = [&](std::uint32_t i) {
    return i >= n_spans && merged[i - n_spans] != kNoIndex;
  };

  for (std::uint32_t i = 0; i < g.nodes.size(); ++i) {
    const GraphNode& n = g.nodes[i];
    if (n.kind != GraphNodeKind::op) continue;
    // An op event belongs to its span; a span of kind op is itself in the region or not, and is
    // held by its parent span.
    std::uint32_t holder = n.span;
    if (i < n_spans) {
      if (!measured[i]) continue;
      const std::uint32_t parent = doc.span_parent()[i];
      holder = parent == kNoIndex ? i : parent;
    } else if (n.span == kNoIndex || !measured[n.span]) {
      continue;
    }
    const std::string_view name = g.name(i);
    auto [it, fresh] = index.emplace(name, groups.size());
    if (fresh) {
      groups.emplace_back();
      groups.back().cost.name = name;
    }
    Group& group = groups[it->second];
    if (!same_call_as_parent(i)) ++group.cost.calls;
    group.cost.self_time_ns = sat_add(group.cost.self_time_ns, n.self_time_ns);
    group.by_span[holder] = sat_add(group.by_span[holder], n.self_time_ns);
    ++t.op_calls;
    t.op_self_time_ns = sat_add(t.op_self_time_ns, n.self_time_ns);
  }
  t.op_names = groups.size();

  auto before = [](const Group& a, const Group& b) {
    if (a.cost.self_time_ns != b.cost.self_time_ns)
      return a.cost.self_time_ns > b.cost.self_time_ns;
    return a.cost.name < b.cost.name;
  };
  const std::size_t k = std::min(limits.ops, groups.size());
  std::partial_sort(groups.begin(), groups.begin() + static_cast<std::ptrdiff_t>(k), groups.end(),
                    before);
  const double total_ns = t.total_ms * 1e6;
  for (std::size_t i = 0; i < k; ++i) {
    OpNameCost cost = std::move(groups[i].cost);
    cost.mean_ns = cost.calls ? cost.self_time_ns / cost.calls : 0;
    cost.share = total_ns > 0 ? static_cast<double>(cost.self_time_ns) / total_ns : 0.0;
    for (const auto& [span, ns] : groups[i].by_span) cost.spans.push_back({span, ns});
    std::sort(cost.spans.begin(), cost.spans.end(),
              [](const SpanSelfTime& a, const SpanSelfTime& b) {
                if (a.self_time_ns != b.self_time_ns) return a.self_time_ns > b.self_time_ns;
                return a.span < b.span;
              });
    if (cost.spans.size() > limits.spans_per_op) cost.spans.resize(limits.spans_per_op);
    t.top.push_back(std::move(cost));
  }
  return t;
}

PeakDigest digest_peak(const EvidencePacket& p, const DigestLimits& limits) {
  const MemoryProfile& mem = p.graph.memory;
  const TraceDocument& doc = *p.doc;
  PeakDigest d;
  for (std::uint32_t s = 0; s < doc.spans().size(); ++s)
    if (doc.spans()[s].measured) {
      d.measured_span = s;
      break;
    }
  if (mem.summary.peak_bytes == 0) return d;
  d.summary = &mem.summary;
  d.span = doc.find_span(mem.summary.peak_span_id);
  d.live_allocations = mem.peak_breakdown.size();
  for (std::size_t i = 0; i < mem.peak_breakdown.size() && i < limits.tensors; ++i)
    d.largest.push_back(&mem.peak_breakdown[i]);
  return d;
}

GpuDigest digest_gpu(const EvidencePacket& p, const DigestLimits& limits) {
  const import::nsight::NsightEvidence& gpu = p.gpu;
  GpuDigest d;
  d.available = gpu.status == import::nsight::GpuEvidenceStatus::available;
  if (!d.available) return d;
  d.kernel_rows = gpu.kernels.size();
  for (const auto& k : gpu.kernels) {
    d.kernel_ns = sat_add(d.kernel_ns, k.total_ns);
    d.top_kernels.push_back(&k);
  }
  // Each summary file is sorted by total time; several files are concatenated, so pick the
  // largest rows over all of them (stable: packet order on ties).
  std::stable_sort(d.top_kernels.begin(), d.top_kernels.end(),
                   [](const auto* a, const auto* b) { return a->total_ns > b->total_ns; });
  if (d.top_kernels.size() > limits.kernels) d.top_kernels.resize(limits.kernels);
  for (const auto& m : gpu.memory_operations) {
    if (m.category && *m.category == "memcpy")
      d.memcpy_ns = sat_add(d.memcpy_ns, m.total_ns);
    else
      d.other_memory_ns = sat_add(d.other_memory_ns, m.total_ns);
  }
  d.device_ns = sat_add(sat_add(d.kernel_ns, d.memcpy_ns), d.other_memory_ns);
  d.memory_summary = gpu.coverage.memory_summary;
  for (const auto& [file, limit] : gpu.limits) d.truncated = d.truncated || limit.truncated;
  return d;
}

}  // namespace

ReportDigest make_report_digest(const EvidencePacket& packet, const DigestLimits& limits) {
  ReportDigest d;
  d.time = digest_time(packet, limits);
  d.peak = digest_peak(packet, limits);
  d.gpu = digest_gpu(packet, limits);
  d.comparison = packet.comparison ? &*packet.comparison : nullptr;
  return d;
}

std::string format_duration_ns(std::uint64_t ns) {
  char buf[64];
  if (ns < 1000)
    std::snprintf(buf, sizeof buf, "%" PRIu64 " ns", ns);
  else if (ns < 1000000)
    std::snprintf(buf, sizeof buf, "%.1f µs", static_cast<double>(ns) / 1e3);
  else if (ns < 1000000000)
    std::snprintf(buf, sizeof buf, "%.2f ms", static_cast<double>(ns) / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.2f s", static_cast<double>(ns) / 1e9);
  std::string s = buf;
  // 999.96 µs rounds to "1000.0 µs": say it in the next unit instead.
  if (s == "1000.0 µs") return "1.00 ms";
  if (s == "1000.00 ms") return "1.00 s";
  return s;
}

std::string format_signed_duration_ns(std::int64_t ns) {
  if (ns == 0) return "0 ns";
  const std::uint64_t magnitude =
      ns < 0 ? static_cast<std::uint64_t>(-(ns + 1)) + 1 : static_cast<std::uint64_t>(ns);
  return (ns < 0 ? "-" : "+") + format_duration_ns(magnitude);
}

std::string format_bytes(std::uint64_t bytes) {
  char buf[96];
  if (bytes < 1024) {
    std::snprintf(buf, sizeof buf, "%" PRIu64 " B", bytes);
    return buf;
  }
  const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes) / 1024.0;
  std::size_t u = 0;
  while (v >= 1023.95 && u + 1 < std::size(units)) {
    v /= 1024.0;
    ++u;
  }
  std::snprintf(buf, sizeof buf, "%" PRIu64 " B (%.1f %s)", bytes, v, units[u]);
  return buf;
}

std::string format_share(double fraction) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f%%", fraction * 100.0);
  return buf;
}

std::string short_span_name(const TraceDocument& doc, std::uint32_t measured_span,
                            std::uint32_t span) {
  if (span == kNoIndex || span >= doc.spans().size()) return "(unknown span)";
  const std::string_view name = doc.spans()[span].name;
  if (measured_span == kNoIndex || span == measured_span) return std::string(name);
  const std::string_view region = doc.spans()[measured_span].name;
  if (name.size() > region.size() + 1 && name.starts_with(region) && name[region.size()] == '/')
    return "…" + std::string(name.substr(region.size()));
  return std::string(name);
}

}  // namespace candle_graph::evidence
