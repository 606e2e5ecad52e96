#include "trace/profiler_steps.hpp"

#include <charconv>
#include <span>

namespace candle_graph {

bool parse_profiler_step(std::string_view name, std::uint64_t& number) {
  constexpr std::string_view kPrefix = "ProfilerStep#";
  if (!name.starts_with(kPrefix)) return false;
  const std::string_view digits = name.substr(kPrefix.size());
  if (digits.empty()) return false;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  return ec == std::errc() && end == digits.data() + digits.size();
}

std::optional<std::uint64_t> cut_short_step(const TraceRunMeta& run) {
  const std::span<const ProfilerStepRecord> steps = run.profiler_steps;
  if (steps.size() < 2 || steps.back().step == run.capture_step) return std::nullopt;
  const auto skipped = run.find_tag("convert.incomplete_last_step_skipped");
  if (skipped && *skipped != "0") return steps.back().step;
  return std::nullopt;
}

}  // namespace candle_graph
