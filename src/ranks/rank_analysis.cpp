#include "ranks/rank_analysis.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>
#include <set>

#include "output/markdown_text.hpp"

namespace candle_graph::ranks {
namespace {

constexpr std::size_t kListed = 16;  // ranks named in one health message, at most
// A clock residual above this after alignment means the matched ends disagree: the fabric (or
// the matching) is not what the alignment assumes.
constexpr std::uint64_t kResidualWarnNs = 100'000;

std::string duration_text(std::uint64_t ns) {
  char buf[48];
  if (ns >= 1'000'000)
    std::snprintf(buf, sizeof buf, "%.1f ms", static_cast<double>(ns) / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.1f µs", static_cast<double>(ns) / 1e3);
  return buf;
}

// The first kListed of `ranks`, of `total` ranks in all (default: all of them are given).
std::string rank_list(const std::vector<std::uint64_t>& ranks, std::uint64_t total = 0) {
  total = std::max<std::uint64_t>(total, ranks.size());
  std::string out;
  for (std::size_t i = 0; i < ranks.size() && i < kListed; ++i)
    out += (i ? ", " : "") + std::to_string(ranks[i]);
  if (total > kListed) out += " and " + std::to_string(total - kListed) + " more";
  return out;
}

template <typename T>
T lower_median(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

// By rank; the first file of a rank stays, the others are reported and dropped.
std::vector<RankProfile> unique_ranks(std::vector<RankProfile> in,
                                      std::vector<HealthFinding>& health) {
  std::stable_sort(in.begin(), in.end(),
                   [](const RankProfile& a, const RankProfile& b) { return a.rank < b.rank; });
  std::vector<RankProfile> out;
  for (RankProfile& p : in) {
    if (!out.empty() && out.back().rank == p.rank) {
      health.push_back({"duplicate_rank", "rank " + std::to_string(p.rank) + " is in both " +
                                              out.back().file + " and " + p.file +
                                              "; the second is left out"});
      continue;
    }
    out.push_back(std::move(p));
  }
  return out;
}

// One world size for all, every rank below it, every rank of it present.
void check_world(const std::vector<RankProfile>& ranks, std::vector<HealthFinding>& health) {
  std::map<std::uint64_t, std::vector<std::uint64_t>> by_size;
  for (const RankProfile& p : ranks)
    if (p.world_size) by_size[*p.world_size].push_back(p.rank);
  if (by_size.empty()) {
    health.push_back(
        {"world_size_unknown", "no trace states its world_size: missing ranks cannot be detected"});
    return;
  }
  if (by_size.size() > 1) {
    std::string msg = "the traces are of different runs: world_size";
    for (const auto& [size, rs] : by_size)
      msg += " " + std::to_string(size) + " (ranks " + rank_list(rs) + ");";
    msg.pop_back();
    health.push_back({"world_size_mismatch", msg});
    return;
  }
  const std::uint64_t world = by_size.begin()->first;
  std::set<std::uint64_t> present;
  std::vector<std::uint64_t> outside;
  for (const RankProfile& p : ranks) {
    present.insert(p.rank);
    if (p.rank >= world) outside.push_back(p.rank);
  }
  if (!outside.empty())
    health.push_back(
        {"rank_outside_world",
         "rank " + rank_list(outside) + " is not below world_size " + std::to_string(world)});
  // Counted, and only the listed ones enumerated: world_size comes from the input (a trace's
  // tag, a summary), and 2^60 of it must not mean a loop or a list of 2^60 ranks.
  const auto below =
      static_cast<std::uint64_t>(std::distance(present.begin(), present.lower_bound(world)));
  const std::uint64_t missing_count = world - below;
  std::vector<std::uint64_t> missing;
  for (std::uint64_t r = 0; r < world && missing.size() < kListed; ++r)
    if (!present.count(r)) missing.push_back(r);
  if (missing_count > 0)
    health.push_back(
        {"missing_ranks", std::to_string(missing_count) + " of " + std::to_string(world) +
                              " ranks have no trace: " + rank_list(missing, missing_count)});
}

// Every rank profiled the same steps (ProfilerStep#N numbers), as one run's ranks do.
void check_steps(const std::vector<RankProfile>& ranks, std::vector<HealthFinding>& health) {
  auto numbers = [](const RankProfile& p) {
    std::vector<std::uint64_t> n;
    for (const StepWall& s : p.steps) n.push_back(s.step);
    return n;
  };
  if (ranks.empty()) return;
  const std::vector<std::uint64_t> first = numbers(ranks.front());
  std::vector<std::uint64_t> differ;
  for (const RankProfile& p : ranks)
    if (numbers(p) != first) differ.push_back(p.rank);
  if (!differ.empty())
    health.push_back({"step_mismatch", "the traces are of different runs or windows: ranks " +
                                           rank_list(differ) + " profiled other steps than rank " +
                                           std::to_string(ranks.front().rank)});
}

// A process group two ranks both list must be the same group (name, size, members): otherwise
// the traces come from runs configured differently. A group only some ranks list is normal (a
// subgroup's members know it).
void check_process_groups(const std::vector<RankProfile>& ranks,
                          std::vector<HealthFinding>& health) {
  std::map<std::string, std::map<std::string, std::vector<std::uint64_t>>> configs;
  for (const RankProfile& p : ranks)
    for (const auto& [name, entry] : p.process_groups) configs[name][entry].push_back(p.rank);
  for (const auto& [name, variants] : configs) {
    if (variants.size() < 2) continue;
    std::string msg = "the traces are of different runs: process group " + name +
                      " is configured " + std::to_string(variants.size()) + " ways:";
    for (const auto& [entry, rs] : variants) msg += " ranks " + rank_list(rs) + ";";
    msg.pop_back();
    health.push_back({"process_group_mismatch", msg});
  }
}

// One call of a collective on the ranks that took part in it (indices into `clocked`, ascending).
struct MatchedCall {
  std::size_t collective = 0;  // index into Matching::identities
  std::vector<std::size_t> ranks;
  std::vector<CollectiveCall> calls;  // parallel to ranks
};

struct CollectiveIdentity {
  std::string name, process_group;
  auto operator<=>(const CollectiveIdentity&) const = default;
};

struct Matching {
  std::vector<CollectiveIdentity> identities;
  std::vector<MatchedCall> calls;
};

const RankCollective* find_collective(const RankProfile& p, const CollectiveIdentity& id) {
  for (const RankCollective& c : p.collectives)
    if (c.name == id.name && c.process_group == id.process_group) return &c;
  return nullptr;
}

std::string identity_text(const CollectiveIdentity& id) {
  return id.process_group.empty() ? id.name : id.name + " (process group " + id.process_group + ")";
}

bool every_call_has_seq(const std::vector<const RankCollective*>& per_rank) {
  for (const RankCollective* c : per_rank)
    for (const CollectiveCall& call : c->calls)
      if (!call.seq) return false;
  return true;
}

// By PyTorch's sequence number: a seq on every participating rank is one call.
void match_by_seq(const CollectiveIdentity& id, std::size_t index,
                  const std::vector<std::size_t>& ranks,
                  const std::vector<const RankCollective*>& per_rank, Matching& m,
                  std::vector<HealthFinding>& health) {
  std::map<std::uint64_t, MatchedCall> by_seq;
  for (std::size_t i = 0; i < per_rank.size(); ++i)
    for (const CollectiveCall& call : per_rank[i]->calls) {
      MatchedCall& mc = by_seq[*call.seq];
      if (!mc.ranks.empty() && mc.ranks.back() == ranks[i]) continue;  // a seq twice: first kept
      mc.collective = index;
      mc.ranks.push_back(ranks[i]);
      mc.calls.push_back(call);
    }
  std::uint64_t partial = 0;
  for (auto& [seq, mc] : by_seq) {
    if (mc.ranks.size() == ranks.size())
      m.calls.push_back(std::move(mc));
    else
      ++partial;
  }
  if (partial)
    health.push_back({"collective_seq_unmatched",
                      identity_text(id) + ": " + std::to_string(partial) + " of " +
                          std::to_string(by_seq.size()) +
                          " sequence numbers are not on every rank of the group; they are not "
                          "matched"});
}

// By order: the k-th call on each rank, up to the smallest count.
void match_by_order(const CollectiveIdentity& id, std::size_t index,
                    const std::vector<std::size_t>& ranks,
                    const std::vector<const RankCollective*>& per_rank, Matching& m,
                    std::vector<HealthFinding>& health) {
  std::size_t lo = SIZE_MAX, hi = 0;
  for (const RankCollective* c : per_rank) {
    lo = std::min(lo, c->calls.size());
    hi = std::max(hi, c->calls.size());
  }
  if (lo != hi)
    health.push_back(
        {"collective_count_mismatch", identity_text(id) + " ran " + std::to_string(lo) + " to " +
                                          std::to_string(hi) + " times per rank; the first " +
                                          std::to_string(lo) + " of each rank are matched"});
  for (std::size_t k = 0; k < lo; ++k) {
    MatchedCall call{index, ranks, {}};
    for (const RankCollective* c : per_rank) call.calls.push_back(c->calls[k]);
    m.calls.push_back(std::move(call));
  }
}

// A collective recorded with its process group is matched among the ranks that have that group
// (a subgroup's ranks only); one known by its kernel name alone must be on every clocked rank.
Matching match_collectives(const std::vector<const RankProfile*>& clocked,
                           std::vector<HealthFinding>& health) {
  Matching m;
  if (clocked.empty()) return m;
  std::set<CollectiveIdentity> identities;
  for (const RankProfile* p : clocked)
    for (const RankCollective& c : p->collectives) identities.insert({c.name, c.process_group});
  for (const CollectiveIdentity& id : identities) {
    std::vector<const RankCollective*> per_rank;
    std::vector<std::size_t> ranks;
    std::vector<std::uint64_t> without;
    for (std::size_t r = 0; r < clocked.size(); ++r) {
      if (const RankCollective* c = find_collective(*clocked[r], id)) {
        per_rank.push_back(c);
        ranks.push_back(r);
      } else {
        without.push_back(clocked[r]->rank);
      }
    }
    if (id.process_group.empty() && !without.empty()) {
      health.push_back(
          {"collective_not_on_every_rank",
           id.name + " is not on ranks " + rank_list(without) + "; it is not matched"});
      continue;
    }
    if (ranks.size() < 2 && clocked.size() > 1) continue;  // a group of one waits for nobody
    m.identities.push_back(id);
    const std::size_t index = m.identities.size() - 1;
    if (every_call_has_seq(per_rank))
      match_by_seq(id, index, ranks, per_rank, m, health);
    else
      match_by_order(id, index, ranks, per_rank, m, health);
  }
  return m;
}

// Offsets against the first clocked rank (the lowest), from the ends of the calls every clocked
// rank took part in.
std::vector<ClockAlignment> align_clocks(const std::vector<const RankProfile*>& clocked,
                                         const Matching& m) {
  std::vector<ClockAlignment> out;
  std::vector<const MatchedCall*> world;
  for (const MatchedCall& c : m.calls)
    if (c.ranks.size() == clocked.size()) world.push_back(&c);
  if (world.empty()) return out;
  for (std::size_t r = 0; r < clocked.size(); ++r) {
    std::vector<std::int64_t> diffs;
    diffs.reserve(world.size());
    for (const MatchedCall* c : world) diffs.push_back(c->calls[r].end_ns - c->calls[0].end_ns);
    ClockAlignment a{clocked[r]->rank, lower_median(diffs), 0};
    for (std::int64_t d : diffs) {
      const std::int64_t off = d - a.offset_ns;
      a.residual_ns = std::max(a.residual_ns, static_cast<std::uint64_t>(off < 0 ? -off : off));
    }
    out.push_back(a);
  }
  return out;
}

// Per matched call: who arrived last, the skew and the wait the last one imposed.
struct Arrival {
  std::size_t last = 0;  // index into the call's ranks
  std::uint64_t skew_ns = 0;
  std::uint64_t imposed_ns = 0;
  std::uint64_t behind_next_ns = 0;  // last start − the next-latest start
};

Arrival arrival_of(const MatchedCall& c, const std::vector<ClockAlignment>& clock) {
  std::vector<std::int64_t> starts;
  for (std::size_t i = 0; i < c.calls.size(); ++i)
    starts.push_back(c.calls[i].start_ns - clock[c.ranks[i]].offset_ns);
  Arrival a;
  // Ties go to the lowest rank: max_element keeps the first maximum.
  a.last =
      static_cast<std::size_t>(std::max_element(starts.begin(), starts.end()) - starts.begin());
  const std::int64_t latest = starts[a.last];
  std::int64_t earliest = latest, next = INT64_MIN;
  for (std::size_t r = 0; r < starts.size(); ++r) {
    earliest = std::min(earliest, starts[r]);
    if (r == a.last) continue;
    next = std::max(next, starts[r]);
    a.imposed_ns += static_cast<std::uint64_t>(latest - starts[r]);
  }
  a.skew_ns = static_cast<std::uint64_t>(latest - earliest);
  a.behind_next_ns = next == INT64_MIN ? 0 : static_cast<std::uint64_t>(latest - next);
  return a;
}

struct ArrivalSummary {
  std::vector<CollectiveSkew> collectives;
  std::vector<Straggler> stragglers;
  std::vector<std::uint64_t> saved_if_median;  // per clocked rank: Σ behind_next_ns when last
};

ArrivalSummary summarize_arrivals(const std::vector<const RankProfile*>& clocked, const Matching& m,
                                  const std::vector<ClockAlignment>& clock) {
  ArrivalSummary s;
  for (const CollectiveIdentity& id : m.identities)
    s.collectives.push_back({id.name, id.process_group, 0, 0, 0});
  std::vector<std::uint64_t> skew_sum(m.identities.size(), 0);
  std::vector<Straggler> per_rank(clocked.size());
  s.saved_if_median.assign(clocked.size(), 0);
  for (std::size_t r = 0; r < clocked.size(); ++r) per_rank[r].rank = clocked[r]->rank;
  for (const MatchedCall& c : m.calls) {
    const Arrival a = arrival_of(c, clock);
    CollectiveSkew& k = s.collectives[c.collective];
    ++k.count;
    skew_sum[c.collective] += a.skew_ns;
    k.max_skew_ns = std::max(k.max_skew_ns, a.skew_ns);
    if (c.ranks.size() < 2) continue;  // nobody to arrive after
    const std::size_t last = c.ranks[a.last];
    ++per_rank[last].times_last;
    per_rank[last].imposed_wait_ns += a.imposed_ns;
    s.saved_if_median[last] += a.behind_next_ns;
  }
  for (std::size_t i = 0; i < s.collectives.size(); ++i)
    if (s.collectives[i].count)
      s.collectives[i].mean_skew_ns = skew_sum[i] / s.collectives[i].count;
  for (const Straggler& st : per_rank)
    if (st.times_last > 0) s.stragglers.push_back(st);
  std::stable_sort(s.stragglers.begin(), s.stragglers.end(),
                   [](const Straggler& a, const Straggler& b) {
                     if (a.times_last != b.times_last) return a.times_last > b.times_last;
                     return a.imposed_wait_ns > b.imposed_wait_ns;
                   });
  return s;
}

std::vector<StepSpread> step_spreads(const std::vector<RankProfile>& ranks) {
  std::map<std::uint64_t, std::vector<std::pair<std::uint64_t, std::uint64_t>>> by_step;
  for (const RankProfile& p : ranks)
    for (const StepWall& s : p.steps)
      if (!s.cut_short) by_step[s.step].emplace_back(p.rank, s.wall_ns);
  std::vector<StepSpread> out;
  for (const auto& [step, walls] : by_step) {
    StepSpread s{step, walls.size(), 0, 0, 0, 0};
    std::vector<std::uint64_t> values;
    for (const auto& [rank, wall] : walls) {
      values.push_back(wall);
      if (values.size() == 1 || wall > s.max_wall_ns) {  // ties: the lowest rank (walls by rank)
        s.max_wall_ns = wall;
        s.slowest_rank = rank;
      }
    }
    s.median_wall_ns = lower_median(values);
    s.spread_ns = s.max_wall_ns - s.median_wall_ns;
    out.push_back(s);
  }
  return out;
}

std::optional<StepEstimate> estimate_step(const std::vector<const RankProfile*>& clocked,
                                          const ArrivalSummary& s) {
  if (s.stragglers.empty()) return std::nullopt;
  StepEstimate e;
  e.straggler = s.stragglers.front().rank;
  for (std::size_t r = 0; r < clocked.size(); ++r) {
    e.measured_ns = std::max(e.measured_ns, clocked[r]->region_ns);
    if (clocked[r]->rank == e.straggler) e.saved_ns = s.saved_if_median[r];
  }
  e.estimated_ns = e.measured_ns - std::min(e.saved_ns, e.measured_ns);
  return e;
}

// The top straggler only: the stragglers list has the rest.
void add_straggler_finding(RanksAnalysis& a) {
  if (a.stragglers.empty()) return;
  const Straggler& s = a.stragglers.front();
  std::uint64_t matched = 0;
  for (const CollectiveSkew& c : a.collectives) matched += c.count;
  a.findings.push_back("rank " + std::to_string(s.rank) + " arrived last at " +
                       std::to_string(s.times_last) + " of " + std::to_string(matched) +
                       " collectives, imposing " + duration_text(s.imposed_wait_ns) +
                       " of wait on the others (rule: latest start on the aligned clock; "
                       "wait = Σ its start − each other rank's start)");
}

// Ranks on GPUs of different models (as their traces name them) take different times for the
// same work: said, so that a straggler is not read as the code's doing alone.
void add_gpu_model_finding(RanksAnalysis& a) {
  std::map<std::string, std::vector<std::uint64_t>> by_model;
  for (const RankProfile& p : a.ranks)
    if (p.gpu_model) by_model[*p.gpu_model].push_back(p.rank);
  if (by_model.size() < 2) return;
  std::string text = "the ranks ran on " + std::to_string(by_model.size()) + " GPU models:";
  for (const auto& [model, ranks] : by_model)
    text += " " + output::quoted_code(model) + " (rank" + (ranks.size() > 1 ? "s " : " ") +
            rank_list(ranks) + "),";
  text.back() = ';';
  a.findings.push_back(text +
                       " their times differ by the hardware as well as by the work (rule: the "
                       "model each trace names, Kineto's deviceProperties)");
}

void add_findings(RanksAnalysis& a) {
  add_straggler_finding(a);
  for (const CollectiveSkew& c : a.collectives)
    if (c.count)
      a.findings.push_back(identity_text({c.name, c.process_group}) + ": arrival skew up to " +
                           duration_text(c.max_skew_ns) + " (mean " +
                           duration_text(c.mean_skew_ns) + ") over " + std::to_string(c.count) +
                           " matched calls (rule: one sequence number of a process group, else "
                           "the k-th call of a name on each rank, is one collective; skew = "
                           "latest − earliest aligned start)");
  for (const StepSpread& s : a.steps)
    if (s.ranks > 1 && s.median_wall_ns > 0)
      a.findings.push_back("step " + std::to_string(s.step) + ": rank " +
                           std::to_string(s.slowest_rank) + " is slowest at " +
                           duration_text(s.max_wall_ns) + ", " + duration_text(s.spread_ns) +
                           " above the median rank (rule: spread = max − median wall time)");
  if (a.estimate)
    a.findings.push_back("if rank " + std::to_string(a.estimate->straggler) +
                         " arrived at its collectives like the median rank, the measured step "
                         "would take about " +
                         duration_text(a.estimate->estimated_ns) + " instead of " +
                         duration_text(a.estimate->measured_ns) +
                         " (model: each collective it was last at starts at the next-latest "
                         "arrival; the saving carries to the end of the slowest rank's step)");
  add_gpu_model_finding(a);
}

}  // namespace

RanksAnalysis analyze_ranks(std::vector<RankProfile> profiles) {
  RanksAnalysis a;
  a.ranks = unique_ranks(std::move(profiles), a.health);
  check_world(a.ranks, a.health);
  for (const RankProfile& p : a.ranks)
    if (!p.untrusted.empty())
      a.health.push_back({"rank_untrusted", "rank " + std::to_string(p.rank) + " (" + p.file +
                                                "): its trace is untrusted, so its figures here "
                                                "may be wrong: " +
                                                p.untrusted});
  check_steps(a.ranks, a.health);
  check_process_groups(a.ranks, a.health);
  std::vector<const RankProfile*> clocked;
  for (const RankProfile& p : a.ranks) {
    if (p.region_start_ns) {
      clocked.push_back(&p);
    } else {
      a.health.push_back({"clock_unknown", "rank " + std::to_string(p.rank) + " (" + p.file +
                                               ") has no absolute region start "
                                               "(source.region_start_ns): it is left out of the "
                                               "clock alignment and the collectives"});
    }
  }
  const Matching m = match_collectives(clocked, a.health);
  a.clock = align_clocks(clocked, m);
  if (clocked.size() > 1 && a.clock.empty())
    a.health.push_back({"clocks_not_aligned",
                        "no collective ran on every rank with a clock: the clocks cannot be "
                        "aligned, so no arrival skew or straggler is computed"});
  for (const ClockAlignment& c : a.clock)
    if (c.residual_ns > kResidualWarnNs)
      a.health.push_back({"clock_residual_high",
                          "rank " + std::to_string(c.rank) + ": matched collective ends still " +
                              "disagree by up to " + duration_text(c.residual_ns) +
                              " after clock alignment (on a healthy fabric they agree within " +
                              duration_text(kResidualWarnNs) +
                              "): the collectives may not match, its skews are approximate"});
  a.steps = step_spreads(a.ranks);
  if (!a.clock.empty()) {
    const ArrivalSummary s = summarize_arrivals(clocked, m, a.clock);
    a.collectives = s.collectives;
    a.stragglers = s.stragglers;
    a.estimate = estimate_step(clocked, s);
  }
  add_findings(a);
  return a;
}

}  // namespace candle_graph::ranks
