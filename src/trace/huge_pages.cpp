#include "trace/huge_pages.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>

namespace candle_graph {
namespace {

std::size_t read_huge_page_size() {
  // Linux 4.14+; an older kernel, or one without THP, has no such file.
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size");
  std::size_t size = 0;
  if (!(in >> size)) return 0;
  // A size that is not a power of two would break the rounding below; no kernel reports one.
  return size != 0 && (size & (size - 1)) == 0 ? size : 0;
}

}  // namespace

std::size_t huge_page_size() noexcept {
  static const std::size_t size = [] {
    try {
      return read_huge_page_size();
    } catch (...) {
      return std::size_t{0};
    }
  }();
  return size;
}

PageSpan whole_pages_inside(const void* begin, std::size_t bytes, std::size_t page) noexcept {
  if (page == 0) return {};
  const auto first = reinterpret_cast<std::uintptr_t>(begin);
  const std::uintptr_t from = (first + page - 1) & ~(page - 1);
  const std::uintptr_t to = (first + bytes) & ~(page - 1);
  if (to <= from) return {};
  // The span starts at `begin` moved on, not at an integer made a pointer.
  return {const_cast<char*>(static_cast<const char*>(begin)) + (from - first), to - from};
}

void advise_huge_pages(const void* begin, std::size_t bytes) noexcept {
  const std::size_t huge = huge_page_size();
  if (huge == 0 || bytes < huge) return;
  // MADV_HUGEPAGE changes no contents, so it is safe on memory already in use.
  if (const PageSpan span = whole_pages_inside(begin, bytes, huge); span.bytes != 0) {
    ::madvise(span.begin, span.bytes, MADV_HUGEPAGE);
  }
}

void release_pages(void* begin, std::size_t bytes) noexcept {
  static const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  if (const PageSpan span = whole_pages_inside(begin, bytes, page); span.bytes != 0)
    ::madvise(span.begin, span.bytes, MADV_DONTNEED);
}

}  // namespace candle_graph
