// The worker copies each call's bytes into a batch of about 1 MiB; at most kQueued batches wait
// for the calling thread, which bounds the memory the second thread adds. Batches go back to the
// worker once read: a fresh 1 MiB buffer per batch is fresh pages, and faulting them in again and
// again was a fifth of the direct read of a Kineto trace on a virtual machine. A scan error travels
// behind the calls made before it, so the calling thread raises it only after the handler has
// seen (and perhaps failed on) them, as on one thread. When the handler fails, the worker is told
// to stop at its next hand-over and is joined before the error leaves.
#include "import/trace_event/pipelined_scan.hpp"

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace candle_graph::import::trace_event {
namespace {

constexpr std::size_t kScanBatchBytes = std::size_t{1} << 20;  // scanned bytes handed over at once
constexpr std::size_t kQueued = 4;

struct Call {
  enum class Kind : std::uint8_t { event, top_level_value, progress } kind;
  std::size_t at = 0, size = 0;          // the bytes (event, raw value) in Batch::bytes
  std::size_t key_at = 0, key_size = 0;  // top_level_value's key
  std::uint64_t a = 0, b = 0;            // offset; or progress (done, total)
};

struct Batch {
  std::string bytes;
  std::vector<Call> calls;
  bool last = false;  // the scan ended: `result` or `failure` holds how
  EventScanner::Result result;
  std::exception_ptr failure;
};

struct Cancelled {};  // unwinds the worker's scan when the calling thread gave up

class Channel {
 public:
  void push(Batch&& b) {
    std::unique_lock lock(mutex_);
    room_.wait(lock, [&] { return cancelled_ || queue_.size() < kQueued; });
    if (cancelled_) throw Cancelled{};
    queue_.push_back(std::move(b));
    lock.unlock();
    ready_.notify_one();
  }
  Batch pop() {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [&] { return !queue_.empty(); });
    Batch b = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    room_.notify_one();
    return b;
  }
  // A batch the calling thread has read, for the worker to fill again.
  void recycle(Batch&& b) {
    b.bytes.clear();
    b.calls.clear();
    std::lock_guard lock(mutex_);
    spare_.push_back(std::move(b));
  }
  // An empty batch for the worker: a recycled one, or a new one with room for a whole batch.
  Batch empty_batch() {
    {
      std::lock_guard lock(mutex_);
      if (!spare_.empty()) {
        Batch b = std::move(spare_.back());
        spare_.pop_back();
        return b;
      }
    }
    Batch b;
    b.bytes.reserve(kScanBatchBytes + (kScanBatchBytes >> 2));
    return b;
  }
  void cancel() {
    {
      std::lock_guard lock(mutex_);
      cancelled_ = true;
    }
    room_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_, room_;
  std::deque<Batch> queue_;
  std::vector<Batch> spare_;  // read batches: at most the queued ones and the one being filled
  bool cancelled_ = false;
};

// The worker's handler: records the calls.
class Recorder final : public EventScanner::Handler {
 public:
  explicit Recorder(Channel& out) : out_(out), batch_(out.empty_batch()) {}
  void event(std::string_view bytes, std::uint64_t offset) override {
    add({Call::Kind::event, append(bytes), bytes.size(), 0, 0, offset, 0});
  }
  void top_level_value(std::string_view key, std::string_view raw, std::uint64_t offset) override {
    const std::size_t key_at = append(key);
    add({Call::Kind::top_level_value, append(raw), raw.size(), key_at, key.size(), offset, 0});
  }
  void progress(std::uint64_t done, std::uint64_t total) {
    add({Call::Kind::progress, 0, 0, 0, 0, done, total});
  }
  void finish(EventScanner::Result result, std::exception_ptr failure) {
    batch_.last = true;
    batch_.result = result;
    batch_.failure = std::move(failure);
    out_.push(std::move(batch_));
  }

 private:
  std::size_t append(std::string_view s) {
    const std::size_t at = batch_.bytes.size();
    batch_.bytes.append(s);
    return at;
  }
  void add(const Call& c) {
    batch_.calls.push_back(c);
    if (batch_.bytes.size() >= kScanBatchBytes) {
      out_.push(std::move(batch_));
      batch_ = out_.empty_batch();
    }
  }

  Channel& out_;
  Batch batch_;
};

void scan_into(const std::filesystem::path& path, Channel& channel, bool with_progress) {
  Recorder recorder(channel);
  try {
    ProgressCallback progress;
    if (with_progress)
      progress = [&](std::uint64_t done, std::uint64_t total) { recorder.progress(done, total); };
    const EventScanner::Result r = EventScanner::scan(path, recorder, progress);
    recorder.finish(r, nullptr);
  } catch (const Cancelled&) {
    return;
  } catch (...) {
    try {
      recorder.finish({}, std::current_exception());
    } catch (const Cancelled&) {
    }
  }
}

// Joins the worker on every way out; tells it to stop first when the way out is an error.
class Worker {
 public:
  Worker(Channel& channel, std::thread t) : channel_(channel), thread_(std::move(t)) {}
  ~Worker() {
    channel_.cancel();
    thread_.join();
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

 private:
  Channel& channel_;
  std::thread thread_;
};

}  // namespace

EventScanner::Result scan_on_worker(const std::filesystem::path& path,
                                    EventScanner::Handler& handler,
                                    const ProgressCallback& progress) {
  Channel channel;
  Worker worker(channel, std::thread(scan_into, path, std::ref(channel), bool(progress)));
  for (;;) {
    Batch b = channel.pop();
    for (const Call& c : b.calls) {
      const std::string_view bytes(b.bytes.data() + c.at, c.size);
      switch (c.kind) {
        case Call::Kind::event:
          handler.event(bytes, c.a);
          break;
        case Call::Kind::top_level_value:
          handler.top_level_value(std::string_view(b.bytes.data() + c.key_at, c.key_size), bytes,
                                  c.a);
          break;
        case Call::Kind::progress:
          progress(c.a, c.b);
          break;
      }
    }
    if (!b.last) {
      channel.recycle(std::move(b));
      continue;
    }
    if (b.failure) std::rethrow_exception(b.failure);
    return b.result;
  }
}

}  // namespace candle_graph::import::trace_event
