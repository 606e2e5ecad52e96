// Decimal text of unsigned integers, the same characters as std::to_chars, written through a
// raw pointer: the number writer of every hot path (the instrumentation's event lines and the
// streamed JSON documents). Tests: EventLine.NumbersAroundEveryPowerOfTenMatchTheTraceWriter,
// JsonStream.NumbersOfEveryLength.
#pragma once

#include <cstdint>
#include <cstring>

namespace candle_graph::output {

// "00", "01", … "99": two digits per table load.
inline constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// Numbers of three or more digits (timestamps, durations, byte counts); returns the end.
char* write_decimal_long(char* p, std::uint64_t v) noexcept;

// Decimal digits of v, written at p; returns the end. Same text as std::to_chars.
// One and two digits (shape dims, small counts) stay inline without a call.
inline char* write_decimal(char* p, std::uint64_t v) noexcept {
  if (v < 10) {
    *p = static_cast<char>('0' + v);
    return p + 1;
  }
  if (v < 100) {
    std::memcpy(p, kDigitPairs + v * 2, 2);
    return p + 2;
  }
  return write_decimal_long(p, v);
}

}  // namespace candle_graph::output
