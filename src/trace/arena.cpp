#include <cstdint>
#include <cstring>
#include <iterator>

#include "candle_graph/trace.hpp"
#include "trace/huge_pages.hpp"

namespace candle_graph {
namespace {
constexpr std::size_t kBlockSize = std::size_t{1} << 20;  // 1 MiB: few blocks, little slack
// Once an arena holds this much (a trace of some 25 MB), its next blocks are larger and lie on
// huge-page boundaries, advised whole: the names and ids copied into a large document were a
// third of its read's remaining page faults. A small document keeps 1 MiB blocks, whose last
// one costs only the pages written.
constexpr std::size_t kLargeAfter = std::size_t{4} << 20;
constexpr std::size_t kLargeBlockSize = std::size_t{8} << 20;

// Bytes from p to the next multiple of n.
std::size_t padding_to(const std::byte* p, std::size_t n) {
  return (n - reinterpret_cast<std::uintptr_t>(p) % n) % n;
}
}  // namespace

void* Arena::allocate(std::size_t size, std::size_t align) {
  std::size_t pad = padding_to(cursor_, align);
  if (cursor_ == nullptr || pad + size > remaining_) {
    if (size > kBlockSize / 4) {  // big items get a block of their own; the current one stays open
      blocks_.emplace_back(new std::byte[size + align]);
      std::byte* p = blocks_.back().get();
      p += padding_to(p, align);
      used_ += size;
      return p;
    }
    const std::size_t huge = used_ >= kLargeAfter ? huge_page_size() : 0;
    if (huge != 0) {
      // Room to start the block on a huge-page boundary; the unused head is never written.
      blocks_.emplace_back(new std::byte[kLargeBlockSize + huge]);
      std::byte* p = blocks_.back().get();
      cursor_ = p + padding_to(p, huge);
      remaining_ = kLargeBlockSize;
      advise_huge_pages(cursor_, remaining_);
    } else {
      blocks_.emplace_back(new std::byte[kBlockSize]);
      cursor_ = blocks_.back().get();
      remaining_ = kBlockSize;
    }
    pad = padding_to(cursor_, align);
  }
  std::byte* p = cursor_ + pad;
  cursor_ = p + size;
  remaining_ -= pad + size;
  used_ += size;
  return p;
}

void Arena::absorb(Arena&& other) {
  if (&other == this) return;
  blocks_.insert(blocks_.end(), std::make_move_iterator(other.blocks_.begin()),
                 std::make_move_iterator(other.blocks_.end()));
  used_ += other.used_;
  other.blocks_.clear();
  other.cursor_ = nullptr;
  other.remaining_ = 0;
  other.used_ = 0;
}

std::string_view Arena::copy(std::string_view s) {
  if (s.empty()) return {};
  char* p = static_cast<char*>(allocate(s.size(), 1));
  std::memcpy(p, s.data(), s.size());
  return {p, s.size()};
}

}  // namespace candle_graph
