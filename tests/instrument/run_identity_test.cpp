// The meta line's `timestamp` (trace6.md §4.2: `YYYY-MM-DDTHH:MM:SS.mmmZ`, UTC, milliseconds
// truncated) against gmtime_r + strftime, an independent formatter, over instants before and after
// 1970.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>
#include <string>

#include "instrument/run_identity.hpp"

namespace candle_graph::detail {
namespace {

std::string reference(std::int64_t ms) {
  std::int64_t seconds = ms / 1000;
  std::int64_t millis = ms % 1000;
  if (millis < 0) {
    millis += 1000;
    --seconds;
  }
  const auto t = static_cast<std::time_t>(seconds);
  std::tm utc{};
  ::gmtime_r(&t, &utc);
  char date[64];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &utc);
  char out[80];
  std::snprintf(out, sizeof out, "%s.%03lldZ", date, static_cast<long long>(millis));
  return out;
}

std::chrono::system_clock::time_point at_ms(std::int64_t ms) {
  return std::chrono::system_clock::time_point(std::chrono::milliseconds(ms));
}

TEST(RunIdentity, UtcTimestampMatchesGmtime) {
  EXPECT_EQ(format_utc_timestamp(at_ms(0)), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(format_utc_timestamp(at_ms(1'796'000'000'123)), reference(1'796'000'000'123));
  EXPECT_EQ(format_utc_timestamp(at_ms(-1)), "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(format_utc_timestamp(at_ms(951'782'400'000)), "2000-02-29T00:00:00.000Z");
  std::mt19937_64 rng(7);
  // ±285 years around 1970: system_clock counts nanoseconds in 64 bits (1678..2262).
  std::uniform_int_distribution<std::int64_t> instant(-9'000'000'000'000, 9'000'000'000'000);
  for (int i = 0; i < 20000; ++i) {
    const std::int64_t ms = instant(rng);
    ASSERT_EQ(format_utc_timestamp(at_ms(ms)), reference(ms)) << ms;
  }
}

TEST(RunIdentity, SubMillisecondPartIsTruncated) {
  const auto t = at_ms(1'796'000'000'123) + std::chrono::microseconds(999);
  EXPECT_EQ(format_utc_timestamp(t), reference(1'796'000'000'123));
}

}  // namespace
}  // namespace candle_graph::detail
