// trace/6 text for tests: small trace builders (meta, span_start, span_end lines), and the "this
// input must be rejected at FILE:LINE with this message" assertion; with the shared file helpers.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include "support/files.hpp"
#include "support/temp_dir.hpp"

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "candle_graph/trace.hpp"

namespace cgtest {

namespace fs = std::filesystem;

using candle_graph::testing::fixture;
using candle_graph::testing::read_file;

inline void write_file(const fs::path& p, std::string_view bytes) {
  ASSERT_TRUE(candle_graph::testing::write_file(p, bytes)) << "cannot write " << p;
}

// Non-empty lines of a text (the line terminator is not included).
inline std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    if (nl > pos) out.emplace_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return out;
}

inline std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

using TempDir = candle_graph::testing::TempDir;

// The trace6.md §4.11 meta line, and a meta line for the given phase.
inline std::string meta_line(std::string_view phase = "train") {
  return std::string(
             R"({"kind":"meta","schema":"candle-graph/trace/6","run_id":"run-1","correlation_id":"c/update-1","entrypoint":"demo::train::update","phase":")") +
         std::string(phase) +
         R"(","timestamp":"2026-08-10T12:00:00.000Z","capture_step":1,"warmup_steps":0,"device":"cpu","measured_region_device_synchronized":false,"timing_mode":"host","tags":{}})";
}

inline std::string span_start(std::string_view id, std::string_view parent, std::uint64_t start,
                              bool measured = false, std::string_view step = "") {
  std::string s = R"({"kind":"span_start","id":")" + std::string(id) + "\"";
  if (!parent.empty()) s += R"(,"parent_id":")" + std::string(parent) + "\"";
  s += R"(,"name":")" + std::string(id) + R"(","start_ns":)" + std::to_string(start) +
       R"(,"span_kind":"function","measured":)" + (measured ? "true" : "false");
  if (!step.empty()) s += R"(,"step":")" + std::string(step) + "\"";
  return s + "}";
}

inline std::string span_end(std::string_view id, std::uint64_t duration) {
  return R"({"kind":"span_end","id":")" + std::string(id) + R"(","duration_ns":)" +
         std::to_string(duration) + "}";
}

inline std::string text_of(std::initializer_list<std::string> lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// Runs `text` through both readers (in memory, and streamed from a real file) and expects both to
// reject it with `PATH:LINE: message`, where the message satisfies `matcher`.
// `line` 0 means an error about the whole file (`PATH: message`).
template <typename Matcher>
void expect_rejected(std::string_view text, std::uint64_t line, Matcher matcher) {
  using ::testing::MatchesRegex;
  {
    SCOPED_TRACE("parse_trace_text");
    try {
      (void)candle_graph::parse_trace_text(text, "trace.jsonl");
      ADD_FAILURE() << "accepted";
    } catch (const candle_graph::Error& e) {
      EXPECT_EQ(e.path(), "trace.jsonl");
      EXPECT_EQ(e.line(), line) << e.what();
      EXPECT_THAT(e.message(), matcher);
      const std::string prefix =
          line == 0 ? std::string("trace.jsonl: ") : "trace.jsonl:" + std::to_string(line) + ": ";
      EXPECT_EQ(std::string(e.what()), prefix + e.message());
    }
  }
  {
    SCOPED_TRACE("parse_trace (file)");
    TempDir dir;
    const fs::path p = dir / "t.jsonl";
    write_file(p, text);
    try {
      (void)candle_graph::parse_trace(p);
      ADD_FAILURE() << "accepted";
    } catch (const candle_graph::Error& e) {
      EXPECT_EQ(e.path(), p.string());
      EXPECT_EQ(e.line(), line) << e.what();
      EXPECT_THAT(e.message(), matcher);
      const std::string prefix =
          line == 0 ? p.string() + ": " : p.string() + ":" + std::to_string(line) + ": ";
      EXPECT_EQ(std::string(e.what()), prefix + e.message());
    }
  }
}

inline void expect_rejected(std::string_view text, std::uint64_t line, const char* exact) {
  expect_rejected(text, line, ::testing::StrEq(exact));
}

// Parses through both readers and checks they agree.
inline candle_graph::TraceDocument parse_both(std::string_view text) {
  candle_graph::TraceDocument a = candle_graph::parse_trace_text(text, "trace.jsonl");
  TempDir dir;
  write_file(dir / "t.jsonl", text);
  candle_graph::TraceDocument b = candle_graph::parse_trace(dir / "t.jsonl");
  EXPECT_TRUE(a == b) << "in-memory and file readers disagree";
  return a;
}

}  // namespace cgtest
