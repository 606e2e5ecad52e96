#include "sqlite/sorter_memory.hpp"

#include <sqlite3.h>

#include <cstring>
#include <mutex>

namespace candle_graph::sqlite {
namespace {

// SQLite's own allocator, which every request still reaches; one large block kept beside it.
sqlite3_mem_methods defaults{};
std::mutex kept_mutex;  // connections on two threads allocate at once
void* kept = nullptr;

bool large(int n) noexcept {
  return n >= kKeptFrom;
}

// The kept block when it holds `n` bytes (it is then no longer kept), else null.
void* take_kept(int n) noexcept {
  std::lock_guard lock(kept_mutex);
  if (kept == nullptr || defaults.xSize(kept) < n) return nullptr;
  void* p = kept;
  kept = nullptr;
  return p;
}

void free_or_keep(void* p) noexcept {
  if (p != nullptr && large(defaults.xSize(p))) {
    std::lock_guard lock(kept_mutex);
    if (kept == nullptr || defaults.xSize(kept) < defaults.xSize(p)) std::swap(kept, p);
  }
  if (p != nullptr) defaults.xFree(p);  // the smaller of two large blocks goes
}

void* mem_malloc(int n) {
  if (large(n))
    if (void* p = take_kept(n)) return p;
  return defaults.xMalloc(n);
}

void* mem_realloc(void* p, int n) {
  if (p == nullptr || !large(n)) return defaults.xRealloc(p, n);
  const int have = defaults.xSize(p);
  if (have >= n) return p;  // a kept block is larger than the buffer first asked for
  void* bigger = take_kept(n);
  if (bigger == nullptr) return defaults.xRealloc(p, n);
  std::memcpy(bigger, p, static_cast<std::size_t>(have));
  free_or_keep(p);
  return bigger;
}

int mem_size(void* p) {
  return defaults.xSize(p);
}
int mem_roundup(int n) {
  return defaults.xRoundup(n);
}
int mem_init(void* app) {
  return defaults.xInit(app);
}
void mem_shutdown(void* app) {
  release_sorter_memory();
  defaults.xShutdown(app);
}

}  // namespace

bool install_sorter_memory() noexcept {
  static const bool installed = [] {
    if (sqlite3_config(SQLITE_CONFIG_GETMALLOC, &defaults) != SQLITE_OK) return false;
    sqlite3_mem_methods ours{.xMalloc = mem_malloc,
                             .xFree = free_or_keep,
                             .xRealloc = mem_realloc,
                             .xSize = mem_size,
                             .xRoundup = mem_roundup,
                             .xInit = mem_init,
                             .xShutdown = mem_shutdown,
                             .pAppData = defaults.pAppData};
    return sqlite3_config(SQLITE_CONFIG_MALLOC, &ours) == SQLITE_OK;
  }();
  return installed;
}

void release_sorter_memory() noexcept {
  void* p = nullptr;
  {
    std::lock_guard lock(kept_mutex);
    std::swap(p, kept);
  }
  if (p != nullptr) defaults.xFree(p);
}

std::size_t sorter_memory_kept() noexcept {
  std::lock_guard lock(kept_mutex);
  return kept == nullptr ? 0 : static_cast<std::size_t>(defaults.xSize(kept));
}

}  // namespace candle_graph::sqlite
