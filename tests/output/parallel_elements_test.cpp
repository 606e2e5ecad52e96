// Elements formatted in batches on several threads must give exactly the text of one thread.
// The expected text comes from nlohmann's dump (the layout JsonStream reproduces, checked in
// json_stream_test.cpp), never from the code under test.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "json_dom_helpers.hpp"
#include "output/json_stream.hpp"
#include "output/parallel_elements.hpp"
#include "support/forked_child.hpp"
#include "support/sanitizers.hpp"

using namespace candle_graph::output;
using candle_graph::test::write_dom;

namespace {

using OrderedJson = nlohmann::ordered_json;

std::string to_text(const OrderedJson& value, JsonStyle style) {
  const int indent = style == JsonStyle::pretty ? 2 : -1;
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// Elements of every shape: nested objects and arrays, empty ones, strings needing escapes.
OrderedJson elements(int n) {
  OrderedJson items = OrderedJson::array();
  for (int i = 0; i < n; ++i) {
    OrderedJson e = {{"id", "node-" + std::to_string(i)},
                     {"size", static_cast<std::uint64_t>(i) * 4099},
                     {"name", std::string(static_cast<std::size_t>(i % 50), 'n') + "\"\\\n"}};
    e["shape"] = i % 3 == 0 ? OrderedJson::array() : OrderedJson{i, i + 1};
    e["more"] = i % 4 == 0 ? OrderedJson::object() : OrderedJson{{"flag", i % 2 == 0}};
    items.push_back(std::move(e));
  }
  return items;
}

// Writes {"before": ..., "items": [the elements], "after": 1} at `depth` levels of nesting,
// `prefix` elements written one by one before the batched ones.
std::string write_document(JsonStream& w, const OrderedJson& items, int depth, std::size_t prefix,
                           const ElementBatches& batches) {
  for (int d = 0; d < depth; ++d) w.begin_object().key("level");
  w.begin_object().key("before").string("b").key("items").begin_array();
  for (std::size_t i = 0; i < prefix; ++i) write_dom(w, items[i]);
  const std::size_t rest = items.size() - prefix;
  write_batches_in_parallel(w, rest, batches, [&](JsonStream& out, std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) write_dom(out, items[prefix + i]);
  });
  w.end_array().key("after").u64(1).end_object();
  for (int d = 0; d < depth; ++d) w.end_object();
  w.finish();
  return w.take();
}

OrderedJson expected_document(const OrderedJson& items, int depth) {
  OrderedJson doc = {{"before", "b"}, {"items", items}, {"after", 1}};
  for (int d = 0; d < depth; ++d) doc = OrderedJson{{"level", doc}};
  return doc;
}

}  // namespace

// Batches of 1, 2, 7 and 1000 elements, and batches sized to about 200 and 5000 bytes of text
// after a first one of 3 or 2 elements, on 2 to 4 threads, pretty and compact, at a depth the
// cached indentation covers and at one past it (the writer's slow paths), with and without
// elements written before the batched ones.
TEST(ParallelElements, BatchesOnThreadsWriteTheTextOfOneThread) {
  const OrderedJson items = elements(257);
  for (JsonStyle style : {JsonStyle::pretty, JsonStyle::compact})
    for (int depth : {1, 33})
      for (std::size_t prefix : {std::size_t{0}, std::size_t{3}})
        for (unsigned threads : {2u, 3u, 4u})
          for (ElementBatches batches :
               {ElementBatches{1, 0}, ElementBatches{2, 0}, ElementBatches{7, 0},
                ElementBatches{1000, 0}, ElementBatches{3, 200}, ElementBatches{2, 5000}}) {
            JsonStream w({}, style);
            w.set_format_threads(threads);
            const std::string text = write_document(w, items, depth, prefix, batches);
            ASSERT_EQ(text, to_text(expected_document(items, depth), style))
                << "depth " << depth << ", prefix " << prefix << ", threads " << threads
                << ", batches " << batches.first << "/" << batches.target_bytes;
          }
}

// A stream with a sink and a handover (the file path of every command): fragments reach the
// writing side whole, after what the stream held, in order.
TEST(ParallelElements, FragmentsAreHandedOverInOrder) {
  const OrderedJson items = elements(500);
  std::string text;
  std::size_t handovers = 0;
  JsonStream w([&](std::string_view) { ADD_FAILURE() << "copied instead of handed over"; },
               JsonStyle::pretty, 256);
  w.set_handover([&](std::string& buffer, std::size_t used) {
    text.append(buffer.data(), used);
    ++handovers;
    buffer.assign(handovers % 3 * 100, '#');  // a spare of any size, with stale bytes
  });
  w.set_format_threads(2);
  write_document(w, items, 1, 0, {16, 0});
  EXPECT_EQ(text, to_text(expected_document(items, 1), JsonStyle::pretty));
  EXPECT_GT(handovers, 500u / 16);
}

