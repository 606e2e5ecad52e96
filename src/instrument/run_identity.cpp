#include "instrument/run_identity.hpp"

#include <unistd.h>

#include <cstdio>
#include <ctime>

namespace candle_graph::detail {

std::string make_run_id(std::chrono::system_clock::time_point now) {
  const auto nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  return "run-" + std::to_string(::getpid()) + "-" + std::to_string(nanos);
}

std::string format_utc_timestamp(std::chrono::system_clock::time_point now) {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  // Floor division so that instants before 1970 still give a valid calendar time.
  std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  long millis = static_cast<long>(ms % 1000);
  if (millis < 0) {
    millis += 1000;
    --seconds;
  }
  std::tm utc{};
  ::gmtime_r(&seconds, &utc);
  char text[96];  // room for any int year, so the output is never truncated
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, millis);
  return text;
}

}  // namespace candle_graph::detail
