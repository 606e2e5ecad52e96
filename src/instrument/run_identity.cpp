#include "instrument/run_identity.hpp"

#include <unistd.h>

#include <charconv>

namespace candle_graph::detail {

std::string make_run_id(std::chrono::system_clock::time_point now) {
  const auto nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  return "run-" + std::to_string(::getpid()) + "-" + std::to_string(nanos);
}

// Civil date from the chrono calendar and digits from std::to_chars: snprintf took ~12 k
// instructions here (glibc's positional-argument path), a tenth of opening a session, and a
// session is opened right before the code it traces (e.g. one captured LibTorch update).
std::string format_utc_timestamp(std::chrono::system_clock::time_point now) {
  using namespace std::chrono;
  const auto ms = time_point_cast<milliseconds>(now);  // milliseconds truncated
  // Floor to the day so that instants before 1970 still give a valid calendar time.
  const auto day = floor<days>(ms);
  const year_month_day date{day};
  const hh_mm_ss<milliseconds> time{ms - day};
  const int year = static_cast<int>(date.year());

  std::string out;
  out.reserve(32);
  auto digits = [&out](long value, std::size_t width) {  // zero-padded to `width`
    char text[24];
    const std::size_t n =
        static_cast<std::size_t>(std::to_chars(text, text + sizeof text, value).ptr - text);
    out.append(width > n ? width - n : 0, '0');
    out.append(text, n);
  };
  if (year < 0) out.push_back('-');
  digits(year < 0 ? -static_cast<long>(year) : year, 4);
  out.push_back('-');
  digits(static_cast<long>(static_cast<unsigned>(date.month())), 2);
  out.push_back('-');
  digits(static_cast<long>(static_cast<unsigned>(date.day())), 2);
  out.push_back('T');
  digits(time.hours().count(), 2);
  out.push_back(':');
  digits(time.minutes().count(), 2);
  out.push_back(':');
  digits(static_cast<long>(time.seconds().count()), 2);
  out.push_back('.');
  digits(static_cast<long>(time.subseconds().count()), 3);
  out.push_back('Z');
  return out;
}

}  // namespace candle_graph::detail
