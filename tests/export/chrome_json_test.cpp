// The Chrome export's text writer (export/chrome_json.hpp) and the thread that passes its pieces
// on (export/pipelined_sink.hpp). Expected text comes from output::append_f64 (the general
// shortest round-trip writer, which the short µs path must equal), from glibc's printf/strtod, or
// is written out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "export/chrome_json.hpp"
#include "export/pipelined_sink.hpp"
#include "output/json_text.hpp"

namespace {

namespace ex = candle_graph::exporting;

std::string general(double v) {
  std::string out;
  candle_graph::output::append_f64(out, v);
  return out;
}

// The short path's text, or "" when it declines the value.
std::string fast(double v) {
  char buf[32];
  const char* end = ex::write_us_fast(buf, v);
  return end ? std::string(buf, static_cast<std::size_t>(end - buf)) : std::string();
}

// The fewest significant digits that glibc's strtod reads back as `v`: the digit count the short
// path must produce (an independent shortest round-trip search).
int shortest_digits(double v) {
  for (int p = 1; p <= 17; ++p) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*e", p - 1, v);
    if (std::strtod(buf, nullptr) == v) return p;
  }
  return 17;
}

int significant_digits(const std::string& text) {
  std::string digits;
  for (char c : text)
    if (c >= '0' && c <= '9') digits += c;
  const auto first = digits.find_first_not_of('0');
  if (first == std::string::npos) return 1;
  const auto last = digits.find_last_not_of('0');
  return static_cast<int>(last - first + 1);
}

TEST(ChromeJson, MicrosecondsTakeTheShortPathAndMatchTheGeneralWriter) {
  // Written out by hand (ryu's layout: a decimal point always, `.0` for whole numbers).
  EXPECT_EQ(fast(0.0), "0.0");
  EXPECT_EQ(fast(117.708), "117.708");
  EXPECT_EQ(fast(0.001), "0.001");
  EXPECT_EQ(fast(0.01), "0.01");
  EXPECT_EQ(fast(0.666), "0.666");
  EXPECT_EQ(fast(146.8), "146.8");
  EXPECT_EQ(fast(117.0), "117.0");
  EXPECT_EQ(fast(10992796.341), "10992796.341");
  EXPECT_EQ(fast(999999999999.999), "999999999999.999");
  // Every k below 200000, and a log-uniform sample up to 10^15.
  std::vector<std::uint64_t> ks;
  for (std::uint64_t k = 0; k < 200000; ++k) ks.push_back(k);
  std::mt19937_64 rng(26);
  std::uniform_real_distribution<double> exponent(0.0, 15.0);
  for (int i = 0; i < 200000; ++i)
    ks.push_back(static_cast<std::uint64_t>(std::pow(10.0, exponent(rng))) % 1000000000000000ull);
  // k / 1000 (ns as µs) and k / 10^4 (the midpoint of two such values, where flows bind).
  for (const double scale : {1000.0, 10000.0}) {
    for (const std::uint64_t k : ks) {
      const double v = static_cast<double>(k) / scale;
      const std::string text = fast(v);
      ASSERT_EQ(text, general(v)) << "k = " << k << ", scale " << scale;
      if (k > 0) {
        ASSERT_EQ(significant_digits(text), shortest_digits(v)) << "k = " << k;
      }
    }
  }
  EXPECT_EQ(fast(61.7855), "61.7855");
  EXPECT_EQ(fast(0.0005), "0.0005");
}

TEST(ChromeJson, OtherDoublesLeaveTheShortPathAndStillMatch) {
  const double odd[] = {-1.5,
                        -0.0,
                        1e12,
                        1e21,
                        1.5e-7,
                        0.1 + 0.2,           // not the double nearest to 0.3
                        10992793.824000001,  // a `dur` nudged so that ts + dur lands on the end
                        std::nextafter(117.708, 1.0),
                        std::numeric_limits<double>::infinity(),
                        std::numeric_limits<double>::quiet_NaN()};
  for (const double v : odd) {
    EXPECT_EQ(fast(v), "") << v;
    std::string out;
    ex::ChromeJson w([&](std::string_view piece) { out.append(piece); });
    w.f64(v);
    w.flush();
    EXPECT_EQ(out, general(v)) << v;
  }
}

TEST(ChromeJson, EventsAreFlatObjectsInBoundedPiecesAndLongValuesSurvive) {
  std::string out;
  std::vector<std::size_t> pieces;
  ex::ChromeJson w([&](std::string_view piece) {
    out.append(piece);
    pieces.push_back(piece.size());
  });
  std::string expected = "[";
  w.raw("[");
  const std::string long_name(3 << 20, 'n');  // longer than a piece
  for (int i = 0; i < 40000; ++i) {
    const bool big = i == 20000;
    w.begin("\"ph\":\"X\"");
    w.key("name").str(big ? long_name : "a\"b\n");
    w.key("id").u64(static_cast<std::uint64_t>(i) * 1000003u);
    w.key("ts").f64(static_cast<double>(i) / 1000.0);
    w.key("args").lit("{");
    w.first_key("ok").boolean(i % 2 == 0);
    w.lit("}");
    w.end();
    expected += i == 0 ? "\n{" : ",\n{";
    expected += "\"ph\":\"X\",\"name\":";
    expected += big ? "\"" + long_name + "\"" : "\"a\\\"b\\n\"";
    expected += ",\"id\":" + std::to_string(static_cast<std::uint64_t>(i) * 1000003u);
    expected += ",\"ts\":" + general(static_cast<double>(i) / 1000.0);
    expected += std::string(",\"args\":{\"ok\":") + (i % 2 == 0 ? "true" : "false") + "}}";
  }
  w.flush();
  EXPECT_EQ(w.bytes(), out.size());
  ASSERT_EQ(out.size(), expected.size());
  EXPECT_EQ(out, expected);
  ASSERT_GT(pieces.size(), 3u);
  std::size_t over = 0;
  for (const std::size_t n : pieces) over += n > ex::ChromeJson::kPiece ? 1 : 0;
  EXPECT_EQ(over, 1u);  // only the piece that holds the long name
}

