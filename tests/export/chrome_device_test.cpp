// Device work in the Chrome export (chrome.md §E8), on real Kineto traces.
// The expected values come from an independent parse of the fixture with nlohmann, not our
// importer (support/kineto_reference.hpp). The export is read back with nlohmann too.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_test_support.hpp"
#include "support/kineto_reference.hpp"

namespace {

using nlohmann::json;
namespace fs = std::filesystem;
using cgtest::kineto;
using cgtest::read_json;

json export_chrome(const fs::path& input, const fs::path& output) {
  const auto r =
      cgcli::run_cli({"export", input.string(), "--format", "chrome", "-o", output.string()});
  EXPECT_EQ(r.exit_code, 0) << cgcli::describe(r);
  return json::parse(cgcli::read_file(output));
}

// The slices of `at`'s (pid, tid) that contain its ts. Several when calls of 0 µs share an instant
// (Kineto's integer µs): a reader cannot tell them apart either, so any of them may be the one.
std::vector<const json*> slices_at(const std::vector<const json*>& slices, const json& at) {
  std::vector<const json*> found;
  const double ts = at.at("ts").get<double>();
  for (const json* s : slices) {
    if (s->at("pid") != at.at("pid") || s->at("tid") != at.at("tid")) continue;
    const double from = s->at("ts").get<double>();
    const double to = from + (s->contains("dur") ? s->at("dur").get<double>() : 0.0);
    if (from <= ts && ts <= to) found.push_back(s);
  }
  return found;
}

// True when a runtime call slice under the flow's start and a device slice under its end share
// the correlation id.
bool joins_by_correlation(const std::vector<const json*>& calls,
                          const std::vector<const json*>& work) {
  for (const json* c : calls) {
    if (c->at("args").value("op_kind", "") != "runtime" || !c->at("args").contains("correlation"))
      continue;
    for (const json* w : work)
      if (w->at("args").value("correlation", -1LL) == c->at("args").at("correlation")) return true;
  }
  return false;
}

struct Exported {
  std::vector<const json*> device, host;  // device slices; host op slices (X and instants)
  std::map<long long, const json*> starts, ends;
};

Exported classify(const json& out) {
  Exported x;
  for (const json& e : out.at("traceEvents")) {
    const std::string ph = e.at("ph"), cat = e.value("cat", "");
    if (ph == "X" && (cat == "device" || cat == "sync")) x.device.push_back(&e);
    if ((ph == "X" || ph == "i") && cat == "op") x.host.push_back(&e);
    if (cat == "ac2g" && ph == "s") {
      EXPECT_TRUE(x.starts.emplace(e.at("id"), &e).second);
    }
    if (cat == "ac2g" && ph == "f") {
      EXPECT_TRUE(x.ends.emplace(e.at("id"), &e).second);
    }
  }
  return x;
}

void expect_device_tracks_and_flows(std::string_view fixture) {
  SCOPED_TRACE(std::string(fixture));
  cgcli::TempDir dir;
  // Kernels, memcpys and memsets launched in the measured region, per args.stream.
  std::map<long long, std::size_t> expected;
  for (const auto& w : cgtest::device_work_in_region(read_json(kineto(fixture))))
    if (w.cat != "cuda_sync") ++expected[w.stream];
  ASSERT_FALSE(expected.empty());
  const json out = export_chrome(kineto(fixture), dir / "out.json");
  const Exported x = classify(out);

  // Slices per stream: the work (not the syncs), counted by the slice's own args.stream.
  std::map<long long, std::size_t> got;
  for (const json* s : x.device) {
    EXPECT_GE(s->at("pid").get<int>(), 1000);
    if (s->at("cat") == "device") ++got[s->at("args").at("stream").get<long long>()];
    if (s->at("cat") == "sync") {
      EXPECT_EQ(s->at("args").at("op_kind"), "sync");
    }
  }
  EXPECT_EQ(got, expected);

  // Every flow start has its end, and the other way round.
  ASSERT_FALSE(x.starts.empty());
  std::set<long long> start_ids, end_ids;
  for (const auto& [id, e] : x.starts) start_ids.insert(id);
  for (const auto& [id, e] : x.ends) end_ids.insert(id);
  EXPECT_EQ(start_ids, end_ids);
  // Each start lies on a runtime call slice with the correlation of the device slice its end
  // binds to (bp "e": a slice enclosing the end's ts on its track).
  for (const auto& [id, s] : x.starts) {
    if (!x.ends.count(id)) continue;
    const json& f = *x.ends.at(id);
    EXPECT_EQ(f.value("bp", ""), "e") << f.dump();
    const auto work = slices_at(x.device, f);
    const auto calls = slices_at(x.host, *s);
    ASSERT_FALSE(work.empty()) << f.dump();
    ASSERT_FALSE(calls.empty()) << s->dump();
    EXPECT_TRUE(joins_by_correlation(calls, work)) << s->dump() << "\n" << f.dump();
  }
}

TEST(ChromeDevice, TwoStreamsWholeWindowHaveTheirWorkAndLaunchFlows) {
  expect_device_tracks_and_flows("hta-alexnet-a100-2streams.json.gz");
}

TEST(ChromeDevice, OnlyWorkLaunchedInTheMeasuredStepIsExported) {
  expect_device_tracks_and_flows("hta-sampled-rank0-of128-nccl.json.gz");
}

TEST(ChromeDevice, StreamsAreNamedThreadsOfADeviceProcess) {
  cgcli::TempDir dir;
  const json out =
      export_chrome(kineto("hta-event-sync-multistream-a100.json.gz"), dir / "out.json");
  std::map<std::pair<int, int>, std::string> thread_names;
  std::map<int, std::string> process_names;
  for (const json& e : out.at("traceEvents")) {
    if (e.at("ph") != "M") continue;
    if (e.at("name") == "process_name") process_names[e.at("pid")] = e.at("args").at("name");
    if (e.at("name") == "thread_name")
      thread_names[{e.at("pid"), e.at("tid")}] = e.at("args").at("name");
  }
  EXPECT_EQ(process_names.at(1000), "cuda:0");
  std::set<std::string> streams;
  for (const auto& [track, name] : thread_names)
    if (track.first == 1000) streams.insert(name);
  // SOURCES.md: kernel/memcpy/memset on streams 20, 24 and 28.
  for (const char* s : {"stream 20", "stream 24", "stream 28"}) EXPECT_TRUE(streams.count(s)) << s;
  // Every device slice is on a named track of a named process.
  for (const json& e : out.at("traceEvents")) {
    if (e.at("ph") != "X" || e.at("pid").get<int>() < 1000) continue;
    EXPECT_TRUE(thread_names.count({e.at("pid"), e.at("tid")})) << e.dump();
    EXPECT_TRUE(process_names.count(e.at("pid"))) << e.dump();
  }
}

// A constructed trace/6 run: two devices (cuda:10 sorts after cuda:2), a stream whose second
// kernel overlaps the first (it goes to "stream 7 #2"), a sync that overlaps the work (its own
// track), a mangled name, and a kernel whose correlation no runtime call has (no flow).
constexpr std::string_view kLanes =
    R"({"kind":"meta","schema":"candle-graph/trace/6","run_id":"r","correlation_id":"c","entrypoint":"e","phase":"infer","timestamp":"t","capture_step":1,"warmup_steps":0,"device":"cuda:2","measured_region_device_synchronized":false,"timing_mode":"host","tags":{}}
{"kind":"span_start","id":"root","name":"root","start_ns":0,"span_kind":"function","measured":true}
{"kind":"op","span_id":"root","op_name":"aten::mm","inputs":[],"shape":[],"dtype":"f32","device":"cpu","duration_ns":800,"timestamp_ns":100,"total_ns":1000,"thread":1}
{"kind":"op","span_id":"root","op_name":"cudaLaunchKernel","inputs":[],"shape":[],"dtype":"unknown","device":"cpu","duration_ns":100,"timestamp_ns":200,"op_kind":"runtime","total_ns":100,"thread":1,"correlation":1}
{"kind":"op","span_id":"root","op_name":"cudaLaunchKernel","inputs":[],"shape":[],"dtype":"unknown","device":"cpu","duration_ns":100,"timestamp_ns":400,"op_kind":"runtime","total_ns":100,"thread":1,"correlation":2}
{"kind":"op","span_id":"root","op_name":"_Z6squarePfi","inputs":[],"shape":[],"dtype":"unknown","device":"cuda:2","duration_ns":0,"timestamp_ns":2000,"op_kind":"kernel","total_ns":3000,"stream":7,"correlation":1}
{"kind":"op","span_id":"root","op_name":"overlapping","inputs":[],"shape":[],"dtype":"unknown","device":"cuda:2","duration_ns":0,"timestamp_ns":4000,"op_kind":"kernel","total_ns":3000,"stream":7,"correlation":2}
{"kind":"op","span_id":"root","op_name":"Stream Sync","inputs":[],"shape":[],"dtype":"unknown","device":"cuda:2","duration_ns":0,"timestamp_ns":1500,"op_kind":"sync","total_ns":6000,"stream":7}
{"kind":"op","span_id":"root","op_name":"Memcpy DtoD","inputs":[],"shape":[],"dtype":"unknown","device":"cuda:10","duration_ns":0,"timestamp_ns":3000,"storage_bytes":4096,"op_kind":"memcpy","total_ns":500,"stream":3,"correlation":99}
{"kind":"span_end","id":"root","duration_ns":10000}
)";

