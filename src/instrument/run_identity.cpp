#include "instrument/run_identity.hpp"

#include <unistd.h>

namespace candle_graph::detail {

std::string make_run_id(std::chrono::system_clock::time_point now) {
  const auto nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  return "run-" + std::to_string(::getpid()) + "-" + std::to_string(nanos);
}

// Civil date from the chrono calendar and digits written by hand: snprintf took ~12 k
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
  auto digits = [&out](long value, int width) {
    char text[24];
    int n = 0;
    do {
      text[n++] = static_cast<char>('0' + value % 10);
      value /= 10;
    } while (value != 0);
    for (int pad = n; pad < width; ++pad) out.push_back('0');
    while (n > 0) out.push_back(text[--n]);
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