// Piece i: its number, then i % modulo copies of `fill` (pieces of many lengths, each unique).
std::string numbered_piece(int i, int modulo, char fill) {
  return std::to_string(i) + std::string(static_cast<std::size_t>(i % modulo), fill);
}

TEST(PipelinedSink, PassesEveryPieceOnInOrder) {
  std::string got, expected;
  {
    ex::PipelinedSink sink([&](std::string_view piece) { got.append(piece); }, 2);
    for (int i = 0; i < 5000; ++i) {
      const std::string piece = numbered_piece(i, 97, 'x');
      expected += piece;
      sink.write(piece);
    }
    sink.finish();
    EXPECT_EQ(got, expected);  // complete at finish(), before the destructor
  }
  EXPECT_EQ(got, expected);
}

// Copied pieces and handed-over buffers interleave; the bytes arrive in the order written, and
// every handover leaves the caller an empty buffer to fill again (reused once the thread has
// passed a piece on: a buffer that went on unreleased would show as text in the next one).
TEST(PipelinedSink, HandedOverBuffersKeepTheirPlaceAndComeBackEmpty) {
  std::string got, expected;
  std::size_t reused = 0;
  {
    ex::PipelinedSink sink([&](std::string_view piece) { got.append(piece); }, 2);
    std::string batch;
    for (int i = 0; i < 3000; ++i) {
      const std::string piece = numbered_piece(i, 89, 'y');
      expected += piece;
      if (i % 3 == 0) {
        sink.write(piece);
        continue;
      }
      ASSERT_TRUE(batch.empty());
      reused += batch.capacity() > 0 ? 1 : 0;
      batch = piece;
      sink.hand_over(batch);
      EXPECT_TRUE(batch.empty());
    }
    sink.finish();
  }
  EXPECT_EQ(got, expected);
  EXPECT_GT(reused, 0u);  // spares do come back
}

// A buffer handed over with the length of its text passes on exactly that prefix, in order
// with copied pieces, and the spare that comes back is as its last user left it (not cleared:
// a writer that fills it through a cursor writes over it).
TEST(PipelinedSink, HandedOverPrefixesPassOnInOrderAndSparesKeepTheirSize) {
  std::string got, expected;
  std::size_t kept_size = 0;
  {
    ex::PipelinedSink sink([&](std::string_view piece) { got.append(piece); }, 2);
    std::string buffer(64, '?');
    for (int i = 0; i < 2000; ++i) {
      const std::string piece = numbered_piece(i, 50, 'p');
      expected += piece;
      if (i % 5 == 0) {
        sink.write(piece);
        continue;
      }
      if (buffer.size() < 64) buffer.resize(64);  // an empty first spare, sized once
      buffer.replace(0, piece.size(), piece);
      sink.hand_over(buffer, piece.size());
      kept_size += buffer.size() == 64 ? 1 : 0;
    }
    sink.finish();
  }
  EXPECT_EQ(got, expected);
  EXPECT_GT(kept_size, 0u);  // spares came back with their size
}

// A batch's text goes through the handover when there is one, after what the writer buffered,
// and through the sink otherwise; bytes() counts it either way.
TEST(ChromeJson, HandOverPassesABatchWholeAfterWhatIsBuffered) {
  for (const bool with_handover : {false, true}) {
    std::string out;
    std::size_t handed = 0;
    ex::ChromeJson w([&](std::string_view piece) { out.append(piece); });
    if (with_handover)
      w.set_handover([&](std::string& text) {
        ++handed;
        out += text;
        text.clear();
      });
    w.begin("\"ph\":\"X\"");
    std::string batch = ",\n{\"ph\":\"i\"}";
    w.hand_over(batch);
    EXPECT_TRUE(batch.empty());
    w.continue_after_element();
    w.begin("\"ph\":\"C\"");
    w.end();
    w.flush();
    // `begin` leaves its object open, so the first event reads `{"ph":"X"` until a caller ends it.
    const std::string expected = "\n{\"ph\":\"X\",\n{\"ph\":\"i\"},\n{\"ph\":\"C\"}";
    EXPECT_EQ(out, expected);
    EXPECT_EQ(w.bytes(), expected.size());
    EXPECT_EQ(handed, with_handover ? 1u : 0u);
  }
}

TEST(PipelinedSink, AFailureOfTheNextSinkReachesTheWriter) {
  int taken = 0;
  ex::PipelinedSink sink([&](std::string_view) {
    if (++taken == 3) throw std::runtime_error("disk full");
  });
  bool thrown = false;
  try {
    for (int i = 0; i < 1000; ++i) sink.write("piece");
    sink.finish();
  } catch (const std::runtime_error& e) {
    thrown = true;
    EXPECT_STREQ(e.what(), "disk full");
  }
  EXPECT_TRUE(thrown);
  EXPECT_EQ(taken, 3);  // nothing passed on after the failure
}

TEST(PipelinedSink, DestroyedWithoutFinishStopsWithoutWaitingForTheQueue) {
  std::string got;
  {
    ex::PipelinedSink sink([&](std::string_view piece) { got.append(piece); });
    sink.write("a");
    sink.write("b");
  }  // an export that failed: the destructor must return (the test would hang otherwise)
  EXPECT_LE(got.size(), 2u);
}

}  // namespace
