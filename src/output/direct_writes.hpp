// The bulk of a large output written around the page cache (O_DIRECT). Written the usual way,
// every byte is copied into page-cache pages that the kernel must find first, and on a guest
// whose freed memory goes back to the host those pages come through the host: for a 400 MB
// export that copy cost more CPU time than the formatting. A direct write hands the disk the
// bytes from one reused buffer instead. It also makes the writer wait for the disk, which is
// the better deal only while the disk keeps up: when most direct writes run below about
// 500 MB/s, or the file system refuses them, the rest of the file goes through the page cache
// as before. Nothing written is lost either way.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace candle_graph::output {

class DirectWrites {
 public:
  // Whether the disk is slow, judged from the times of the stages written so far (reordered):
  // their median (the upper one of an even count) above `slow_stage`, so that one stage the
  // scheduler or the disk held up does not end direct writing.
  static bool too_slow(std::span<std::chrono::nanoseconds> judged,
                       std::chrono::nanoseconds slow_stage);

  // Bytes are written in stages of this size, from a buffer aligned as direct writes need.
  static constexpr std::size_t kStage = std::size_t{4} << 20;
  static constexpr std::size_t kAlign = 4096;
  // A disk that takes most stages in more than this (500 MB/s) is slower than the page cache is
  // likely to be, and slower than an export formats its text (about 500 MB/s), which it would
  // then hold up. The page cache is not always faster: on a guest whose host backs fresh memory
  // slowly, its copy ran at 130 MB/s.
  static constexpr std::chrono::nanoseconds kSlowStage = std::chrono::milliseconds(8);

  // Turns direct writes on for `fd`, an open file written from an offset that is a multiple of
  // kAlign; nullptr (and `fd` unchanged) when the offset is not aligned or the file system
  // refuses them.
  static std::unique_ptr<DirectWrites> start(int fd,
                                             std::chrono::nanoseconds slow_stage = kSlowStage);
  DirectWrites(const DirectWrites&) = delete;
  DirectWrites& operator=(const DirectWrites&) = delete;
  ~DirectWrites();

  // Appends `bytes` to the file. False once direct writing stopped (a refusal mid-way, or a slow
  // disk): then every byte given so far has been written through the page cache, direct writes
  // are off, and the caller writes the rest as usual. Throws std::system_error when a write fails.
  bool write(std::string_view bytes);
  // Writes what is staged through the page cache (a direct write must be a whole number of
  // blocks) and turns direct writes off. Throws std::system_error when a write fails.
  void finish();

 private:
  DirectWrites(int fd, std::chrono::nanoseconds slow_stage);
  bool write_stage();
  void stop(std::size_t stage_written);

  struct FreeAligned {
    void operator()(char* p) const noexcept;
  };
  int fd_;
  std::chrono::nanoseconds slow_stage_;
  std::unique_ptr<char, FreeAligned> stage_;
  std::size_t staged_ = 0;
  std::size_t stages_ = 0;                       // written directly so far
  std::vector<std::chrono::nanoseconds> times_;  // of the judged ones (after the warm-up)
  // The first stages can wait for more than the disk's pace: for the allocation of the file's
  // first blocks, or for the writeback of bytes written before them through the page cache
  // (when a file does not start with direct writes). They are written but not judged.
  static constexpr std::size_t kWarmupStages = 2;
  // Direct writing goes on while its judged stages are not too_slow(), judged from this many
  // on: 24 MiB at a disk's pace at most (warm-up included) before a slow one is left.
  static constexpr std::size_t kStagesJudged = 4;
};

}  // namespace candle_graph::output
