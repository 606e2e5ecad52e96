// SQLite's allocations, with its large freed blocks kept for the next large request. An index
// build sorts its keys in one buffer that it grows by doubling (up to the page cache's size,
// 24 MiB while the indices are built) and frees when the index is done; glibc maps such a block on
// its own and unmaps it when freed, so each of the 19 index builds of an export faulted its
// buffer in again: half of the SQLite export's page faults. The other allocations go to SQLite's
// own allocator unchanged.
#pragma once

#include <cstddef>

namespace candle_graph::sqlite {

// Installs the allocator (SQLITE_CONFIG_MALLOC) before SQLite first initialises; once per
// process, later calls do nothing. Returns false when SQLite refused it (it was initialised
// already), in which case its own allocator stays.
bool install_sorter_memory() noexcept;

// Frees the blocks kept (after the index builds: nothing large is allocated afterwards).
void release_sorter_memory() noexcept;

// How many bytes are kept for reuse now (tests).
std::size_t sorter_memory_kept() noexcept;

// The size from which a block is kept when freed.
inline constexpr int kKeptFrom = 1 << 20;

}  // namespace candle_graph::sqlite
