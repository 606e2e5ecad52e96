// Large arrays in transparent huge pages. Every first write to a 4 KiB page is a page fault in
// which the kernel zeroes the page; reading a 300 MB trace fills a few hundred MB of fresh arrays,
// and on a virtual machine each fault also costs a trip through the hypervisor (on the project's
// guest, fresh memory arrived at 0.4 GB/s in 4 KiB pages and at 17 GB/s in 2 MiB ones). Kernels
// set to "madvise" (Ubuntu's and many cloud images' default) only use huge pages where asked;
// on "always" this changes nothing, and on "never" or without THP the advice is refused and
// ignored. Only whole huge pages inside a range are advised, so a small array stays as it was.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace candle_graph {

// The size of a transparent huge page (the PMD size, usually 2 MiB), or 0 when the kernel
// offers none.
std::size_t huge_page_size() noexcept;

// Advises the whole huge pages inside [begin, begin + bytes); errors are ignored: the memory
// works the same either way, only the number of page faults differs.
void advise_huge_pages(const void* begin, std::size_t bytes) noexcept;

// reserve(n), then advises the capacity: for arrays whose capacity is filled later.
template <typename T, typename Alloc>
void reserve_in_huge_pages(std::vector<T, Alloc>& v, std::size_t n) {
  v.reserve(n);
  advise_huge_pages(v.data(), v.capacity() * sizeof(T));
}
inline void reserve_in_huge_pages(std::string& s, std::size_t n) {
  s.reserve(n);
  advise_huge_pages(s.data(), s.capacity());
}

}  // namespace candle_graph
