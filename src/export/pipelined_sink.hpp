// A sink that passes its pieces on from a thread of its own, so that compressing and writing the
// export (zlib, the kernel's copy into the page cache) run beside the formatting of the next
// pieces instead of after it: the wall time a user waits for becomes the longer of the two, not
// their sum. Pieces are copied into a few reused buffers, or handed over whole with a reused
// buffer given back (at most `depth` pieces wait), so memory stays bounded whatever the export's
// size. Bytes reach `next` in the order they were written.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace candle_graph::exporting {

class PipelinedSink {
 public:
  using Sink = std::function<void(std::string_view)>;
  explicit PipelinedSink(Sink next, std::size_t depth = 4);
  PipelinedSink(const PipelinedSink&) = delete;
  PipelinedSink& operator=(const PipelinedSink&) = delete;
  // Without finish(): stops the thread and drops what is still queued (the export failed).
  ~PipelinedSink();

  // Queues a copy of `piece`; waits while `depth` pieces are queued. Throws what `next` threw
  // on the thread, at the first write after it failed.
  void write(std::string_view piece);
  // Queues `piece` itself, without a copy, and leaves a spare buffer (empty) in its place.
  void hand_over(std::string& piece);
  // Queues the first `used` bytes of `buffer`, without a copy, and leaves a spare buffer in its
  // place, its size and bytes as the last user left them (a writer that fills a fixed-size
  // buffer through a cursor then has nothing to resize, so nothing to clear).
  void hand_over(std::string& buffer, std::size_t used);
  // Waits until `next` has taken every piece; throws what it threw.
  void finish();

 private:
  void run();
  void rethrow_failure();
  // Waits for room in the queue and takes a spare buffer (empty if there is none); the lock is
  // held on return.
  std::string next_buffer(std::unique_lock<std::mutex>& lock);

  struct Piece {
    std::string text;
    std::size_t size;  // the bytes of `text` to pass on, from its start
  };
  Sink next_;
  std::size_t depth_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Piece> queued_;
  std::vector<std::string> spare_;  // buffers to reuse
  bool busy_ = false;               // the thread holds a piece outside the queue
  bool stopping_ = false;
  std::exception_ptr failure_;
  std::thread thread_;
};

}  // namespace candle_graph::exporting
