#include "ranks/ranks_output.hpp"

#include <cstdio>

#include "candle_graph/importer.hpp"
#include "output/markdown_text.hpp"

namespace candle_graph::ranks {
namespace {

using output::JsonStream;

template <typename T, typename F>
void array(JsonStream& w, std::string_view key, const std::vector<T>& items, F&& write) {
  w.schema_key(key).begin_array();
  for (const T& item : items) write(item);
  w.end_array();
}

void write_rank(JsonStream& w, const RankProfile& p) {
  w.begin_object();
  w.schema_key("backend").string(p.backend);
  w.schema_key("busy_ns").u64(p.busy_ns);
  array(w, "collectives", p.collectives, [&](const RankCollective& c) {
    w.begin_object();
    w.schema_key("count").u64(c.calls.size());
    w.schema_key("name").string(c.name);
    w.schema_key("process_group").string(c.process_group);
    w.schema_key("total_ns").u64(c.total_ns);
    w.end_object();
  });
  w.schema_key("comm_compute_overlap");
  p.comm_compute_overlap ? w.f64(*p.comm_compute_overlap) : w.null();
  write_rank_times(w, p);
  array(w, "steps", p.steps, [&](const StepWall& s) {
    w.begin_object();
    w.schema_key("cut_short").boolean(s.cut_short);
    w.schema_key("step").u64(s.step);
    w.schema_key("wall_ns").u64(s.wall_ns);
    w.end_object();
  });
  write_untrusted(w, p);
  w.schema_key("world_size");
  p.world_size ? w.u64(*p.world_size) : w.null();
  w.end_object();
}

void write_estimate(JsonStream& w, const std::optional<StepEstimate>& e) {
  w.schema_key("estimate");
  if (!e) {
    w.null();
    return;
  }
  w.begin_object();
  w.schema_key("estimated_ns").u64(e->estimated_ns);
  w.schema_key("measured_ns").u64(e->measured_ns);
  w.schema_key("saved_ns").u64(e->saved_ns);
  w.schema_key("straggler").u64(e->straggler);
  w.end_object();
}

std::string ms(std::uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(ns) / 1e6);
  return buf;
}

// The rank's device and its GPU's model (`cuda:3 (Tesla V100-SXM2-32GB)`), `—` when unknown.
std::string gpu_cell(const RankProfile& p) {
  if (p.device.empty()) return "—";
  return output::markdown_cell(device_with_model(p.device, p.gpu_model));
}

}  // namespace

void write_rank_times(JsonStream& w, const RankProfile& p) {
  w.schema_key("communication_ns").u64(p.communication_ns);
  w.schema_key("compute_ns").u64(p.compute_ns);
  w.schema_key("device");
  p.device.empty() ? w.null() : w.string(p.device);
  w.schema_key("exposed_communication_ns").u64(p.exposed_communication_ns);
  w.schema_key("file").string(p.file);
  w.schema_key("gpu_model");
  p.gpu_model ? w.string(*p.gpu_model) : w.null();
  w.schema_key("idle_ns").u64(p.idle_ns);
  w.schema_key("measured_ns").u64(p.region_ns);
  w.schema_key("process_groups").begin_object();
  for (const auto& [name, entry] : p.process_groups) w.key(name).string(entry);
  w.end_object();
  w.schema_key("rank").u64(p.rank);
  w.schema_key("rank_from").string(p.rank_from);
  w.schema_key("region_start_ns");
  p.region_start_ns ? w.i64(*p.region_start_ns) : w.null();
}

void write_untrusted(JsonStream& w, const RankProfile& p) {
  w.schema_key("untrusted");
  p.untrusted.empty() ? w.null() : w.string(p.untrusted);
}