TEST(ChromeDevice, LanesSeparateOverlapsSyncsAndDevices) {
  cgcli::TempDir dir;
  const json out = export_chrome(dir.write("lanes.jsonl", kLanes), dir / "out.json");
  std::map<std::pair<int, int>, std::string> threads;
  std::map<int, std::string> processes;
  std::map<std::string, json> slice;  // by args.op_name
  std::size_t starts = 0;
  for (const json& e : out.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "process_name")
      processes[e.at("pid")] = e.at("args").at("name");
    if (e.at("ph") == "M" && e.at("name") == "thread_name")
      threads[{e.at("pid"), e.at("tid")}] = e.at("args").at("name");
    if (e.at("ph") == "X" && e.at("pid").get<int>() >= 1000) slice[e.at("args").at("op_name")] = e;
    starts += e.at("ph") == "s" && e.value("cat", "") == "ac2g";
  }
  EXPECT_EQ(processes.at(1000), "cuda:2");
  EXPECT_EQ(processes.at(1001), "cuda:10");
  auto track_of = [&](const std::string& op) {
    const json& e = slice.at(op);
    return threads.at({e.at("pid"), e.at("tid")});
  };
  EXPECT_EQ(track_of("_Z6squarePfi"), "stream 7");
  EXPECT_EQ(track_of("overlapping"), "stream 7 #2");
  EXPECT_EQ(track_of("Stream Sync"), "stream 7 sync");
  EXPECT_EQ(track_of("Memcpy DtoD"), "stream 3");
  EXPECT_EQ(slice.at("Stream Sync").at("cat"), "sync");
  // The slice shows the demangled name; the raw one stays in args.
  EXPECT_EQ(slice.at("_Z6squarePfi").at("name"), "square(float*, int)");
  EXPECT_EQ(slice.at("_Z6squarePfi").at("args").at("demangled"), "square(float*, int)");
  EXPECT_EQ(slice.at("_Z6squarePfi").at("args").at("launched_by"), "aten::mm");
  EXPECT_FALSE(slice.at("overlapping").at("args").contains("demangled"));
  // Device time: total_ns in µs.
  EXPECT_EQ(slice.at("_Z6squarePfi").at("ts"), 2.0);
  EXPECT_EQ(slice.at("_Z6squarePfi").at("dur"), 3.0);
  EXPECT_EQ(slice.at("Memcpy DtoD").at("args").at("bytes"), 4096);
  // Two kernels have their runtime call; the memcpy's correlation 99 has none, the sync none.
  EXPECT_EQ(starts, 2u);
}

