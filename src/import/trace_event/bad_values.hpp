// Events dropped, or values repaired, because a field held a bad value (a negative or unreadable
// duration, a timestamp that does not fit int64 ns, a missing name, a non-numeric id): counted by
// reason with the byte offset of the first, so the convert report, the meta tags and the error
// that says nothing usable was left can all name what was wrong and where.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace candle_graph::import::trace_event {

// Reasons are snake_case keys ("negative_dur"); they become tags `convert.rejected.<reason>` and
// `convert.repaired.<reason>`, and read as words ("negative dur") in messages.
class BadValues {
 public:
  struct Count {
    std::uint64_t events = 0;
    std::uint64_t first_offset = 0;  // byte offset of the first such event in the file
  };
  using ByReason = std::map<std::string, Count, std::less<>>;

  // The event at `offset` was dropped.
  void reject(std::string_view reason, std::uint64_t offset) { add(rejected_, reason, offset); }
  // The event at `offset` was kept with a value replaced.
  void repair(std::string_view reason, std::uint64_t offset) { add(repaired_, reason, offset); }

  const ByReason& rejected() const noexcept { return rejected_; }
  const ByReason& repaired() const noexcept { return repaired_; }
  std::uint64_t rejected_events() const noexcept;

  // "3 of 3 events rejected: negative dur (3), e.g. byte 17"; empty when none was rejected.
  std::string describe_rejections(std::uint64_t total_events) const;

 private:
  static void add(ByReason& to, std::string_view reason, std::uint64_t offset);
  ByReason rejected_;
  ByReason repaired_;
};

}  // namespace candle_graph::import::trace_event
