#include "import/trace_event/bad_values.hpp"

#include <algorithm>

namespace candle_graph::import::trace_event {
namespace {

std::string as_words(std::string_view reason) {
  std::string words(reason);
  std::replace(words.begin(), words.end(), '_', ' ');
  return words;
}

}  // namespace

void BadValues::add(ByReason& to, std::string_view reason, std::uint64_t offset) {
  auto it = to.find(reason);
  if (it == to.end()) it = to.emplace(std::string(reason), Count{0, offset}).first;
  ++it->second.events;
  it->second.first_offset = std::min(it->second.first_offset, offset);
}

std::uint64_t BadValues::rejected_events() const noexcept {
  std::uint64_t n = 0;
  for (const auto& [reason, c] : rejected_) n += c.events;
  return n;
}

std::string BadValues::describe_rejections(std::uint64_t total_events) const {
  if (rejected_.empty()) return {};
  std::string text = std::to_string(rejected_events()) + " of " + std::to_string(total_events) +
                     " events rejected: ";
  const auto first = std::min_element(
      rejected_.begin(), rejected_.end(),
      [](const auto& a, const auto& b) { return a.second.first_offset < b.second.first_offset; });
  bool comma = false;
  for (const auto& [reason, c] : rejected_) {
    text += (comma ? ", " : "") + as_words(reason) + " (" + std::to_string(c.events) + ")";
    comma = true;
  }
  text += ", e.g. byte " + std::to_string(first->second.first_offset);
  // With several reasons, say which one the example shows.
  if (rejected_.size() > 1) text += " (" + as_words(first->first) + ")";
  return text;
}

}  // namespace candle_graph::import::trace_event