// The events of a trace/6 file that `keep` accepts, each as nlohmann dumps it, in file order.
std::vector<std::string> events_where(const fs::path& trace,
                                      const std::function<bool(const json&)>& keep) {
  std::vector<std::string> out;
  std::istringstream in(cgcli::read_file(trace));
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const json e = json::parse(line);
    if (keep(e)) out.push_back(e.dump());
  }
  return out;
}

// The op lines whose op_kind is device work, sorted (their order in the file is the writer's, not
// part of the content).
std::multiset<std::string> device_op_lines(const fs::path& trace) {
  const auto ops = events_where(trace, [](const json& e) {
    const std::string kind = e.value("op_kind", "");
    return e.at("kind") == "op" &&
           (kind == "kernel" || kind == "memcpy" || kind == "memset" || kind == "sync");
  });
  return {ops.begin(), ops.end()};
}

// `source` exported to DIR/out.json, then converted directly (DIR/direct.jsonl) and from the
// export (DIR/round.jsonl).
void export_and_convert_both(const fs::path& source, const cgcli::TempDir& dir) {
  export_chrome(source, dir / "out.json");
  for (const auto& [in, out] : {std::pair{source, dir / "direct.jsonl"},
                                std::pair{dir / "out.json", dir / "round.jsonl"}}) {
    const auto r = cgcli::run_cli({"convert", in.string(), "-o", out.string()});
    ASSERT_EQ(r.exit_code, 0) << cgcli::describe(r);
  }
}

