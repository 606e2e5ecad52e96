// Which memory is advised to the kernel as huge-page memory (trace/huge_pages.hpp), read back
// from the kernel's own account of the process's mappings: /proc/self/smaps lists every mapping
// with its flags, and `hg` among them marks MADV_HUGEPAGE. The expected ranges are worked out
// here from the huge-page size the kernel reports, not taken from the code under test.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "candle_graph/trace.hpp"
#include "support/run_program.hpp"
#include "support/trace_lines.hpp"
#include "trace/huge_pages.hpp"
#include "trace/page_prefaulter.hpp"

namespace {

using namespace cgtest;
using candle_graph::testing::run_cli;

// The kernel's huge-page size, read here on its own; 0 without transparent huge pages.
std::size_t kernel_huge_page_size() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size");
  std::size_t size = 0;
  in >> size;
  return size;
}

// The VmFlags of the mapping that holds `address`, e.g. "rd wr mr mw me ac hg"; "" if none does.
std::string flags_of_mapping_at(const void* address) {
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    // A mapping's header line starts with "start-end" in hex; its fields follow on their own lines.
    const std::size_t dash = line.find('-');
    const std::size_t space = line.find(' ');
    if (dash != std::string::npos && space != std::string::npos && dash < space &&
        line.find(':') > space) {
      const std::uintptr_t start = std::stoull(line.substr(0, dash), nullptr, 16);
      const std::uintptr_t end = std::stoull(line.substr(dash + 1, space - dash - 1), nullptr, 16);
      inside = start <= at && at < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line.substr(8) + " ";
    }
  }
  return "";
}

bool advised(const void* address) {
  return flags_of_mapping_at(address).find(" hg ") != std::string::npos;
}

// An anonymous mapping of `bytes`, unmapped at the end of the test.
struct Mapping {
  explicit Mapping(std::size_t bytes) : size(bytes) {
    base = static_cast<char*>(
        ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  }
  ~Mapping() {
    if (base != MAP_FAILED) ::munmap(base, size);
  }
  char* base;
  std::size_t size;
};

char* round_up(char* p, std::size_t to) {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  return p + ((to - at % to) % to);
}

// How many of the whole pages inside [begin, begin + bytes) the kernel has resident, read with
// mincore(2); the page size comes from sysconf, not from the code under test.
std::size_t resident_pages(const void* begin, std::size_t bytes) {
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto first = reinterpret_cast<std::uintptr_t>(begin);
  const std::uintptr_t from = (first + page - 1) / page * page;
  const std::uintptr_t to = (first + bytes) / page * page;
  if (to <= from) return 0;
  std::vector<unsigned char> in((to - from) / page);
  const char* at = static_cast<const char*>(begin) + (from - first);
  if (::mincore(const_cast<char*>(at), to - from, in.data()) != 0) return SIZE_MAX;
  return static_cast<std::size_t>(
      std::count_if(in.begin(), in.end(), [](unsigned char c) { return (c & 1) != 0; }));
}

TEST(HugePages, TheSizeIsTheKernels) {
  const std::size_t expected = kernel_huge_page_size();
  if (expected == 0) GTEST_SKIP() << "this kernel offers no transparent huge pages";
  EXPECT_EQ(candle_graph::huge_page_size(), expected);
  EXPECT_EQ(expected % static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)), 0U);
}

TEST(HugePages, OnlyTheWholeHugePagesOfARangeAreAdvised) {
  const std::size_t huge = kernel_huge_page_size();
  if (huge == 0) GTEST_SKIP() << "this kernel offers no transparent huge pages";
  Mapping m(4 * huge);
  ASSERT_NE(m.base, MAP_FAILED);
  // A range that starts one 4 KiB page past a huge-page boundary and ends one page before the
  // third boundary after it: the only whole huge page inside is the one between the first and
  // the second boundary after its start.
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  char* boundary = round_up(m.base, huge);
  ASSERT_LE(boundary + 3 * huge, m.base + m.size);
  char* begin = boundary + page;
  char* end = boundary + 3 * huge - page;
  candle_graph::advise_huge_pages(begin, static_cast<std::size_t>(end - begin));
  EXPECT_FALSE(advised(begin)) << flags_of_mapping_at(begin);
  EXPECT_TRUE(advised(boundary + huge)) << flags_of_mapping_at(boundary + huge);
  EXPECT_TRUE(advised(boundary + 2 * huge - 1));
  EXPECT_FALSE(advised(boundary + 2 * huge)) << flags_of_mapping_at(boundary + 2 * huge);
}

