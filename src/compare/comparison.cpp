// trace6.md §9.4 compare_documents (+ §17.6 measured-region check): comparability warnings, span
// costs keyed by root path + kind + step, measured totals, memory peaks and gradient differences.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <unordered_map>

#include "candle_graph/analysis.hpp"
#include "candle_graph/importer.hpp"
#include "compare/comparison_parts.hpp"
#include "events/saturating.hpp"
#include "output/markdown_text.hpp"
#include "trace/memory_budget.hpp"
#include "trace/profiler_steps.hpp"

namespace candle_graph {
namespace {

std::int64_t signed_delta(std::uint64_t c, std::uint64_t b) noexcept {
  // Rust computes in i128; clamp to i64, which is what any JSON consumer can read anyway.
  const __int128 d = static_cast<__int128>(c) - static_cast<__int128>(b);
  if (d > INT64_MAX) return INT64_MAX;
  if (d < INT64_MIN) return INT64_MIN;
  return static_cast<std::int64_t>(d);
}

// `(c − b)·100 / b` in this order (the last digit of a float depends on it); null when b = 0.
std::optional<double> percent(std::uint64_t c, std::uint64_t b) {
  if (b == 0) return std::nullopt;
  return (static_cast<double>(c) - static_cast<double>(b)) * 100.0 / static_cast<double>(b);
}

std::string_view debug_step(ExecutionStep s) {
  switch (s) {
    case ExecutionStep::forward:
      return "Forward";
    case ExecutionStep::backward:
      return "Backward";
    case ExecutionStep::optimizer:
      return "Optimizer";
  }
  return "";
}

}  // namespace

namespace evidence {
namespace {

// Root path of span i: names from the top of its parent chain down to it, joined by `/`. The
// walk stops at a missing parent or a cycle. Paths of spans whose chain ends at a real root are
// memoized, so a deep tree costs Σ path lengths, not depth² per span; they are kept end to end in
// one text (a string per span was most of the key aggregation's allocations).
class RootPaths {
 public:
  explicit RootPaths(const TraceDocument& doc)
      : doc_(doc),
        memo_(doc.spans().size()),
        done_(doc.spans().size(), 0),
        on_chain_(doc.spans().size(), 0) {}

  // Valid until the next call.
  std::string_view path(std::uint32_t i) {
    if (done_[i]) return view(memo_[i]);
    const auto& parent = doc_.span_parent();
    chain_.assign(1, i);
    on_chain_[i] = 1;
    bool cycle = false;
    std::uint32_t stop = parent[i];  // the parent link that ended the walk
    while (stop != kNoIndex && !done_[stop]) {
      if (on_chain_[stop]) {
        cycle = true;
        break;
      }
      on_chain_[stop] = 1;
      chain_.push_back(stop);
      stop = parent[stop];
    }
    for (std::uint32_t s : chain_) on_chain_[s] = 0;
    const bool from_memo = !cycle && stop != kNoIndex;  // stopped at an already known path
    // A walk into a cycle depends on where it starts: built apart, never memoized.
    std::string& out = cycle ? cycle_result_ : text_;
    if (cycle) out.clear();
    const std::size_t begin = out.size();
    if (from_memo) out.append(text_, memo_[stop].begin, memo_[stop].size);
    bool first = !from_memo;
    for (auto it = chain_.rbegin(); it != chain_.rend(); ++it) {
      if (!first) out += '/';
      first = false;
      out += doc_.spans()[*it].name;
      if (!cycle) {
        memo_[*it] = {begin, out.size() - begin};
        done_[*it] = 1;
      }
    }
    return std::string_view(out).substr(begin);
  }

 private:
  struct Slice {
    std::size_t begin = 0;
    std::size_t size = 0;
  };
  std::string_view view(Slice s) const { return std::string_view(text_).substr(s.begin, s.size); }

