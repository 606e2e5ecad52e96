// Tags known only at the end of a session (TraceSession::set_final_tag): they reach the meta line
// that parse_trace reads, and rewriting that line moves no other byte of the file.
#include <gtest/gtest.h>

#include <string>

#include "candle_graph/instrument.hpp"
#include "candle_graph/trace.hpp"
#include "instrument/session_test_support.hpp"

namespace candle_graph {
namespace {

using testing_support::read_file;
using testing_support::ScratchDir;

std::string tag_value(const TraceDocument& doc, std::string_view key) {
  for (const Tag& t : doc.run().tags)
    if (t.key == key) return std::string(t.value);
  return "<absent>";
}

// A session with one op, ending with `final_tags` tags set; returns the error finish() threw and
// leaves in `before` the file as it was before the final tags were set.
std::string write_session(const std::filesystem::path& path, std::size_t room, int final_tags,
                          std::string* before = nullptr) {
  TraceSession session(
      path, ProfileRun::training("demo::update", 1, "cpu").tag("batch", "8").final_tag_room(room));
  {
    SpanGuard measured = session.begin_measurement("demo/update");
    session.record_op(measured.id(),
                      {.op_name = "matmul", .dtype = "f32", .device = "cpu", .duration_ns = 5});
  }
  session.flush();
  if (before != nullptr) *before = read_file(path);
  for (int i = 0; i < final_tags; ++i)
    session.set_final_tag("z.final" + std::to_string(i), std::to_string(100 + i));
  session.set_final_tag("batch", "16");  // overrides the opening value
  try {
    session.finish();
  } catch (const InstrumentError& e) {
    return e.what();
  }
  return {};
}

TEST(FinalTags, ReachTheMetaLineWithoutMovingOtherLines) {
  ScratchDir dir;
  std::string before;
  EXPECT_EQ(write_session(dir / "with.jsonl", 256, 2, &before), "");
  const TraceDocument doc = parse_trace(dir / "with.jsonl");
  EXPECT_EQ(tag_value(doc, "z.final0"), "100");
  EXPECT_EQ(tag_value(doc, "z.final1"), "101");
  EXPECT_EQ(tag_value(doc, "batch"), "16");
  // The meta line keeps its length and every byte after it is the one written before.
  const std::string after = read_file(dir / "with.jsonl");
  const std::size_t meta_end = before.find('\n');
  ASSERT_NE(meta_end, std::string::npos);
  EXPECT_EQ(after.find('\n'), meta_end);
  ASSERT_GE(after.size(), before.size());
  EXPECT_EQ(after.substr(meta_end, before.size() - meta_end), before.substr(meta_end));
  EXPECT_NE(after.substr(0, meta_end), before.substr(0, meta_end));
}

TEST(FinalTags, TooLittleRoomKeepsTheOpeningMetaAndSaysSo) {
  ScratchDir dir;
  const std::string error = write_session(dir / "small.jsonl", 8, 4);
  EXPECT_NE(error.find("final meta tags need"), std::string::npos) << error;
  const TraceDocument doc = parse_trace(dir / "small.jsonl");
  EXPECT_EQ(tag_value(doc, "z.final0"), "<absent>");
  EXPECT_EQ(tag_value(doc, "batch"), "8");
}

TEST(FinalTags, NoRoomAskedWritesTheMetaLineAsBefore) {
  ScratchDir dir;
  {
    TraceSession session(dir / "plain.jsonl", ProfileRun::training("demo::update", 1, "cpu"));
    session.finish();
  }
  const std::string text = read_file(dir / "plain.jsonl");
  EXPECT_EQ(text.find("  "), std::string::npos) << "no padding without final_tag_room";
}

}  // namespace
}  // namespace candle_graph
