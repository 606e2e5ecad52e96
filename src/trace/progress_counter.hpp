// Counting the units of a long step (events placed, events written) for a ProgressCallback: a
// report at the start, one every kProgressEvery units and one at the end, so that a caller can
// count every unit without paying a callback for each.
#pragma once

#include <algorithm>
#include <cstdint>

#include "candle_graph/trace_io.hpp"

namespace candle_graph {

class ProgressCounter {
 public:
  static constexpr std::uint64_t kProgressEvery = 4096;

  // `report` may be empty (nothing is reported) and must outlive the counter.
  ProgressCounter(const ProgressCallback& report, std::uint64_t total)
      : report_(report), total_(total) {
    if (report_ && total_ > 0) report_(0, total_);
  }
  // One comparison per unit; the callback is looked at every kProgressEvery units.
  void add() {
    if (++done_ - reported_ < kProgressEvery) return;
    reported_ = done_;
    if (report_) report_(std::min(done_, total_), total_);
  }
  void finish() {
    if (report_ && total_ > 0) report_(total_, total_);
  }

 private:
  const ProgressCallback& report_;
  std::uint64_t total_, done_ = 0, reported_ = 0;
};

}  // namespace candle_graph
