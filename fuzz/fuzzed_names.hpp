// The names the trace generators give spans, ops and kernels: one of a list (quotes, backslashes,
// tabs, multi-byte characters, the empty name, names the analyses classify) or, as often, a
// string from the fuzzer's bytes, replaced when it is not UTF-8 (the readers refuse that, and
// the generators must make traces they accept).
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <span>
#include <string>
#include <string_view>

#include "output/json_text.hpp"

namespace candle_graph::fuzz {

inline std::string fuzzed_name(FuzzedDataProvider& in, std::span<const std::string_view> names) {
  if (in.ConsumeBool())
    return std::string(names[in.ConsumeIntegralInRange<std::size_t>(0, names.size() - 1)]);
  std::string s = in.ConsumeRandomLengthString(24);
  return output::is_valid_utf8(s) ? s : "not UTF-8";
}

}  // namespace candle_graph::fuzz
