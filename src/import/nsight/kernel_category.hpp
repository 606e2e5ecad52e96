// Coarse kernel category from the kernel / operation name (added field): lets the viewer
// group GPU time the way TensorFlow Profiler's kernel stats do.
#pragma once

#include <string>
#include <string_view>

namespace candle_graph::import::nsight {

// One of: gemm, convolution, elementwise, reduction, normalization, attention, communication,
// memcpy, memset, other.
std::string kernel_category(std::string_view name);

}  // namespace candle_graph::import::nsight
