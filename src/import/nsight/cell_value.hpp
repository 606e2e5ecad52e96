// Cell values of nsys stats CSVs: null markers, thousands separators and unit scaling to
// nanoseconds / bytes (trace6.md §10.4 "Numbers", nsight.md §6.1 and §6.3).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace candle_graph::import::nsight {

// What a column's unit converts to. `time` defaults to ns when the header carries no unit (2021
// reports print `Average`, `Minimum`… in ns); `bytes` has no default (see memory-size summary).
enum class UnitKind { none, time, bytes, other };

struct UnitScale {
  UnitKind kind = UnitKind::none;
  int pow10 = 0;        // exact decimal shift (ns: 0, us: 3, ms: 6, s: 9; B: 0, KB: 3, MB: 6)
  double factor = 1.0;  // used instead of pow10 for binary units (KiB, MiB, GiB)
  bool binary = false;
};

// `unit` is the lowercase text inside the header's parentheses (`ns`, `sec`, `mb`, `%`, …).
UnitScale unit_scale(std::string_view unit);

std::string_view trim(std::string_view text);

// ASCII lowercase (labels, units and kernel names are compared without case).
std::string lower(std::string_view text);

// Empty, `None`, `-`, `N/A`, `NULL` (after trimming) mean "no value" (trace6.md §10.4 / 2023
// exports).
bool is_null_cell(std::string_view cell);

struct CellNumber {
  enum class State { null, value, invalid } state = State::null;
  std::uint64_t value = 0;
};

// Parses a non-negative quantity and converts it with `scale`: thousands separators removed,
// negatives clamped to 0, fractions truncated after scaling (exact for decimal units), overflow
// saturates. Text that is not a number gives `invalid`.
CellNumber parse_cell_number(std::string_view cell, const UnitScale& scale);

}  // namespace candle_graph::import::nsight
