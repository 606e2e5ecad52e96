#include "ranks/rank_profile.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <map>

#include "candle_graph/error.hpp"
#include "candle_graph/health.hpp"
#include "candle_graph/importer.hpp"
#include "device/device_time.hpp"
#include "device/gpu_analysis.hpp"
#include "trace/host_nesting.hpp"
#include "trace/profiler_steps.hpp"

namespace candle_graph::ranks {
namespace {

template <typename T>
std::optional<T> parse_number(std::optional<std::string_view> text) {
  if (!text || text->empty()) return std::nullopt;
  T v{};
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size()) return std::nullopt;
  return v;
}

// The digits right after position `at` of `s`, if there are any.
std::optional<std::uint64_t> digits_at(std::string_view s, std::size_t at) {
  std::size_t end = at;
  while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end]))) ++end;
  if (end == at || end - at > 9) return std::nullopt;
  return parse_number<std::uint64_t>(s.substr(at, end - at));
}

void add_gpu_time(const TraceDocument& doc, RankProfile& p) {
  const device::GpuAnalysis gpu = device::analyze_gpu(doc);
  std::uint64_t overlap_ns = 0;
  for (const device::DeviceGpu& d : gpu.devices) {
    p.busy_ns += d.busy_ns;
    p.compute_ns += d.compute_ns;
    p.communication_ns += d.communication_ns;
    p.idle_ns += d.idle_ns;
    overlap_ns += d.comm_compute_overlap_ns;
  }
  p.exposed_communication_ns = p.communication_ns - overlap_ns;
  if (p.communication_ns > 0)
    p.comm_compute_overlap =
        static_cast<double>(overlap_ns) / static_cast<double>(p.communication_ns);
}

// The collective a communication kernel belongs to: its own arguments (newer PyTorch copies them
// onto the kernel), else those of the nearest op around its launch that has them (the
// record_param_comms that wraps the c10d call), else nothing.
const OpCollective* collective_of(const TraceDocument& doc, std::size_t device_op,
                                  const device::DeviceTime& attribution,
                                  const HostNesting& nesting) {
  if (const OpCollective* own = doc.device_ops()[device_op].collective) return own;
  for (std::uint32_t op = attribution.launch_call[device_op]; op != kNoIndex;
       op = nesting.parent[op])
    if (const OpCollective* c = doc.ops()[op].collective) return c;
  return nullptr;
}

// Every communication kernel, grouped by collective (name and process group) and ordered by
// start: calls are matched across ranks by their sequence number where PyTorch recorded it, else
// the k-th call of a group's name with the k-th of the other ranks (rank_analysis.hpp).
void add_collectives(const TraceDocument& doc, RankProfile& p) {
  const HostNesting nesting = nest_host_ops(doc);
  const device::DeviceTime attribution = device::attribute_device_time(doc, nesting.parent);
  std::map<std::pair<std::string_view, std::string_view>, RankCollective> by_identity;
  const std::int64_t base = p.region_start_ns.value_or(0);
  for (std::size_t i = 0; i < doc.device_ops().size(); ++i) {
    const OpEvent& op = doc.device_ops()[i];
    if (op.op_kind != OpKind::kernel || !device::is_communication_kernel(op.op_name)) continue;
    const OpCollective* identity = collective_of(doc, i, attribution, nesting);
    const std::string_view name = identity ? identity->name : collective_name(op.op_name);
    const std::string_view group = identity ? identity->process_group : std::string_view();
    RankCollective& c = by_identity[{name, group}];
    const std::uint64_t dur = device::device_duration(op);
    const std::int64_t start = base + static_cast<std::int64_t>(op.timestamp_ns);
    c.calls.push_back(
        {start, start + static_cast<std::int64_t>(dur), identity ? identity->seq : std::nullopt});
    c.total_ns += dur;
  }
  for (auto& [identity, c] : by_identity) {
    c.name = std::string(identity.first);
    c.process_group = std::string(identity.second);
    std::stable_sort(
        c.calls.begin(), c.calls.end(),
        [](const CollectiveCall& a, const CollectiveCall& b) { return a.start_ns < b.start_ns; });
    p.collectives.push_back(std::move(c));
  }
}

// The first error of an untrusted trace's health, and how many more there are.
std::string untrusted_because(const TraceHealth& h) {
  if (h.trusted) return {};
  std::string first;
  std::size_t errors = 0;
  for (const HealthIssue& i : h.issues) {
    if (i.severity != HealthSeverity::error) continue;
    if (errors++ == 0) first = std::string(i.code) + ": " + i.message;
  }
  if (errors > 1) first += " (and " + std::to_string(errors - 1) + " more errors)";
  return first;
}

}  // namespace

std::optional<std::uint64_t> rank_from_file_name(std::string_view file_name) {
  std::string lower(file_name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::optional<std::uint64_t> found;
  std::size_t found_at = 0;
  for (std::string_view word : {"rank-", "rank_", "rank", "worker"}) {
    for (std::size_t at = lower.find(word); at != std::string::npos;
         at = lower.find(word, at + 1)) {
      const auto n = digits_at(lower, at + word.size());
      // The mention furthest right wins: `rank3-of-8_worker5.json` names worker 5.
      if (n && (!found || at > found_at)) {
        found = n;
        found_at = at;
      }
    }
  }
  return found;
}

std::string_view collective_name(std::string_view kernel_name) {
  const std::size_t paren = kernel_name.find('(');
  return paren == std::string_view::npos ? kernel_name : kernel_name.substr(0, paren);
}

RankProfile profile_rank(const TraceDocument& doc, const std::string& file) {
  RankProfile p;
  p.file = file;
  if (const auto r = doc.run().find_number_tag<std::uint64_t>("source.rank")) {
    p.rank = *r;
    p.rank_from = "distributedInfo";
  } else if (const auto f = rank_from_file_name(std::filesystem::path(file).filename().string())) {
    p.rank = *f;
    p.rank_from = "file name";
  } else {
    throw Error(file, 0,
                "no rank: the trace has no distributedInfo.rank (tag source.rank) and the file "
                "name states none (rank-N, rank_N or workerN)");
  }
  p.world_size = doc.run().find_number_tag<std::uint64_t>("source.world_size");
  p.backend = std::string(doc.run().find_tag("source.backend").value_or(""));
  p.device = std::string(doc.run().device);
  if (const auto model = gpu_model(doc.run())) p.gpu_model = std::string(*model);
  p.region_start_ns = doc.run().find_number_tag<std::int64_t>("source.region_start_ns");
  for (const SpanRecord& s : doc.spans())
    if (s.measured) {
      p.region_ns = s.duration_ns;
      break;
    }
  const std::optional<std::uint64_t> cut_short = cut_short_step(doc.run());
  for (const ProfilerStepRecord& s : doc.run().profiler_steps)
    p.steps.push_back({s.step, s.wall_ns, cut_short == s.step});
  constexpr std::string_view kGroupTag = "source.process_group.";
  for (const Tag& t : doc.run().tags)
    if (t.key.starts_with(kGroupTag))
      p.process_groups.emplace(std::string(t.key.substr(kGroupTag.size())), std::string(t.value));
  p.untrusted = untrusted_because(analyze_health(doc));
  add_gpu_time(doc, p);
  add_collectives(doc, p);
  return p;
}

}  // namespace candle_graph::ranks