  const TraceDocument& doc_;
  std::string text_;  // the memoized paths, end to end
  std::vector<Slice> memo_;
  std::vector<std::uint8_t> done_;
  std::vector<std::uint8_t> on_chain_;
  std::vector<std::uint32_t> chain_;  // the walk of one call, kept for its capacity
  std::string cycle_result_;
};

}  // namespace

namespace {

// The bytes of every span's root path as RootPaths builds it (names joined by `/`), without
// building any: each span's is its name, `/` and its parent's, and a span on a parent cycle holds
// the cycle's names once (the walk stops where it repeats). Memoized walks: linear overall.
std::vector<std::uint64_t> root_path_bytes(const TraceDocument& doc) {
  const auto& parent = doc.span_parent();
  const std::size_t n = doc.spans().size();
  std::vector<std::uint64_t> bytes(n, 0);
  enum : std::uint8_t { unknown, on_walk, known };
  std::vector<std::uint8_t> state(n, unknown);
  std::vector<std::uint32_t> walk;
  const auto name_bytes = [&](std::uint32_t s) {
    return static_cast<std::uint64_t>(doc.spans()[s].name.size());
  };
  for (std::uint32_t i = 0; i < n; ++i) {
    if (state[i] == known) continue;
    walk.clear();
    std::uint32_t a = i;
    for (; a != kNoIndex && state[a] == unknown; a = parent[a]) {
      state[a] = on_walk;
      walk.push_back(a);
    }
    std::size_t below = walk.size();  // walk[0, below) are resolved from their parents
    if (a != kNoIndex && state[a] == on_walk) {
      // walk[at..] is a cycle: each of its spans' paths holds all its names once.
      const std::size_t at =
          static_cast<std::size_t>(std::find(walk.begin(), walk.end(), a) - walk.begin());
      std::uint64_t cycle = walk.size() - at - 1;  // the separators
      for (std::size_t k = at; k < walk.size(); ++k) cycle = sat_add(cycle, name_bytes(walk[k]));
      for (std::size_t k = at; k < walk.size(); ++k) {
        bytes[walk[k]] = cycle;
        state[walk[k]] = known;
      }
      below = at;
    }
    for (std::size_t k = below; k-- > 0;) {
      const std::uint32_t s = walk[k], up = parent[s];
      bytes[s] = up == kNoIndex ? name_bytes(s) : sat_add(name_bytes(s), sat_add(1, bytes[up]));
      state[s] = known;
    }
  }
  return bytes;
}

// What span_cost_list holds per span besides its key's text: the memoized path's slice, the
// key's string and its entry in the list and in the index.
constexpr double kPerSpanKeyBytes = 128;

// check_span_keys_fit for the keys of `spans` (the measured subtree).
void check_keys_fit(const TraceDocument& doc, const std::vector<std::uint32_t>& spans,
                    const std::string& source) {
  const std::vector<std::uint64_t> path = root_path_bytes(doc);
  double need = 0;
  for (std::uint32_t s : spans)
    need += 2.0 * static_cast<double>(path[s]) + kPerSpanKeyBytes;  // the memo and the key
  check_memory_need(source, need,
                    "comparing the spans of run `" + std::string(doc.run().run_id) +
                        "` by their root paths (the keys of trace6.md §9.4, which grow with the "
                        "square of the nesting)");
}

}  // namespace

void check_span_keys_fit(const TraceDocument& doc, const std::string& source) {
  check_keys_fit(doc, measured_subtree(doc), source);
}

namespace {

// The one measured span of a profiler trace read as found, or kNoIndex (then every key keeps its
// root path: a trace/6 file may carry the tags with spans of its own).
std::uint32_t measured_region_of_a_file(const TraceDocument& doc) {
  if (!entrypoint_names_a_file(doc.run())) return kNoIndex;
  std::uint32_t found = kNoIndex;
  for (std::uint32_t i = 0; i < doc.spans().size(); ++i) {
    if (!doc.spans()[i].measured) continue;
    if (found != kNoIndex) return kNoIndex;
    found = i;
  }
  return found;
}

// `ProfilerStep#N` → `ProfilerStep`; the converter's other region names are the same in every
// trace (`all profiler steps`, `profiled window`).
std::string_view region_label(std::string_view name) {
  std::uint64_t step = 0;
  return parse_profiler_step(name, step) ? "ProfilerStep" : name;
}

}  // namespace

std::optional<std::string> measured_region_label(const TraceDocument& doc) {
  const std::uint32_t region = measured_region_of_a_file(doc);
  if (region == kNoIndex) return std::nullopt;
  return std::string(region_label(doc.spans()[region].name));
}

namespace {

// The paths of span_cost_list: root paths, or for a profiler trace read as found the path from
// its measured region (the root path's head, the region's, replaced by the region's label).
class KeyPaths {
 public:
  explicit KeyPaths(const TraceDocument& doc) : paths_(doc) {
    const std::uint32_t region = measured_region_of_a_file(doc);
    if (region == kNoIndex) return;
    head_ = std::string(paths_.path(region));
    label_ = region_label(doc.spans()[region].name);
  }