TEST(ChromeDevice, ConvertOfTheExportKeepsEveryDeviceOpWithItsFields) {
  cgcli::TempDir dir;
  export_and_convert_both(kineto("hta-alexnet-a100-2streams.json.gz"), dir);
  const auto direct = device_op_lines(dir / "direct.jsonl");
  EXPECT_EQ(direct.size(), 139u);  // SOURCES.md: kernel 79 + memcpy 16 + memset 3 + cuda_sync 41
  EXPECT_EQ(device_op_lines(dir / "round.jsonl"), direct);
  // And the host side did not gain them: the same number of op lines in all.
  const auto count_ops = [](const fs::path& p) {
    const std::string text = cgcli::read_file(p);
    std::size_t n = 0;
    for (std::size_t at = 0; (at = text.find("{\"kind\":\"op\"", at)) != std::string::npos; ++at)
      ++n;
    return n;
  };
  EXPECT_EQ(count_ops(dir / "round.jsonl"), count_ops(dir / "direct.jsonl"));
}

// A trace measured at one of its steps has its measured span named `ProfilerStep#N`. In the
// export that span is ours (category `span`), not a step marker to measure again: the trace read
// back is trusted, with the spans of the source converted directly, and the two compare as equal.
TEST(ChromeDevice, TheExportOfAStepReadsBackWithItsMeasuredSpan) {
  cgcli::TempDir dir;
  const fs::path source = kineto("hta-tracediff-control-a100-nccl-6steps.json.gz");
  export_and_convert_both(source, dir);
  const auto span_lines = [](const fs::path& p) {
    return events_where(p, [](const json& e) {
      return e.at("kind") == "span_start" || e.at("kind") == "span_end";
    });
  };
  const auto direct = span_lines(dir / "direct.jsonl");
  std::size_t measured_steps = 0;
  for (const std::string& line : direct) {
    const json e = json::parse(line);
    measured_steps +=
        e.value("measured", false) && e.at("name").get<std::string>().starts_with("ProfilerStep#");
  }
  ASSERT_EQ(measured_steps, 1u);
  EXPECT_EQ(span_lines(dir / "round.jsonl"), direct);
  // The meta too, the profiler's steps included (the export keeps them in `otherData`).
  const auto meta_line = [](const fs::path& p) {
    const std::string text = cgcli::read_file(p);
    return text.substr(0, text.find('\n'));
  };
  EXPECT_NE(meta_line(dir / "direct.jsonl").find("\"profiler_steps\":[{"), std::string::npos);
  EXPECT_EQ(meta_line(dir / "round.jsonl"), meta_line(dir / "direct.jsonl"));
  const auto valid = cgcli::run_cli({"validate", (dir / "out.json").string(), "--require-trusted",
                                     "-o", (dir / "v.json").string()});
  EXPECT_EQ(valid.exit_code, 0) << cgcli::describe(valid);
  const auto cmp = cgcli::run_cli({"compare", source.string(), (dir / "out.json").string()});
  ASSERT_EQ(cmp.exit_code, 0) << cgcli::describe(cmp);
  const json c = json::parse(cmp.out);
  EXPECT_TRUE(c.at("comparable").get<bool>()) << c.at("warnings");
  EXPECT_EQ(c.at("total_delta_ns"), 0);
}

