#include "ranks/rank_summary.hpp"

#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "candle_graph/error.hpp"
#include "candle_graph/importer.hpp"
#include "ranks/ranks_output.hpp"

namespace candle_graph::ranks {
namespace {

using Json = nlohmann::json;
using output::JsonStream;

// A trace's times are far inside this (2^62 ns is 146 years); bounding them keeps every
// difference and sum the merge takes of two of them inside int64.
constexpr std::int64_t kMaxAbsNs = std::int64_t{1} << 62;
// A summary is a few kB per collective call list; anything this large is not one.
constexpr std::uintmax_t kMaxSummaryBytes = std::uintmax_t{1} << 30;

// [start_ns, end_ns], or [start_ns, end_ns, seq] where PyTorch recorded the sequence number.
void write_call(JsonStream& w, const CollectiveCall& c) {
  w.begin_array().i64(c.start_ns).i64(c.end_ns);
  if (c.seq) w.u64(*c.seq);
  w.end_array();
}

// One object of the summary being read, with where it is (`collectives[2]`) for the messages.
class Fields {
 public:
  Fields(const Json& j, std::string where, const std::filesystem::path& file,
         const std::set<std::string>& keys)
      : j_(j), where_(std::move(where)), file_(file) {
    if (!j_.is_object()) fail((where_.empty() ? "the document" : where_) + " is not an object");
    // Strict: a key this version does not know is a different schema, not something to skip.
    for (const auto& item : j_.items())
      if (!keys.contains(item.key()))
        fail(at(item.key()) + " is not a field of " + std::string(kRankSummarySchema));
  }

  [[noreturn]] void fail(const std::string& message) const {
    throw Error(file_.string(), 0, "not a valid rank summary: " + message);
  }
  std::string at(std::string_view key) const {
    return where_.empty() ? std::string(key) : where_ + "." + std::string(key);
  }
  const Json& get(std::string_view key) const {
    const auto it = j_.find(std::string(key));
    if (it == j_.end()) fail("missing field " + at(key));
    return *it;
  }
  bool is_null(std::string_view key) const { return get(key).is_null(); }
  std::string text(std::string_view key) const {
    const Json& v = get(key);
    if (!v.is_string()) fail(at(key) + " is not a string");
    return v.get<std::string>();
  }
  bool flag(std::string_view key) const {
    const Json& v = get(key);
    if (!v.is_boolean()) fail(at(key) + " is not true or false");
    return v.get<bool>();
  }
  std::uint64_t u64(std::string_view key) const {
    const Json& v = get(key);
    // nlohmann keeps an integer beyond uint64 as a float: that is "too large", not a type error.
    if (!v.is_number_unsigned())
      fail(at(key) + " is not an integer from 0 to 2^64-1" +
           (v.is_number_float() ? " (a fraction or too large)" : ""));
    return v.get<std::uint64_t>();
  }
  std::uint64_t ns(std::string_view key) const {
    const std::uint64_t v = u64(key);
    if (v > static_cast<std::uint64_t>(kMaxAbsNs)) fail(at(key) + " is beyond 2^62 ns");
    return v;
  }
  std::int64_t signed_ns(const Json& v, const std::string& where) const {
    if (!v.is_number_integer()) fail(where + " is not an integer");
    const bool in_range = v.is_number_unsigned()
                              ? v.get<std::uint64_t>() <= static_cast<std::uint64_t>(kMaxAbsNs)
                              : v.get<std::int64_t>() >= -kMaxAbsNs;
    if (!in_range) fail(where + " is beyond ±2^62 ns");
    return v.get<std::int64_t>();
  }
  const Json& array(std::string_view key) const {
    const Json& v = get(key);
    if (!v.is_array()) fail(at(key) + " is not an array");
    return v;
  }

