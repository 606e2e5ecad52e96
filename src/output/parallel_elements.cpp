#include "output/parallel_elements.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "output/test_hook.hpp"

namespace candle_graph::output {

ElementBatches element_batches() {
  // Tests shrink the batches to a fixed few elements so that batches meet everywhere.
  const std::size_t fixed = size_from_env("CANDLE_GRAPH_TEST_JSON_BATCH", 0);
  if (fixed > 0) return {fixed, 0};
  return {1024, std::size_t{1} << 19};
}

namespace {

// Every thread, the calling one included, takes the next batch of elements in order and formats
// it into a fragment; the calling thread appends the fragments in order and formats batches
// while the next one to append is not ready. At most `window` batches are taken past the last
// one appended, which bounds the text waiting in memory.
class BatchFormatter {
 public:
  BatchFormatter(JsonStream& w, std::size_t count, const ElementBatches& batches,
                 const ElementRangeWriter& write_range)
      : w_(w),
        count_(count),
        target_bytes_(batches.target_bytes),
        window_(static_cast<std::size_t>(w.format_threads()) + 1),
        wake_room_(std::max(1u, w.format_threads() - 1)),
        write_range_(write_range),
        pattern_(w.fragment({}, false)),
        batch_(std::max<std::size_t>(batches.first, 1)) {}

  void run() {
    std::vector<std::jthread> helpers;
    // Stops and joins the helpers on every way out, a throw included.
    struct StopHelpers {
      BatchFormatter& self;
      std::vector<std::jthread>& helpers;
      ~StopHelpers() {
        {
          std::lock_guard<std::mutex> lock(self.mutex_);
          self.stop_ = true;
        }
        self.room_.notify_all();
        helpers.clear();
      }
    } stop{*this, helpers};
    // A helper that cannot be started (no memory for its stack under `ulimit -v`) is done
    // without: the calling thread formats whatever the helpers do not take.
    try {
      for (unsigned t = 1; t < w_.format_threads(); ++t) helpers.emplace_back([this] { help(); });
    } catch (const std::system_error&) {
    }

    std::unique_lock<std::mutex> lock(mutex_);
    while (appended_ < taken_ || next_element_ < count_) {
      while (taken_ == appended_ || !waiting_.front().text) {
        if (failure_) {
          const std::exception_ptr failure = failure_;
          lock.unlock();
          std::rethrow_exception(failure);
        }
        if (may_take()) {
          format_next(lock);
        } else {
          ready_.wait(lock);
        }
      }
      // Taken off together: a batch being formatted finds its place as its number less the
      // batches appended.
      JsonStream fragment = std::move(*waiting_.front().text);
      const std::size_t elements = waiting_.front().elements;
      waiting_.pop_front();
      ++appended_;
      largest_ = std::max(largest_, fragment.size());
      lock.unlock();
      w_.append_fragment(fragment);  // may wait for the writing thread, or throw
      w_.count_elements(elements);
      lock.lock();
      spares_.push_back(fragment.release_buffer());
      // The helpers sleep while the window is full and are woken once it has room for a batch
      // each, not for every batch appended: a wake-up is a context switch, and this host takes
      // 0.05-0.25 ms to wake a vCPU.
      if (sleeping_helpers_ > 0 && appended_ + window_ - taken_ >= wake_room_) room_.notify_all();
    }
  }

 private:
  bool may_take() const { return next_element_ < count_ && taken_ < appended_ + window_; }

  void help() {
    std::unique_lock<std::mutex> lock(mutex_);
    const auto go = [this] { return stop_ || failure_ || next_element_ >= count_ || may_take(); };
    for (;;) {
      if (!go()) {
        ++sleeping_helpers_;
        room_.wait(lock, go);
        --sleeping_helpers_;
      }
      if (stop_ || failure_ || next_element_ >= count_) return;
      format_next(lock);
    }
  }

  // Takes the next batch and formats it with the lock released; records its fragment, or what
  // it threw. Nothing escapes: on a helper thread an exception (memory running out under
  // `ulimit -v`) would end the process, where the calling thread reports it.
  void format_next(std::unique_lock<std::mutex>& lock) {
    std::size_t k = 0, begin = 0, end = 0;
    std::optional<JsonStream> fragment;
    std::exception_ptr failure;
    try {
      waiting_.emplace_back();  // first: if it throws, nothing is taken
      k = taken_++;
      begin = next_element_;
      end = begin + std::min(batch_, count_ - begin);
      next_element_ = end;
      waiting_.back().elements = end - begin;
      std::string buffer;
      if (!spares_.empty()) {
        buffer = std::move(spares_.back());
        spares_.pop_back();
      }
      // Room for the largest fragment so far and a quarter more, made once per buffer: a
      // buffer that grows by doubling as its batch is written copies and clears its pages at
      // every step.
      const std::size_t room = largest_ + largest_ / 4, grown = largest_ + largest_ / 2;
      lock.unlock();
      if (buffer.size() < room) buffer.resize(grown);
      fragment.emplace(pattern_.fragment(std::move(buffer), begin > 0));
      write_range_(*fragment, begin, end);
    } catch (...) {
      failure = std::current_exception();
    }
    if (!lock.owns_lock()) lock.lock();
    if (failure) {
      if (!failure_) failure_ = failure;
      room_.notify_all();
      ready_.notify_all();
      return;
    }
    // Later batches hold about `target_bytes_` of text, at this batch's bytes per element.
    if (target_bytes_ > 0 && fragment->size() > 0)
      batch_ = std::max<std::size_t>(1, target_bytes_ * (end - begin) / fragment->size());
    waiting_[k - appended_].text = std::move(fragment);
    if (k == appended_) ready_.notify_all();  // the batch the calling thread waits for
  }

  JsonStream& w_;
  const std::size_t count_, target_bytes_, window_, wake_room_;
  const ElementRangeWriter& write_range_;
  // The stream's state at the array (read by every thread, written by none): each batch's
  // fragment is made from it, since `w_` itself changes as fragments are appended.
  const JsonStream pattern_;
  std::mutex mutex_;
  std::condition_variable ready_;  // a batch is formatted (or failed)
  std::condition_variable room_;   // the window has room again (or the work ended)
  std::size_t batch_;              // elements in the next batch taken
  std::size_t next_element_ = 0;   // the first element not taken yet
  std::size_t taken_ = 0;          // batches taken
  std::size_t appended_ = 0;       // batches appended to the stream
  // The batches taken and not appended yet, in order; a batch's text is empty while it is
  // being formatted.
  struct Batch {
    std::optional<JsonStream> text;
    std::size_t elements = 0;
  };
  std::deque<Batch> waiting_;
  std::vector<std::string> spares_;  // fragments' buffers, to write over
  std::size_t largest_ = 0;          // the longest fragment's text so far
  unsigned sleeping_helpers_ = 0;
  std::exception_ptr failure_;
  bool stop_ = false;
};

}  // namespace

void write_batches_in_parallel(JsonStream& w, std::size_t count, const ElementBatches& batches,
                               const ElementRangeWriter& write_range) {
  if (count == 0) return;
  BatchFormatter(w, count, batches, write_range).run();
}

}  // namespace candle_graph::output