  // Valid until the next call.
  std::string_view path(std::uint32_t s) {
    const std::string_view root_path = paths_.path(s);
    if (head_.empty() || !root_path.starts_with(head_)) return root_path;
    const std::string_view rest = root_path.substr(head_.size());
    if (!rest.empty() && rest.front() != '/') return root_path;
    relative_.assign(label_);
    relative_ += rest;
    return relative_;
  }

 private:
  RootPaths paths_;
  std::string head_;
  std::string label_;
  std::string relative_;
};

}  // namespace

std::vector<std::pair<std::string, SpanCost>> span_cost_list(const TraceDocument& doc,
                                                             const std::string& source) {
  const std::vector<std::uint32_t> spans = measured_subtree(doc);
  check_keys_fit(doc, spans, source);
  std::vector<std::pair<std::string, SpanCost>> out;
  out.reserve(spans.size());  // never reallocated: `place` holds views of its keys
  std::unordered_map<std::string_view, std::size_t> place;
  place.reserve(spans.size());
  KeyPaths paths(doc);
  for (std::uint32_t s : spans) {
    const SpanRecord& rec = doc.spans()[s];
    const std::string_view path = paths.path(s);
    const std::string_view kind = to_string(rec.kind);
    const std::string_view step = rec.step ? debug_step(*rec.step) : std::string_view();
    // Sized at once: the keys are kept (a cohort holds one set per run waiting to be numbered),
    // and appending would leave them up to twice their length in capacity.
    std::string key;
    key.reserve(path.size() + kind.size() + 3 + (rec.step ? step.size() + 1 : 0));
    key += path;
    key += " [";
    key += kind;
    key += ']';
    if (rec.step) {
      key += '/';
      key += step;
    }
    std::size_t k = out.size();
    if (const auto known = place.find(key); known != place.end()) {
      k = known->second;
    } else {
      out.emplace_back(std::move(key), SpanCost{});
      place.emplace(out.back().first, k);
    }
    SpanCost& c = out[k].second;
    ++c.count;
    c.total_ns = sat_add(c.total_ns, rec.duration_ns);
  }
  return out;
}

std::map<std::string, SpanCost> span_costs(const TraceDocument& doc) {
  std::map<std::string, SpanCost> out;
  for (auto& [key, cost] : span_cost_list(doc)) out.emplace(std::move(key), cost);
  return out;
}

std::uint64_t measured_total(const TraceDocument& doc) {
  std::uint64_t t = 0;
  for (const SpanRecord& s : doc.spans())
    if (s.measured) t = sat_add(t, s.duration_ns);
  return t;
}

std::map<std::string, GradientFact> gradient_facts(const TraceDocument& doc) {
  std::map<std::string, GradientFact> out;
  for (const GradientEvent& g : doc.gradients())  // later duplicates overwrite
    out[std::string(g.root) + "/" + std::string(g.key)] = {g.state, g.norm};
  return out;
}

// Tags without the descriptive keys, which are expected to differ between code revisions.
constexpr std::string_view kDescriptive[] = {"source_revision", "source_commit", "build_id"};

bool is_descriptive_tag(std::string_view key) {
  return std::find(std::begin(kDescriptive), std::end(kDescriptive), key) != std::end(kDescriptive);
}

bool entrypoint_names_a_file(const TraceRunMeta& run) {
  bool read_as_found = false;
  for (const Tag& t : run.tags) {
    if (t.key == "capture.profiler") return false;
    if (t.key == "source.format")
      read_as_found = t.value == kKinetoFormat || t.value == kLegacyProfilerFormat;
  }
  return read_as_found;
}

namespace {
std::string_view device_kind(std::string_view device) {
  return device.substr(0, device.find(':'));
}
}  // namespace

bool DeviceIdentity::operator==(const DeviceIdentity& other) const {
  if (model && other.model)
    return *model == *other.model && device_kind(device) == device_kind(other.device);
  return device == other.device;
}

std::string DeviceIdentity::shown() const {
  return device_with_model(device, model);
}

DeviceIdentity device_identity(const TraceRunMeta& run) {
  DeviceIdentity id{std::string(run.device), std::nullopt};
  if (const auto model = gpu_model(run)) id.model = std::string(*model);
  return id;
}

bool is_provenance_tag(std::string_view key) {
  return key.starts_with("convert.") || key.starts_with("source.") || key.starts_with("capture.");
}

}  // namespace evidence

namespace {

using evidence::GradientFact;
using evidence::SpanCost;

void compare_runs(const TraceRunMeta& b, const TraceRunMeta& c, Comparison& out) {
  auto differs = [&](std::string_view field, std::string_view l, std::string_view r) {
    if (l == r) return;
    out.comparable = false;
    out.warnings.push_back(std::string(field) + " differs: " + output::quoted_code(l) + " vs " +
                           output::quoted_code(r));
  };
  if (evidence::entrypoint_names_a_file(b) && evidence::entrypoint_names_a_file(c)) {
    if (b.entrypoint != c.entrypoint)
      out.warnings.push_back("entrypoint not compared: " + output::quoted_code(b.entrypoint) +
                             " vs " + output::quoted_code(c.entrypoint) +
                             " name the PyTorch profiler traces' files");
  } else {
    differs("entrypoint", b.entrypoint, c.entrypoint);
  }
  differs("phase", to_string(b.phase), to_string(c.phase));
  const evidence::DeviceIdentity bd = evidence::device_identity(b),
                                 cd = evidence::device_identity(c);
  if (!(bd == cd))
    differs("device", bd.shown(), cd.shown());
  else if (b.device != c.device)
    out.warnings.push_back("device index not compared: " + output::quoted_code(b.device) + " vs " +
                           output::quoted_code(c.device) + " are both " +
                           output::quoted_code(*bd.model));
  if (b.timing_mode != c.timing_mode) {
    out.comparable = false;
    out.warnings.push_back("timing mode differs");
  }
  if (b.measured_region_device_synchronized != c.measured_region_device_synchronized) {
    out.comparable = false;  // trace6.md §17.6
    out.warnings.push_back("measured-region device synchronization differs");
  }
  if (b.warmup_steps != c.warmup_steps) {
    out.comparable = false;
    out.warnings.push_back("warmup differs: " + std::to_string(b.warmup_steps) + " vs " +
                           std::to_string(c.warmup_steps));
  }
  std::vector<Tag> bw, cw;
  for (const Tag& t : b.tags)
    if (!evidence::is_descriptive_tag(t.key) && !evidence::is_provenance_tag(t.key))
      bw.push_back(t);
  for (const Tag& t : c.tags)
    if (!evidence::is_descriptive_tag(t.key) && !evidence::is_provenance_tag(t.key))
      cw.push_back(t);
  if (bw != cw) {
    out.comparable = false;
    out.warnings.push_back("workload tags differ; batch/model/precision conditions must match");
  }
  for (std::string_view key : evidence::kDescriptive)
    if (b.find_tag(key) != c.find_tag(key))
      out.warnings.push_back("descriptive `" + std::string(key) +
                             "` differs, as expected for a code-change comparison");
}

}  // namespace

Comparison compare_documents(const TraceDocument& baseline, const TraceDocument& candidate) {
  baseline.check_indexed();
  candidate.check_indexed();
  Comparison out;
  out.baseline_run_id = baseline.run().run_id;
  out.candidate_run_id = candidate.run().run_id;
  // Untrusted inputs make the result non-comparable without a warning text (trace6.md §17.4).
  out.comparable = analyze_health(baseline).trusted && analyze_health(candidate).trusted;
  compare_runs(baseline.run(), candidate.run(), out);
  const auto b_region = evidence::measured_region_label(baseline),
             c_region = evidence::measured_region_label(candidate);
  if (b_region && c_region && *b_region != *c_region) {
    out.comparable = false;
    out.warnings.push_back("measured region differs: " + output::quoted_code(*b_region) + " vs " +
                           output::quoted_code(*c_region));
  }

  const std::uint64_t bt = evidence::measured_total(baseline),
                      ct = evidence::measured_total(candidate);
  out.total_delta_ns = signed_delta(ct, bt);
  out.total_delta_percent = percent(ct, bt);
  out.baseline_peak_bytes = memory_summary(baseline).peak_bytes;
  out.candidate_peak_bytes = memory_summary(candidate).peak_bytes;
  out.peak_delta_bytes = signed_delta(out.candidate_peak_bytes, out.baseline_peak_bytes);

  // Spans: union of keys (sorted), then stable by |delta| descending, at most 50. The distance
  // between the totals is exact: the i64 delta clamps, and |INT64_MIN| is one more than
  // INT64_MAX, which would order two groups 2^63 ns apart differently with the sides swapped.
  const auto bs = evidence::span_costs(baseline), cs = evidence::span_costs(candidate);
  std::map<std::string_view, std::pair<SpanCost, SpanCost>> joined;
  for (const auto& [k, v] : bs) joined[k].first = v;
  for (const auto& [k, v] : cs) joined[k].second = v;
  for (const auto& [k, v] : joined) {
    SpanComparison s;
    s.name = std::string(k);
    s.baseline_count = v.first.count;
    s.candidate_count = v.second.count;
    s.baseline_total_ns = v.first.total_ns;
    s.candidate_total_ns = v.second.total_ns;
    s.baseline_mean_ns = v.first.count ? v.first.total_ns / v.first.count : 0;
    s.candidate_mean_ns = v.second.count ? v.second.total_ns / v.second.count : 0;
    s.delta_ns = signed_delta(s.candidate_total_ns, s.baseline_total_ns);
    s.delta_percent = percent(s.candidate_total_ns, s.baseline_total_ns);
    out.spans.push_back(std::move(s));
  }
  auto distance = [](const SpanComparison& s) {
    return s.candidate_total_ns > s.baseline_total_ns ? s.candidate_total_ns - s.baseline_total_ns
                                                      : s.baseline_total_ns - s.candidate_total_ns;
  };
  std::stable_sort(
      out.spans.begin(), out.spans.end(),
      [&](const SpanComparison& a, const SpanComparison& b) { return distance(a) > distance(b); });
  if (out.spans.size() > 50) out.spans.resize(50);

  // Gradients: keys whose (state, norm) differ, by key, at most 100.
  const auto bg = evidence::gradient_facts(baseline), cg = evidence::gradient_facts(candidate);
  std::map<std::string_view, std::pair<const GradientFact*, const GradientFact*>> grads;
  for (const auto& [k, v] : bg) grads[k].first = &v;
  for (const auto& [k, v] : cg) grads[k].second = &v;
  for (const auto& [k, v] : grads) {
    const GradientFact* b = v.first;
    const GradientFact* c = v.second;
    if (b && c && b->state == c->state && b->norm == c->norm) continue;
    if (out.gradients.size() == 100) break;
    GradientComparison g;
    g.parameter = std::string(k);
    if (b) g.baseline_state = b->state, g.baseline_norm = b->norm;
    if (c) g.candidate_state = c->state, g.candidate_norm = c->norm;
    if (g.baseline_norm && g.candidate_norm) g.norm_delta = *g.candidate_norm - *g.baseline_norm;
    out.gradients.push_back(std::move(g));
  }
  return out;
}

}  // namespace candle_graph