 private:
  const Json& j_;
  std::string where_;
  const std::filesystem::path& file_;
};

std::vector<CollectiveCall> read_calls(const Fields& f, const Json& calls, const std::string& at) {
  std::vector<CollectiveCall> out;
  out.reserve(calls.size());
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const std::string where = at + "[" + std::to_string(i) + "]";
    const Json& c = calls[i];
    if (!c.is_array() || c.size() < 2 || c.size() > 3)
      f.fail(where + " is not a [start_ns, end_ns] pair or a [start_ns, end_ns, seq] triple");
    CollectiveCall call{f.signed_ns(c[0], where + "[0]"), f.signed_ns(c[1], where + "[1]"), {}};
    if (c.size() == 3) {
      if (!c[2].is_number_unsigned()) f.fail(where + "[2] is not an integer from 0 to 2^64-1");
      call.seq = c[2].get<std::uint64_t>();
    }
    if (call.end_ns < call.start_ns) f.fail(where + " ends before it starts");
    // The merge matches the k-th call of each rank: the order is part of the profile.
    if (!out.empty() && call.start_ns < out.back().start_ns) f.fail(where + " is out of order");
    out.push_back(call);
  }
  return out;
}

RankCollective read_collective(const Fields& top, const Json& j, std::size_t i,
                               const std::filesystem::path& file) {
  const Fields f(j, top.at("collectives") + "[" + std::to_string(i) + "]", file,
                 {"calls", "name", "process_group"});
  RankCollective c;
  c.name = f.text("name");
  if (j.contains("process_group")) c.process_group = f.text("process_group");
  c.calls = read_calls(f, f.array("calls"), f.at("calls"));
  // Derived as profile_rank sums it: each call's device time is its end − start.
  for (const CollectiveCall& call : c.calls) {
    const auto d = static_cast<std::uint64_t>(call.end_ns - call.start_ns);
    if (c.total_ns > std::numeric_limits<std::uint64_t>::max() - d)
      f.fail(f.at("calls") + " sum beyond 2^64 ns");
    c.total_ns += d;
  }
  return c;
}

void read_collectives(const Fields& f, RankProfile& p, const std::filesystem::path& file) {
  const Json& all = f.array("collectives");
  for (std::size_t i = 0; i < all.size(); ++i) {
    RankCollective c = read_collective(f, all[i], i, file);
    // profile_rank writes them by name and process group, once each; the merge relies on neither,
    // but a summary that breaks it was not written by --map.
    if (!p.collectives.empty() &&
        std::tie(c.name, c.process_group) <=
            std::tie(p.collectives.back().name, p.collectives.back().process_group))
      f.fail(f.at("collectives") + " are not sorted by name and process group, each once");
    p.collectives.push_back(std::move(c));
  }
}

void read_steps(const Fields& f, RankProfile& p, const std::filesystem::path& file) {
  const Json& steps = f.array("steps");
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Fields s(steps[i], f.at("steps") + "[" + std::to_string(i) + "]", file,
                   {"cut_short", "step", "wall_ns"});
    // Absent in the summaries written before the field was added: not cut short.
    const bool cut_short = steps[i].contains("cut_short") && s.flag("cut_short");
    if (cut_short && i + 1 != steps.size())
      s.fail(s.at("cut_short") + " is true but only the last step can be cut short");
    p.steps.push_back({s.u64("step"), s.ns("wall_ns"), cut_short});
  }
}

void read_gpu_time(const Fields& f, RankProfile& p) {
  p.busy_ns = f.ns("busy_ns");
  p.compute_ns = f.ns("compute_ns");
  p.communication_ns = f.ns("communication_ns");
  p.idle_ns = f.ns("idle_ns");
  p.exposed_communication_ns = f.ns("exposed_communication_ns");
  if (p.exposed_communication_ns > p.communication_ns)
    f.fail("exposed_communication_ns is more than communication_ns");
  // The same division profile_rank makes, so the ratio is bit for bit the local run's.
  if (p.communication_ns > 0)
    p.comm_compute_overlap = static_cast<double>(p.communication_ns - p.exposed_communication_ns) /
                             static_cast<double>(p.communication_ns);
}

