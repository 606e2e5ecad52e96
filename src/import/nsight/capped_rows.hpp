// Keeps the first `cap` rows of a stream under a stable order without storing the stream:
// amortised O(log cap) per row, so a 1 GB report costs memory for `cap` rows only (trace6.md
// §10.4).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace candle_graph::import::nsight {

template <typename Row, typename Less>
class CappedRows {
 public:
  CappedRows(std::size_t cap, Less less) : cap_(cap), less_(less) {}

  void add(Row row) {
    rows_.emplace_back(std::move(row), next_index_++);
    if (rows_.size() >= 2 * cap_ + 16) shrink();
  }

  // Rows in order (ties keep input order, like Rust's stable sort), at most `cap`.
  std::vector<Row> finish() {
    shrink();
    std::vector<Row> out;
    out.reserve(rows_.size());
    for (auto& entry : rows_) out.push_back(std::move(entry.first));
    rows_.clear();
    return out;
  }

 private:
  bool before(const std::pair<Row, std::uint64_t>& a,
              const std::pair<Row, std::uint64_t>& b) const {
    if (less_(a.first, b.first)) return true;
    if (less_(b.first, a.first)) return false;
    return a.second < b.second;
  }

  void shrink() {
    auto cmp = [this](const auto& a, const auto& b) { return before(a, b); };
    if (rows_.size() > cap_) {
      std::nth_element(rows_.begin(), rows_.begin() + static_cast<std::ptrdiff_t>(cap_),
                       rows_.end(), cmp);
      rows_.resize(cap_);
    }
    std::sort(rows_.begin(), rows_.end(), cmp);
  }

  std::size_t cap_;
  Less less_;
  std::vector<std::pair<Row, std::uint64_t>> rows_;
  std::uint64_t next_index_ = 0;
};

}  // namespace candle_graph::import::nsight