TEST(HugePages, ARangeSmallerThanAHugePageIsLeftAlone) {
  const std::size_t huge = kernel_huge_page_size();
  if (huge == 0) GTEST_SKIP() << "this kernel offers no transparent huge pages";
  Mapping m(2 * huge);
  ASSERT_NE(m.base, MAP_FAILED);
  char* boundary = round_up(m.base, huge);
  // Across a boundary, but with no whole huge page inside.
  candle_graph::advise_huge_pages(boundary - huge / 2, huge - 1);
  EXPECT_FALSE(advised(boundary - 1));
  EXPECT_FALSE(advised(boundary));
}

TEST(HugePages, AVectorKeepsItsElementsAndGetsAdvisedCapacity) {
  const std::size_t huge = kernel_huge_page_size();
  if (huge == 0) GTEST_SKIP() << "this kernel offers no transparent huge pages";
  // Elements already there move into the advised capacity, in order; an array sized at once and
  // one grown element by element end up advised alike. Every array spans 3 huge pages, so at
  // least 2 whole ones lie inside it wherever the allocator puts it.
  std::vector<std::uint64_t> grown;
  const std::size_t n = 3 * huge / sizeof(std::uint64_t);
  for (std::size_t i = 0; i < n; ++i) candle_graph::push_back_in_huge_pages(grown, i * 7);
  ASSERT_EQ(grown.size(), n);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(grown[i], i * 7) << i;
  const char* data = reinterpret_cast<const char*>(grown.data());
  EXPECT_TRUE(advised(round_up(const_cast<char*>(data), huge)));

  std::vector<std::uint64_t> kept = {5, 6, 7};
  candle_graph::reserve_in_huge_pages(kept, n);
  EXPECT_EQ(kept, (std::vector<std::uint64_t>{5, 6, 7}));
  EXPECT_GE(kept.capacity(), n);
  EXPECT_TRUE(advised(round_up(reinterpret_cast<char*>(kept.data()), huge)));

  std::vector<std::uint32_t> sized = {1, 2};
  const std::size_t n32 = 3 * huge / sizeof(std::uint32_t);  // 3 huge pages: 2 whole ones inside
  candle_graph::assign_in_huge_pages(sized, n32, std::uint32_t{9});
  EXPECT_EQ(sized, std::vector<std::uint32_t>(n32, 9));
  EXPECT_TRUE(advised(round_up(reinterpret_cast<char*>(sized.data()), huge)));
}

TEST(HugePages, ATextKeepsItsCharactersAndGetsAdvisedCapacity) {
  const std::size_t huge = kernel_huge_page_size();
  if (huge == 0) GTEST_SKIP() << "this kernel offers no transparent huge pages";
  std::string text = "already written";
  candle_graph::reserve_in_huge_pages(text, 3 * huge);
  EXPECT_EQ(text, "already written");
  EXPECT_GE(text.capacity(), 3 * huge);
  EXPECT_TRUE(advised(round_up(text.data(), huge)));
}

TEST(HugePages, WholePagesOfAnySizeAreFoundInsideARange) {
  // Plain pointer arithmetic on a buffer, with the expected span worked out by hand: a range
  // from 100 bytes past one 4 KiB boundary to 50 bytes before the fourth after it holds the
  // two whole pages after the first.
  const std::size_t page = 4096;
  std::vector<char> buffer(8 * page);
  char* boundary = round_up(buffer.data(), page);
  const auto span = candle_graph::whole_pages_inside(boundary + 100, 4 * page - 150, page);
  EXPECT_EQ(span.begin, boundary + page);
  EXPECT_EQ(span.bytes, 2 * page);
  const auto exact = candle_graph::whole_pages_inside(boundary, 3 * page, page);
  EXPECT_EQ(exact.begin, boundary);
  EXPECT_EQ(exact.bytes, 3 * page);
  EXPECT_EQ(candle_graph::whole_pages_inside(boundary + 1, page, page).bytes, 0U);
  EXPECT_EQ(candle_graph::whole_pages_inside(boundary, 3 * page, 0).bytes, 0U);
}

