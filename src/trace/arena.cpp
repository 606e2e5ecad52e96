#include <cstring>

#include "candle_graph/trace.hpp"

namespace candle_graph {
namespace {
constexpr std::size_t kBlockSize = std::size_t{1} << 20;  // 1 MiB: few blocks, little slack
}

void* Arena::allocate(std::size_t size, std::size_t align) {
  std::size_t pad = (align - reinterpret_cast<std::uintptr_t>(cursor_) % align) % align;
  if (cursor_ == nullptr || pad + size > remaining_) {
    if (size > kBlockSize / 4) {  // big items get a block of their own; the current one stays open
      blocks_.emplace_back(new std::byte[size + align]);
      std::byte* p = blocks_.back().get();
      p += (align - reinterpret_cast<std::uintptr_t>(p) % align) % align;
      used_ += size;
      return p;
    }
    blocks_.emplace_back(new std::byte[kBlockSize]);
    cursor_ = blocks_.back().get();
    remaining_ = kBlockSize;
    pad = (align - reinterpret_cast<std::uintptr_t>(cursor_) % align) % align;
  }
  std::byte* p = cursor_ + pad;
  cursor_ = p + size;
  remaining_ -= pad + size;
  used_ += size;
  return p;
}

std::string_view Arena::copy(std::string_view s) {
  if (s.empty()) return {};
  char* p = static_cast<char*>(allocate(s.size(), 1));
  std::memcpy(p, s.data(), s.size());
  return {p, s.size()};
}

}  // namespace candle_graph