// A hand-edited export's steps: an entry without three unsigned integers is dropped and counted,
// the others kept in order.
TEST(ChromeDevice, MalformedProfilerStepsAreDroppedAndCounted) {
  cgcli::TempDir dir;
  const auto path = dir.write("edited.json", R"({"traceEvents":[
{"ph":"X","cat":"span","name":"root","pid":1,"tid":1,"ts":0,"dur":10,"args":{"span_id":"s1","measured":true,"span_kind":"function","start_ns":0,"duration_ns":10000}}
],"otherData":{"schema":"candle-graph/chrome/1","profiler_steps":[
{"step":4,"wall_ns":10,"device_busy_ns":2},{"step":-5,"wall_ns":1,"device_busy_ns":1},"x",
{"step":6,"wall_ns":1},{"step":7,"wall_ns":30,"device_busy_ns":0,"extra":true}]}})");
  const auto r = cgcli::run_cli({"convert", path.string(), "-o", (dir / "t.jsonl").string()});
  ASSERT_EQ(r.exit_code, 0) << cgcli::describe(r);
  const std::string text = cgcli::read_file(dir / "t.jsonl");
  const json meta = json::parse(text.substr(0, text.find('\n')));
  EXPECT_EQ(meta.at("profiler_steps"), json::parse(R"([{"step":4,"wall_ns":10,"device_busy_ns":2},
      {"step":7,"wall_ns":30,"device_busy_ns":0}])"));
  EXPECT_EQ(meta.at("tags").at("convert.dropped_profiler_steps"), "3");
  // Not an array at all: one value dropped.
  std::string text2 = cgcli::read_file(path);
  const std::size_t at = text2.find("\"profiler_steps\":[");
  ASSERT_NE(at, std::string::npos);
  text2 = text2.substr(0, at) + "\"profiler_steps\":\"many\"}}";
  const auto path2 = dir.write("edited2.json", text2);
  const auto r2 = cgcli::run_cli({"convert", path2.string(), "-o", (dir / "t2.jsonl").string()});
  ASSERT_EQ(r2.exit_code, 0) << cgcli::describe(r2);
  const std::string out2 = cgcli::read_file(dir / "t2.jsonl");
  const json meta2 = json::parse(out2.substr(0, out2.find('\n')));
  EXPECT_FALSE(meta2.contains("profiler_steps"));
  EXPECT_EQ(meta2.at("tags").at("convert.dropped_profiler_steps"), "1");
}

TEST(ChromeDevice, ADeviceSliceWithoutOpKindIsStillDeviceWork) {
  // A hand-edited export: a device slice that lost its args.op_kind must not become a host op
  // (its device time would count as host time).
  cgcli::TempDir dir;
  const auto path = dir.write("edited.json", R"({"traceEvents":[
{"ph":"X","cat":"span","name":"root","pid":1,"tid":1,"ts":0,"dur":10,"args":{"span_id":"s1","measured":true,"span_kind":"function","start_ns":0,"duration_ns":10000}},
{"ph":"X","cat":"device","name":"k","pid":1000,"tid":1,"ts":1,"dur":2,"args":{"span_id":"s1","device":"cuda:0","stream":7}},
{"ph":"X","cat":"sync","name":"w","pid":1000,"tid":2,"ts":1,"dur":2,"args":{"span_id":"s1","device":"cuda:0","stream":7}}
],"otherData":{"schema":"candle-graph/chrome/1"}})");
  const auto r = cgcli::run_cli({"convert", path.string(), "-o", (dir / "t.jsonl").string()});
  ASSERT_EQ(r.exit_code, 0) << cgcli::describe(r);
  const auto ops = device_op_lines(dir / "t.jsonl");
  ASSERT_EQ(ops.size(), 2u);
  std::multiset<std::string> kinds;
  for (const std::string& line : ops) kinds.insert(json::parse(line).at("op_kind"));
  EXPECT_EQ(kinds, (std::multiset<std::string>{"kernel", "sync"}));
}

TEST(ChromeDevice, AHostOnlyTraceHasNoDeviceTrack) {
  cgcli::TempDir dir;
  const json out = export_chrome(cgcli::fixture("spec_example.jsonl"), dir / "out.json");
  for (const json& e : out.at("traceEvents")) {
    EXPECT_EQ(e.value("pid", 1), 1) << e.dump();
    EXPECT_NE(e.value("cat", ""), "ac2g") << e.dump();
  }
}

}  // namespace