TEST(HugePages, AnArenaKeepsEveryCopyAndAdvisesItsLaterBlocks) {
  // 24 MiB of copies in strings of 1..300 bytes and 8-byte-aligned number arrays, interleaved:
  // every copy must read back as written, aligned, whatever block it landed in; the last copies
  // (made long after the first few MiB) lie in advised memory when the kernel offers huge pages.
  candle_graph::Arena arena;
  std::vector<std::pair<std::string, std::string_view>> strings;
  std::vector<std::pair<std::vector<std::uint64_t>, std::span<const std::uint64_t>>> arrays;
  std::size_t bytes = 0;
  for (std::uint64_t i = 0; bytes < (std::size_t{24} << 20); ++i) {
    std::string text(1 + i % 300, static_cast<char>('a' + i % 26));
    text += std::to_string(i);
    bytes += text.size();
    const std::string_view copy = arena.copy(text);
    strings.emplace_back(std::move(text), copy);
    if (i % 7 == 0) {
      std::vector<std::uint64_t> numbers(1 + i % 5, i);
      const auto span = arena.copy(std::span<const std::uint64_t>(numbers));
      bytes += span.size_bytes();
      arrays.emplace_back(std::move(numbers), span);
    }
  }
  for (const auto& [text, copy] : strings) ASSERT_EQ(copy, text);
  for (const auto& [numbers, copy] : arrays) {
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(copy.data()) % alignof(std::uint64_t), 0U);
    ASSERT_TRUE(std::equal(numbers.begin(), numbers.end(), copy.begin(), copy.end()));
  }
  EXPECT_EQ(arena.bytes_used(), bytes);
  if (kernel_huge_page_size() == 0) GTEST_SKIP() << "this kernel offers no transparent huge pages";
  EXPECT_TRUE(advised(strings.back().second.data()))
      << flags_of_mapping_at(strings.back().second.data());
}

// A synth trace of 3000 layers (~14 MB, ~27 000 ops) in `dir`: past the 4 MiB after which the
// reader reserves the document's arrays, and an op array of several huge pages.
fs::path write_synth_trace(const TempDir& dir) {
  const fs::path trace = dir / "synth.jsonl";
  const auto r = run_cli(
      {"synth", "--layers", "3000", "--ops-per-span", "4", "--seed", "7", "-o", trace.string()});
  EXPECT_EQ(r.exit_code, 0) << candle_graph::testing::describe(r);
  return trace;
}

candle_graph::TraceDocument read_with_threads(const fs::path& trace, unsigned threads) {
  candle_graph::ReadOptions options;
  options.threads = threads;
  return candle_graph::parse_trace(trace, options);
}

TEST(HugePages, TheDocumentsLargeArraysAreAdvised) {
  const std::size_t huge = kernel_huge_page_size();
  if (huge == 0) GTEST_SKIP() << "this kernel offers no transparent huge pages";
  TempDir dir;
  const fs::path trace = write_synth_trace(dir);
  for (unsigned threads : {1U, 2U}) {
    const candle_graph::TraceDocument doc = read_with_threads(trace, threads);
    const auto& ops = doc.ops();
    const std::size_t bytes = ops.capacity() * sizeof(ops[0]);
    ASSERT_GE(bytes, 3 * huge) << "the trace is too small for this test";
    const char* first_whole =
        round_up(const_cast<char*>(reinterpret_cast<const char*>(ops.data())), huge);
    EXPECT_TRUE(advised(first_whole))
        << threads << " thread(s): " << flags_of_mapping_at(first_whole);
  }
}

// The pages of a vector's capacity past its elements go back to the kernel; the elements stay.
// The capacity is first written through (as the reader's waiting threads map it ahead), so its
// pages are resident before the release.
TEST(HugePages, UnusedCapacityIsGivenBackAndTheElementsStay) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<std::uint64_t> v;
  v.reserve(64 * page / sizeof(std::uint64_t));
  for (std::uint64_t i = 0; i < 8 * page / sizeof(std::uint64_t); ++i) v.push_back(i * 3);
  std::uint64_t* tail = v.data() + v.size();
  const std::size_t tail_bytes = (v.capacity() - v.size()) * sizeof(std::uint64_t);
  std::memset(tail, 0xAB, tail_bytes);
  ASSERT_GT(resident_pages(tail, tail_bytes), 0u);
  candle_graph::release_unused_capacity(v);
  EXPECT_EQ(resident_pages(tail, tail_bytes), 0u);
  for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], i * 3) << i;
  v.push_back(42);  // the capacity is still the vector's
  EXPECT_EQ(v.back(), 42u);
}

