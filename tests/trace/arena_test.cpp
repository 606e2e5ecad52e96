// Arena::absorb: a worker's copies become the document's. The expected contents are the strings
// and numbers the test itself made, compared after the arena they were copied into is gone (under
// ASan a copy freed with it would be a use after free).
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "candle_graph/trace.hpp"

namespace {

using candle_graph::Arena;

TEST(Arena, AbsorbedCopiesOutliveTheArenaTheyWereMadeIn) {
  Arena document;
  const std::string_view before = document.copy("made in the document");
  std::vector<std::string> texts;
  std::vector<std::string_view> copies;
  std::span<const std::uint64_t> numbers;
  const std::vector<std::uint64_t> dims = {3, 224, 224};
  std::size_t worker_bytes = 0;
  {
    auto worker = std::make_unique<Arena>();
    // Enough to fill several of its blocks, and one item too big for a shared block.
    for (int i = 0; i < 20000; ++i) {
      texts.push_back("tensor:" + std::to_string(i) +
                      std::string(static_cast<std::size_t>(i % 97), 'x'));
      copies.push_back(worker->copy(texts.back()));
    }
    texts.push_back(std::string(std::size_t{1} << 20, 'y'));
    copies.push_back(worker->copy(texts.back()));
    numbers = worker->copy(std::span<const std::uint64_t>(dims));
    worker_bytes = worker->bytes_used();
    const std::size_t document_bytes = document.bytes_used();
    document.absorb(std::move(*worker));
    EXPECT_EQ(document.bytes_used(), document_bytes + worker_bytes);
    EXPECT_EQ(worker->bytes_used(), 0U);
    // The emptied arena still works, and its new copies are its own.
    EXPECT_EQ(worker->copy("after"), "after");
  }
  ASSERT_EQ(copies.size(), texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) ASSERT_EQ(copies[i], texts[i]) << i;
  EXPECT_EQ(std::vector<std::uint64_t>(numbers.begin(), numbers.end()), dims);
  EXPECT_EQ(before, "made in the document");
  // The document keeps copying after what it absorbed.
  EXPECT_EQ(document.copy("made after"), "made after");
}

TEST(Arena, AbsorbingItselfChangesNothing) {
  Arena arena;
  const std::string_view kept = arena.copy("kept");
  const std::size_t used = arena.bytes_used();
  Arena& same = arena;
  arena.absorb(std::move(same));
  EXPECT_EQ(arena.bytes_used(), used);
  EXPECT_EQ(kept, "kept");
}

}  // namespace
