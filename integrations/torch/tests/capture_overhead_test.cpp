// The capture states its own cost (libtorch.md §4.1): a per-op (and per-memory-event) cost
// measured at start, and the estimate over the events it wrote. The counts are taken from the
// written file by a separate JSON parse (nlohmann, line by line), not from the capture's
// counters or our trace reader.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "temp_trace.hpp"
#include "torch_example_model.hpp"

namespace {

using candle_graph::torch_tests::temp_trace;
using torch_example::CaptureRequest;
using torch_example::Trainer;

// What an independent reading of the file finds: the meta tags and the events by kind.
struct FileFacts {
  std::map<std::string, std::string> tags;
  std::map<std::string, std::uint64_t> events;  // by "kind"
  std::uint64_t envelope_ops = 0;               // ops in the envelope span s1
};

FileFacts read_facts(const std::filesystem::path& path) {
  FileFacts f;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;  // padding (trace6 §4.1)
    const nlohmann::json e = nlohmann::json::parse(line);
    const std::string kind = e.at("kind");
    ++f.events[kind];
    if (kind == "meta")
      for (const auto& [k, v] : e.at("tags").items()) f.tags[k] = v.get<std::string>();
    if (kind == "op" && e.at("span_id") == "s1") ++f.envelope_ops;
  }
  return f;
}

std::uint64_t number(const FileFacts& f, const std::string& key) {
  const auto it = f.tags.find(key);
  if (it == f.tags.end()) throw std::runtime_error("tag " + key + " is missing");
  return std::stoull(it->second);
}

FileFacts capture_third_update(CaptureRequest request) {
  Trainer t({});
  t.train_step();
  t.train_step();
  request.step = 3;
  t.captured_train_step(request);
  return read_facts(request.trace);
}

constexpr std::uint64_t kOneMillisecond = 1'000'000;

TEST(TorchCaptureOverhead, TagsStateAPlausibleCostAndItsProductWithTheWrittenEvents) {
  const FileFacts f = capture_third_update({.trace = temp_trace("with_memory")});
  const std::uint64_t per_op = number(f, "capture.overhead_per_op_ns");
  const std::uint64_t per_memory = number(f, "capture.overhead_per_memory_event_ns");
  // A RecordFunction round trip with our callbacks is neither free nor a millisecond.
  EXPECT_GE(per_op, 1u);
  EXPECT_LT(per_op, kOneMillisecond);
  EXPECT_GE(per_memory, 1u);
  EXPECT_LT(per_memory, kOneMillisecond);

  const std::uint64_t ops = f.events.at("op");
  const std::uint64_t memory = f.events.at("memory");
  ASSERT_GT(ops, 0u);
  ASSERT_GT(memory, 0u);
  EXPECT_EQ(number(f, "capture.ops_recorded"), ops);
  EXPECT_EQ(number(f, "capture.memory_events_recorded"), memory);
  EXPECT_EQ(number(f, "capture.overhead_estimate_ns"), per_op * ops + per_memory * memory);
  // The ops that measured the cost ran before the measured region, in the envelope span: none
  // of them is written (the example's update runs every op inside the measured region).
  EXPECT_EQ(f.envelope_ops, 0u);
}

TEST(TorchCaptureOverhead, WithoutMemoryCaptureOnlyOpsCount) {
  const FileFacts f = capture_third_update({.trace = temp_trace("no_memory"), .memory = false});
  EXPECT_EQ(f.tags.count("capture.overhead_per_memory_event_ns"), 0u);
  EXPECT_EQ(f.events.count("memory"), 0u);
  const std::uint64_t ops = f.events.at("op");
  EXPECT_EQ(number(f, "capture.overhead_estimate_ns"),
            number(f, "capture.overhead_per_op_ns") * ops);
}

TEST(TorchCaptureOverhead, UnderLibTorchsProfilerTheCostIsNotGuessed) {
  const FileFacts f =
      capture_third_update({.trace = temp_trace("under_profiler"), .under_torch_profiler = true});
  EXPECT_EQ(f.tags.count("capture.overhead_per_op_ns"), 0u);
  EXPECT_EQ(f.tags.count("capture.overhead_estimate_ns"), 0u);
  EXPECT_TRUE(f.tags.at("capture.overhead_calibration").starts_with("not measured"));
  EXPECT_EQ(number(f, "capture.ops_recorded"), f.events.at("op"));
}

}  // namespace
