// The per-document aggregates of trace6.md §9.4 that comparison/1 is built from, shared with the
// cohort comparison (comparison/2, src/bundle/), which reduces every run to them before it
// compares.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "candle_graph/trace.hpp"

namespace candle_graph::evidence {

struct SpanCost {
  std::uint64_t count = 0;
  std::uint64_t total_ns = 0;
};

// trace6.md §9.4 span aggregation: per key `{root path} [{kind}]/{Step}` of the measured subtree,
// the count and saturating total duration; the keys in the order of their first span. In a
// PyTorch profiler trace read as found (entrypoint_names_a_file) the path starts at the measured
// region instead, named `ProfilerStep` for any `ProfilerStep#N`: the root and the step number
// label one capture, and with them no span of one trace or step would meet its own in another.
// Throws Error (kind resource) naming `source` when the keys would not fit in memory
// (check_span_keys_fit).
std::vector<std::pair<std::string, SpanCost>> span_cost_list(const TraceDocument& doc,
                                                             const std::string& source = {});

// The keys hold every span's whole root path, so their size grows with the square of the depth:
// a chain of a million nested spans needs terabytes. Throws Error (kind resource) naming `source`
// (and the run) when they would need more memory than memory_limit(); linear in the spans.
void check_span_keys_fit(const TraceDocument& doc, const std::string& source);
// The same, by key.
std::map<std::string, SpanCost> span_costs(const TraceDocument& doc);

// trace6.md §9.4 total: saturating Σ duration_ns of the spans with measured = true.
std::uint64_t measured_total(const TraceDocument& doc);

struct GradientFact {
  GradientState state;
  std::optional<double> norm;
};

// trace6.md §9.4 gradients: key `{root}/{key}`, later duplicates overwrite.
std::map<std::string, GradientFact> gradient_facts(const TraceDocument& doc);

// trace6.md §9.4 descriptive tag keys (source_revision, source_commit, build_id): expected to
// differ between code revisions, so they never make runs incomparable.
bool is_descriptive_tag(std::string_view key);
// Whether a run's entrypoint is only the name of the PyTorch profiler trace it was read from
// (docs/format/pytorch.md: the converter names the root after `traceName` or the file, which
// Kineto fills with a host, a pid and a time), so that it says nothing of the workload. Not for
// candle-graph's own Chrome export read back, nor for a capture by the profiler engine
// (`capture.profiler`), whose entrypoints are the run's own.
bool entrypoint_names_a_file(const TraceRunMeta& run);
// What such a trace measured, as its keys name it: `ProfilerStep` (one step), `all profiler steps`
// or `profiled window`; none for any other trace. Two runs that measured different regions are not
// comparable.
std::optional<std::string> measured_region_label(const TraceDocument& doc);
// The device two runs must share (trace6.md §9.4), as compared. A PyTorch profiler trace names
// its GPU's model (`source.device_name`, docs/format/pytorch.md) beside an index that only says
// which of a machine's GPUs the process was given: two runs that both name a model are held to
// the device's kind (`cuda`) and that model, so two ranks of one job on alike GPUs compare; any
// other pair to the device as written. Equality is against one reference run (cohorts compare
// every run with the first).
struct DeviceIdentity {
  std::string device;                // as written: `cuda:3`, `cpu`
  std::optional<std::string> model;  // `source.device_name`
  bool operator==(const DeviceIdentity& other) const;
  // `cuda:3 (NVIDIA A100-PG509-200)`, or the device alone.
  std::string shown() const;
};
DeviceIdentity device_identity(const TraceRunMeta& run);
// Tags that say how a trace was read or captured (`convert.*`, `source.*`, `capture.*`: counts of
// repairs, the source file, the capture's own cost), not what ran: never a workload condition.
bool is_provenance_tag(std::string_view key);

}  // namespace candle_graph::evidence
