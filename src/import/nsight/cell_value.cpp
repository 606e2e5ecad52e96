// Numeric cell parsing with exact decimal unit scaling (trace6.md §10.4; nsight.md §6.3).
#include "import/nsight/cell_value.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace candle_graph::import::nsight {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

// Removes grouping commas. A lone comma that is not followed by exactly three digits is a
// locale decimal comma (`"482,3"`); with three digits it is read as a thousands separator,
// the reading the original applies to every comma (trace6.md §10.4).
std::string strip_separators(std::string_view text) {
  const auto comma = text.find(',');
  if (comma != std::string_view::npos && text.find('.') == std::string_view::npos &&
      text.find(',', comma + 1) == std::string_view::npos && text.size() - comma - 1 != 3) {
    std::string out(text);
    out[comma] = '.';
    return out;
  }
  std::string out;
  out.reserve(text.size());
  for (char c : text)
    if (c != ',') out.push_back(c);
  return out;
}

// Multiplies a decimal digit string `int_part.frac_part` by 10^shift and truncates, exactly.
std::uint64_t scale_decimal(std::string_view int_part, std::string_view frac_part, int shift) {
  std::string digits(int_part);
  for (int i = 0; i < shift; ++i)
    digits.push_back(static_cast<std::size_t>(i) < frac_part.size() ? frac_part[i] : '0');
  std::uint64_t value = 0;
  for (char c : digits) {
    const std::uint64_t d = static_cast<std::uint64_t>(c - '0');
    if (value > (kMax - d) / 10) return kMax;  // saturate rather than wrap
    value = value * 10 + d;
  }
  return value;
}

bool all_digits(std::string_view s) {
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

}  // namespace

std::string lower(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return out;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

bool is_null_cell(std::string_view cell) {
  cell = trim(cell);
  return cell.empty() || iequals(cell, "none") || cell == "-" || iequals(cell, "n/a") ||
         iequals(cell, "null");
}

UnitScale unit_scale(std::string_view unit) {
  struct Entry {
    std::string_view name;
    UnitKind kind;
    int pow10;
    double factor;
  };
  static constexpr Entry kUnits[] = {
      {"", UnitKind::none, 0, 1.0},           {"ns", UnitKind::time, 0, 1.0},
      {"nsec", UnitKind::time, 0, 1.0},       {"us", UnitKind::time, 3, 1.0},
      {"usec", UnitKind::time, 3, 1.0},       {"\xC2\xB5s", UnitKind::time, 3, 1.0},
      {"ms", UnitKind::time, 6, 1.0},         {"msec", UnitKind::time, 6, 1.0},
      {"s", UnitKind::time, 9, 1.0},          {"sec", UnitKind::time, 9, 1.0},
      {"b", UnitKind::bytes, 0, 1.0},         {"bytes", UnitKind::bytes, 0, 1.0},
      {"kb", UnitKind::bytes, 3, 1.0},        {"mb", UnitKind::bytes, 6, 1.0},  // nsys MB = 10^6 B
      {"gb", UnitKind::bytes, 9, 1.0},        {"kib", UnitKind::bytes, 0, 1024.0},
      {"mib", UnitKind::bytes, 0, 1048576.0}, {"gib", UnitKind::bytes, 0, 1073741824.0},
  };
  for (const auto& e : kUnits) {
    if (e.name == unit) return {e.kind, e.pow10, e.factor, e.factor != 1.0};
  }
  return {UnitKind::other, 0, 1.0, false};
}

CellNumber parse_cell_number(std::string_view cell, const UnitScale& scale) {
  cell = trim(cell);
  if (is_null_cell(cell)) return {};
  std::string text = strip_separators(cell);
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  const CellNumber invalid{CellNumber::State::invalid, 0};
  if (s.empty()) return invalid;
  const auto exp = s.find_first_of("eE");
  std::string_view mantissa = s.substr(0, exp);
  const auto dot = mantissa.find('.');
  std::string_view int_part = mantissa.substr(0, dot);
  std::string_view frac_part =
      dot == std::string_view::npos ? std::string_view{} : mantissa.substr(dot + 1);
  if (!all_digits(int_part) || !all_digits(frac_part) || (int_part.empty() && frac_part.empty()))
    return invalid;
  if (exp != std::string_view::npos) {
    std::string_view exponent = s.substr(exp + 1);
    if (!exponent.empty() && (exponent.front() == '+' || exponent.front() == '-'))
      exponent.remove_prefix(1);
    if (exponent.empty() || !all_digits(exponent)) return invalid;
  }
  if (negative) return {CellNumber::State::value, 0};  // trace6.md §10.4: floats are clamped at 0
  if (exp == std::string_view::npos && !scale.binary)
    return {CellNumber::State::value, scale_decimal(int_part, frac_part, scale.pow10)};
  // Exponent forms and binary units: floating point, then truncation as in trace6.md §10.4.
  const double v = std::strtod(text.c_str(), nullptr) * std::pow(10.0, scale.pow10) * scale.factor;
  if (!std::isfinite(v)) return invalid;
  if (v >= 18446744073709551615.0) return {CellNumber::State::value, kMax};
  return {CellNumber::State::value, static_cast<std::uint64_t>(v)};
}

}  // namespace candle_graph::import::nsight