RankProfile profile_from(const Json& j, const std::filesystem::path& file) {
  const Fields f(
      j, "", file,
      {"backend", "busy_ns", "collectives", "communication_ns", "compute_ns", "device",
       "exposed_communication_ns", "file", "gpu_model", "idle_ns", "measured_ns", "process_groups",
       "rank", "rank_from", "region_start_ns", "schema", "steps", "untrusted", "world_size"});
  if (f.text("schema") != kRankSummarySchema)
    f.fail("schema is \"" + f.text("schema") + "\", expected \"" + std::string(kRankSummarySchema) +
           "\"");
  RankProfile p;
  p.file = f.text("file");
  p.rank = f.u64("rank");
  p.rank_from = f.text("rank_from");
  if (p.rank_from != "distributedInfo" && p.rank_from != "file name")
    f.fail("rank_from is neither \"distributedInfo\" nor \"file name\"");
  if (!f.is_null("world_size")) p.world_size = f.u64("world_size");
  p.backend = f.text("backend");
  // Both absent in the summaries written before the fields were added: device unknown.
  if (j.contains("device") && !f.is_null("device")) {
    p.device = f.text("device");
    if (p.device.empty()) f.fail("device is empty: null, or the run's device");
  }
  if (j.contains("gpu_model") && !f.is_null("gpu_model")) {
    p.gpu_model = f.text("gpu_model");
    if (!is_gpu_model_name(*p.gpu_model))  // as a trace names it
      f.fail("gpu_model is empty, longer than " + std::to_string(kLongestDeviceName) +
             " bytes or holds a control character");
  }
  if (!f.is_null("region_start_ns"))
    p.region_start_ns = f.signed_ns(f.get("region_start_ns"), "region_start_ns");
  p.region_ns = f.ns("measured_ns");
  read_steps(f, p, file);
  // Absent in the summaries written before the field was added: trusted, as they were taken.
  if (j.contains("untrusted") && !f.is_null("untrusted")) {
    p.untrusted = f.text("untrusted");
    if (p.untrusted.empty()) f.fail("untrusted is empty: null, or why the trace is untrusted");
  }
  read_gpu_time(f, p);
  read_collectives(f, p, file);
  if (j.contains("process_groups")) {
    const Json& groups = f.get("process_groups");
    if (!groups.is_object()) f.fail("process_groups is not an object");
    for (const auto& [name, entry] : groups.items()) {
      if (!entry.is_string()) f.fail("process_groups." + name + " is not a string");
      p.process_groups.emplace(name, entry.get<std::string>());
    }
  }
  return p;
}

std::string read_text(const std::filesystem::path& file) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(file, ec);
  if (ec) throw Error(ErrorKind::io, file.string(), 0, "cannot read: " + ec.message());
  if (size > kMaxSummaryBytes)
    throw Error(file.string(), 0, "not a rank summary: larger than 1 GiB");
  std::ifstream in(file, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error(ErrorKind::io, file.string(), 0, "cannot read");
  return text;
}

}  // namespace

void write_rank_summary(JsonStream& w, const RankProfile& p) {
  w.begin_object();
  w.schema_key("backend").string(p.backend);
  w.schema_key("busy_ns").u64(p.busy_ns);
  w.schema_key("collectives").begin_array();
  for (const RankCollective& c : p.collectives) {
    w.begin_object();
    w.schema_key("calls").begin_array();
    for (const CollectiveCall& call : c.calls) write_call(w, call);
    w.end_array();
    w.schema_key("name").string(c.name);
    w.schema_key("process_group").string(c.process_group);
    w.end_object();
  }
  w.end_array();
  write_rank_times(w, p);
  w.schema_key("schema").string(kRankSummarySchema);
  w.schema_key("steps").begin_array();
  for (const StepWall& s : p.steps) {
    w.begin_object();
    w.schema_key("cut_short").boolean(s.cut_short);
    w.schema_key("step").u64(s.step);
    w.schema_key("wall_ns").u64(s.wall_ns);
    w.end_object();
  }
  w.end_array();
  write_untrusted(w, p);
  w.schema_key("world_size");
  p.world_size ? w.u64(*p.world_size) : w.null();
  w.end_object();
}

RankProfile read_rank_summary(const std::filesystem::path& file) {
  const std::string text = read_text(file);
  Json j;
  try {
    j = Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // parse_error (a truncated file among them) and out_of_range (a number beyond a double).
    throw Error(file.string(), 0,
                std::string("not a rank summary: unreadable JSON (") + e.what() + ")");
  }
  return profile_from(j, file);
}

}  // namespace candle_graph::ranks