void write_ranks_json(JsonStream& w, const RanksAnalysis& a, const std::vector<RankPage>& pages) {
  w.begin_object();
  array(w, "clock", a.clock, [&](const ClockAlignment& c) {
    w.begin_object();
    w.schema_key("offset_ns").i64(c.offset_ns);
    w.schema_key("rank").u64(c.rank);
    w.schema_key("residual_ns").u64(c.residual_ns);
    w.end_object();
  });
  array(w, "collectives", a.collectives, [&](const CollectiveSkew& c) {
    w.begin_object();
    w.schema_key("count").u64(c.count);
    w.schema_key("max_skew_ns").u64(c.max_skew_ns);
    w.schema_key("mean_skew_ns").u64(c.mean_skew_ns);
    w.schema_key("name").string(c.name);
    w.schema_key("process_group").string(c.process_group);
    w.end_object();
  });
  write_estimate(w, a.estimate);
  array(w, "findings", a.findings, [&](const std::string& f) { w.string(f); });
  array(w, "health", a.health, [&](const HealthFinding& h) {
    w.begin_object();
    w.schema_key("code").string(h.code);
    w.schema_key("message").string(h.message);
    w.end_object();
  });
  array(w, "rank_pages", pages, [&](const RankPage& p) {
    w.begin_object();
    w.schema_key("file").string(p.file);
    w.schema_key("href");
    p.href ? w.string(*p.href) : w.null();
    w.schema_key("rank").u64(p.rank);
    w.end_object();
  });
  array(w, "ranks", a.ranks, [&](const RankProfile& p) { write_rank(w, p); });
  w.schema_key("schema").string(kRanksSchema);
  array(w, "steps", a.steps, [&](const StepSpread& s) {
    w.begin_object();
    w.schema_key("max_wall_ns").u64(s.max_wall_ns);
    w.schema_key("median_wall_ns").u64(s.median_wall_ns);
    w.schema_key("ranks").u64(s.ranks);
    w.schema_key("slowest_rank").u64(s.slowest_rank);
    w.schema_key("spread_ns").u64(s.spread_ns);
    w.schema_key("step").u64(s.step);
    w.end_object();
  });
  array(w, "stragglers", a.stragglers, [&](const Straggler& s) {
    w.begin_object();
    w.schema_key("imposed_wait_ns").u64(s.imposed_wait_ns);
    w.schema_key("rank").u64(s.rank);
    w.schema_key("times_last").u64(s.times_last);
    w.end_object();
  });
  w.end_object();
}

std::string ranks_markdown(const RanksAnalysis& a, const std::vector<RankPage>& pages) {
  std::string md = "# Ranks\n\n";
  md += std::to_string(a.ranks.size()) + " rank(s). Times in ms.\n\n## Findings\n\n";
  for (const std::string& f : a.findings) md += "- " + output::markdown_line(f) + "\n";
  if (a.findings.empty()) md += "- none\n";
  md += "\n## Health\n\n";
  for (const HealthFinding& h : a.health)
    md += "- `" + h.code + "`: " + output::markdown_line(h.message) + "\n";
  if (a.health.empty()) md += "- every rank of the run is here, once\n";
  md += "\n## Per rank (measured region)\n\n";
  md += "| rank | busy | compute | communication | exposed comm. | idle | GPU | file |\n";
  md += "| ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n";
  // A rank whose trace is untrusted says so beside its numbers (the Health section says why).
  for (const RankProfile& p : a.ranks)
    md += "| " + std::to_string(p.rank) + (p.untrusted.empty() ? "" : " (untrusted)") + " | " +
          ms(p.busy_ns) + " | " + ms(p.compute_ns) + " | " + ms(p.communication_ns) + " | " +
          ms(p.exposed_communication_ns) + " | " + ms(p.idle_ns) + " | " + gpu_cell(p) + " | " +
          output::markdown_cell(p.file) + " |\n";
  md += "\n## Stragglers\n\n| rank | times last | imposed wait |\n| ---: | ---: | ---: |\n";
  for (const Straggler& s : a.stragglers)
    md += "| " + std::to_string(s.rank) + " | " + std::to_string(s.times_last) + " | " +
          ms(s.imposed_wait_ns) + " |\n";
  md += "\n## Clock alignment\n\n| rank | offset | residual |\n| ---: | ---: | ---: |\n";
  for (const ClockAlignment& c : a.clock)
    md += "| " + std::to_string(c.rank) + " | " +
          (c.offset_ns < 0 ? "-" + ms(static_cast<std::uint64_t>(-c.offset_ns))
                           : ms(static_cast<std::uint64_t>(c.offset_ns))) +
          " | " + ms(c.residual_ns) + " |\n";
  if (!pages.empty()) {
    md += "\n## Rank pages (the viewer of one rank's trace: timeline, operators, kernels)\n\n";
    for (const RankPage& p : pages)
      md += "- rank " + std::to_string(p.rank) + ": " + output::markdown_line(p.file) + "\n";
  }
  return md;
}

}  // namespace candle_graph::ranks