// Read with one and with two threads (then the thread waiting for its turn maps the arrays' next
// stretch ahead), the document keeps no page resident past the elements of its op array.
TEST(HugePages, TheDocumentKeepsNoPagesPastItsElements) {
  TempDir dir;
  const fs::path trace = write_synth_trace(dir);
  for (unsigned threads : {1U, 2U}) {
    const candle_graph::TraceDocument doc = read_with_threads(trace, threads);
    for (const auto* ops : {&doc.ops(), &doc.device_ops()}) {
      const auto* end = ops->data() + ops->size();
      const std::size_t bytes = (ops->capacity() - ops->size()) * sizeof(candle_graph::OpEvent);
      EXPECT_EQ(resident_pages(end, bytes), 0u) << threads << " thread(s)";
    }
    const auto& memory = doc.memory();
    EXPECT_EQ(resident_pages(memory.data() + memory.size(),
                             (memory.capacity() - memory.size()) * sizeof(memory[0])),
              0u)
        << threads << " thread(s)";
  }
}

// Fresh anonymous memory of `pages` pages, unmapped when the test ends; nothing in it is resident.
struct FreshMemory {
  explicit FreshMemory(std::size_t pages)
      : bytes(pages * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE))),
        at(static_cast<char*>(
            ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))) {}
  ~FreshMemory() { ::munmap(at, bytes); }
  FreshMemory(const FreshMemory&) = delete;
  FreshMemory& operator=(const FreshMemory&) = delete;
  std::size_t bytes;
  char* at;
};

// Whether this kernel maps memory on request (MADV_POPULATE_WRITE, Linux 5.14), asked directly.
bool kernel_populates() {
  FreshMemory probe(1);
  return ::madvise(probe.at, probe.bytes, 23 /* MADV_POPULATE_WRITE */) == 0;
}

// Without a thread of its own, the prefaulter maps a queued stretch only when a thread asks it
// to, one stretch per call, oldest first; resident pages are read back with mincore(2).
TEST(PagePrefaulter, WithoutAThreadAStretchIsMappedByTheThreadThatAsks) {
  if (!kernel_populates()) GTEST_SKIP() << "no MADV_POPULATE_WRITE in this kernel";
  FreshMemory first(16), second(16);
  candle_graph::PagePrefaulter prefaulter(candle_graph::PagePrefaulter::Thread::none);
  prefaulter.populate(first.at, first.at + first.bytes);
  prefaulter.populate(second.at, second.at + second.bytes);
  EXPECT_EQ(resident_pages(first.at, first.bytes), 0u);  // queued, not mapped
  EXPECT_TRUE(prefaulter.populate_one());
  EXPECT_EQ(resident_pages(first.at, first.bytes), 16u);
  EXPECT_EQ(resident_pages(second.at, second.bytes), 0u);
  EXPECT_TRUE(prefaulter.populate_one());
  EXPECT_EQ(resident_pages(second.at, second.bytes), 16u);
  EXPECT_FALSE(prefaulter.populate_one());  // nothing left
}

// Queued faster than anyone maps them, the oldest stretches make room for the newest: of 65
// one-page stretches the first is dropped, and the 64 others are mapped.
TEST(PagePrefaulter, WithoutAThreadOnlyTheNewestStretchesWait) {
  if (!kernel_populates()) GTEST_SKIP() << "no MADV_POPULATE_WRITE in this kernel";
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  FreshMemory memory(65);
  candle_graph::PagePrefaulter prefaulter(candle_graph::PagePrefaulter::Thread::none);
  for (std::size_t i = 0; i < 65; ++i)
    prefaulter.populate(memory.at + i * page, memory.at + (i + 1) * page);
  std::size_t mapped = 0;
  while (prefaulter.populate_one()) ++mapped;
  EXPECT_EQ(mapped, 64u);
  EXPECT_EQ(resident_pages(memory.at, page), 0u);
  EXPECT_EQ(resident_pages(memory.at + page, 64 * page), 64u);
}

}  // namespace
