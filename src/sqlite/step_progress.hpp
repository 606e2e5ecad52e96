// How a long database write tells its caller how far it is (the CLI draws a progress line).
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

namespace candle_graph::sqlite {

// A step of the write ("trace tables", "analysis tables", "indices") and how much of it is done,
// in rows inserted or indexed. Steps come one at a time, each from 0 and ending with done == total.
using StepProgress =
    std::function<void(std::string_view step, std::uint64_t done, std::uint64_t total)>;

}  // namespace candle_graph::sqlite