// The sequential path (one thread, or fewer than two batches) is the same loop.
TEST(ParallelElements, WriteElementsFallsBackToOneThread) {
  const OrderedJson items = elements(40);
  for (unsigned threads : {1u, 2u}) {
    JsonStream w;
    w.set_format_threads(threads);
    w.begin_array();
    std::atomic<int> calls = 0;
    write_elements(w, items.size(), [&](JsonStream& out, std::size_t i) {
      ++calls;
      write_dom(out, items[i]);
    });
    w.end_array();
    w.finish();
    EXPECT_EQ(w.take(), to_text(items, JsonStyle::pretty));
    EXPECT_EQ(calls, 40);
  }
}

// Fragments keep the stream's bound on long strings.
TEST(ParallelElements, FragmentsShortenLongStringsLikeTheStream) {
  OrderedJson items = OrderedJson::array(), shortened = OrderedJson::array();
  for (int i = 0; i < 64; ++i) {
    items.push_back(std::string(static_cast<std::size_t>(i), 'x'));
    shortened.push_back(i > 40 ? std::string("cut")
                               : std::string(static_cast<std::size_t>(i), 'x'));
  }
  JsonStream w;
  w.shorten_strings_over(40, [](std::string_view) { return std::string("cut"); });
  w.set_format_threads(3);
  w.begin_array();
  write_batches_in_parallel(w, items.size(), {5, 0},
                            [&](JsonStream& out, std::size_t b, std::size_t e) {
                              for (std::size_t i = b; i < e; ++i) write_dom(out, items[i]);
                            });
  w.end_array();
  w.finish();
  EXPECT_EQ(w.take(), to_text(shortened, JsonStyle::pretty));
}

// What a batch's writer throws reaches the caller once, whichever thread formatted it, and every
// thread stops (the test would hang or crash otherwise); an empty array writes nothing.
TEST(ParallelElements, AFailingBatchIsThrownToTheCaller) {
  for (std::size_t failing : {std::size_t{0}, std::size_t{5}, std::size_t{199}}) {
    JsonStream w;
    w.set_format_threads(3);
    w.begin_array();
    EXPECT_THROW(write_batches_in_parallel(w, 200, {4, 0},
                                           [&](JsonStream& out, std::size_t b, std::size_t e) {
                                             for (std::size_t i = b; i < e; ++i) {
                                               if (i == failing) throw std::runtime_error("bad");
                                               out.u64(i);
                                             }
                                           }),
                 std::runtime_error)
        << failing;
  }
  JsonStream w;
  w.set_format_threads(2);
  w.begin_array();
  write_batches_in_parallel(w, 0, {4, 0}, [](JsonStream&, std::size_t, std::size_t) {
    ADD_FAILURE() << "no batch to write";
  });
  w.end_array();
  w.finish();
  EXPECT_EQ(w.take(), "[]\n");
}

namespace {

// In a child under an address-space limit with about 2 MiB to spare: 64 threads are asked for,
// most of their 8 MiB stacks cannot be mapped, and the elements must still all be written, on
// the threads that did start. Exit codes: 0 as expected, else what went wrong.
int format_with_helpers_that_cannot_start(const OrderedJson& items, const std::string& expected) {
  if (const int failed = candle_graph::testing::limit_address_space_to_present_and(2 << 20))
    return failed;
  std::mutex m;
  std::set<std::thread::id> writers;
  try {
    JsonStream w;
    w.set_format_threads(64);
    w.begin_array();
    write_batches_in_parallel(w, items.size(), {3, 0},
                              [&](JsonStream& out, std::size_t b, std::size_t e) {
                                {
                                  std::lock_guard<std::mutex> lock(m);
                                  writers.insert(std::this_thread::get_id());
                                }
                                for (std::size_t i = b; i < e; ++i) write_dom(out, items[i]);
                              });
    w.end_array();
    w.finish();
    if (w.take() != expected) return 12;
  } catch (...) {
    return 13;
  }
  // Fewer threads wrote than were asked for: some helpers could not start (glibc may reuse the
  // stacks of threads that ended before the fork, so not all of them fail).
  if (writers.size() >= 64) return 14;
  return 0;
}

}  // namespace

TEST(ParallelElements, HelpersThatCannotStartLeaveTheWorkToTheCallingThread) {
  if (cgtest::kSanitized) GTEST_SKIP() << "the sanitizers' shadow memory needs the address space";
  const OrderedJson items = elements(300);
  const std::string expected = to_text(items, JsonStyle::pretty);
  EXPECT_EQ(candle_graph::testing::exit_code_in_child(
                [&] { return format_with_helpers_that_cannot_start(items, expected); }),
            0)
      << "-1 killed, 10/11 setup, 12 other text, 13 thrown, 14 every thread started";
}
