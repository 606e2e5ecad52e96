#include "export/pipelined_sink.hpp"

#include <algorithm>
#include <utility>

namespace candle_graph::exporting {

PipelinedSink::PipelinedSink(Sink next, std::size_t depth)
    : next_(std::move(next)), depth_(depth < 1 ? 1 : depth), thread_([this] { run(); }) {}

PipelinedSink::~PipelinedSink() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queued_.clear();
  }
  changed_.notify_all();
  thread_.join();
}

std::string PipelinedSink::next_buffer(std::unique_lock<std::mutex>& lock) {
  changed_.wait(lock, [&] { return failure_ || queued_.size() < depth_; });
  rethrow_failure();
  std::string buffer;
  if (!spare_.empty()) {
    buffer = std::move(spare_.back());
    spare_.pop_back();
  }
  return buffer;
}

void PipelinedSink::write(std::string_view piece) {
  std::unique_lock lock(mutex_);
  std::string buffer = next_buffer(lock);
  lock.unlock();  // the copy runs while the thread works on the previous piece
  buffer.assign(piece);
  lock.lock();
  queued_.push_back({std::move(buffer), piece.size()});
  lock.unlock();
  changed_.notify_all();
}

void PipelinedSink::hand_over(std::string& piece) {
  hand_over(piece, piece.size());
  piece.clear();
}

void PipelinedSink::hand_over(std::string& buffer, std::size_t used) {
  const std::size_t size = std::min(used, buffer.size());
  std::unique_lock lock(mutex_);
  std::string spare = next_buffer(lock);
  queued_.push_back({std::move(buffer), size});
  buffer = std::move(spare);
  lock.unlock();
  changed_.notify_all();
}

void PipelinedSink::finish() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return failure_ || (queued_.empty() && !busy_); });
  rethrow_failure();
}

void PipelinedSink::rethrow_failure() {
  if (failure_) std::rethrow_exception(failure_);
}

void PipelinedSink::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return stopping_ || !queued_.empty(); });
    if (stopping_) return;
    Piece piece = std::move(queued_.front());
    queued_.pop_front();
    busy_ = true;
    lock.unlock();
    try {
      next_(std::string_view(piece.text.data(), piece.size));
    } catch (...) {
      lock.lock();
      failure_ = std::current_exception();
      busy_ = false;
      queued_.clear();
      changed_.notify_all();
      // Nothing more is passed on; wait for the destructor.
      changed_.wait(lock, [&] { return stopping_; });
      return;
    }
    lock.lock();
    busy_ = false;
    spare_.push_back(std::move(piece.text));
    changed_.notify_all();
  }
}

}  // namespace candle_graph::exporting
