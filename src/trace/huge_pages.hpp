// Large arrays in transparent huge pages. Every first write to a 4 KiB page is a page fault in
// which the kernel zeroes the page; reading a 300 MB trace fills a few hundred MB of fresh arrays,
// and on a virtual machine each fault also costs a trip through the hypervisor (on the project's
// guest, fresh memory arrived at 0.4 GB/s in 4 KiB pages and at 17 GB/s in 2 MiB ones). Kernels
// set to "madvise" (Ubuntu's and many cloud images' default) only use huge pages where asked;
// on "always" this changes nothing, and on "never" or without THP the advice is refused and
// ignored. Only whole huge pages inside a range are advised, so a small array stays as it was.
#pragma once

#include <cstddef>
#include <iterator>
#include <string>
#include <vector>

namespace candle_graph {

// The size of a transparent huge page (the PMD size, usually 2 MiB), or 0 when the kernel
// offers none.
std::size_t huge_page_size() noexcept;

// The whole pages of `page` bytes (a power of two) inside [begin, begin + bytes): where the
// first starts and how many bytes they span; {nullptr, 0} when no whole page lies inside.
struct PageSpan {
  void* begin = nullptr;
  std::size_t bytes = 0;
};
PageSpan whole_pages_inside(const void* begin, std::size_t bytes, std::size_t page) noexcept;

// Advises the whole huge pages inside [begin, begin + bytes); errors are ignored: the memory
// works the same either way, only the number of page faults differs.
void advise_huge_pages(const void* begin, std::size_t bytes) noexcept;

// reserve(n) with the new capacity advised before the elements move in (moved in first, they
// would fault in their pages one by one).
template <typename T, typename Alloc>
void reserve_in_huge_pages(std::vector<T, Alloc>& v, std::size_t n) {
  if (n <= v.capacity()) return;
  std::vector<T, Alloc> bigger(v.get_allocator());
  bigger.reserve(n);
  advise_huge_pages(bigger.data(), bigger.capacity() * sizeof(T));
  bigger.insert(bigger.end(), std::make_move_iterator(v.begin()), std::make_move_iterator(v.end()));
  v.swap(bigger);
}
// The same for a text: its characters move into capacity already advised.
inline void reserve_in_huge_pages(std::string& s, std::size_t n) {
  if (n <= s.capacity()) return;
  std::string bigger;
  bigger.reserve(n);
  advise_huge_pages(bigger.data(), bigger.capacity());
  bigger.append(s);
  s.swap(bigger);
}

// assign(n, value) into advised pages: for arrays sized once and then filled.
template <typename T, typename Alloc>
void assign_in_huge_pages(std::vector<T, Alloc>& v, std::size_t n, const T& value) {
  if (n > v.capacity()) {
    v.clear();  // nothing to move into the new capacity
    reserve_in_huge_pages(v, n);
  }
  v.assign(n, value);
}

// Gives back to the kernel the whole pages inside [begin, begin + bytes) (MADV_DONTNEED: their
// contents are lost, and a later write maps a zeroed page again). Errors are ignored: the memory
// works the same either way, it only stays resident.
void release_pages(void* begin, std::size_t bytes) noexcept;

// Releases the pages of `v`'s capacity past its elements: a huge page the last elements only
// began, and whatever was mapped ahead of the elements (a prefault), stay resident otherwise.
template <typename T, typename Alloc>
void release_unused_capacity(std::vector<T, Alloc>& v) noexcept {
  release_pages(v.data() + v.size(), (v.capacity() - v.size()) * sizeof(T));
}

// push_back for an array that grows to many MB: when it must grow, it doubles into advised pages.
template <typename T, typename Alloc>
void push_back_in_huge_pages(std::vector<T, Alloc>& v, const T& item) {
  if (v.size() == v.capacity()) reserve_in_huge_pages(v, v.empty() ? 16 : 2 * v.capacity());
  v.push_back(item);
}

}  // namespace candle_graph
