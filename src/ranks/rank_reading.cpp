#include "ranks/rank_reading.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "candle_graph/error.hpp"
#include "candle_graph/import.hpp"

namespace candle_graph::ranks {
namespace {

bool is_trace_name(const std::string& name) {
  return name.ends_with(".json") || name.ends_with(".json.gz") || name.ends_with(".jsonl");
}

std::vector<std::filesystem::path> traces_in(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::error_code type_ec;
    if (entry.is_regular_file(type_ec) && is_trace_name(entry.path().filename().string()))
      out.push_back(entry.path());
  }
  if (ec) throw Error(ErrorKind::io, dir.string(), 0, "cannot list the directory: " + ec.message());
  if (out.empty())
    throw Error(dir.string(), 0, "the directory holds no trace (*.json, *.json.gz, *.jsonl)");
  std::sort(out.begin(), out.end());
  return out;
}

// One file, read and reduced: the document is freed before the next file is read. Whatever
// fails names the file (Error already does; anything else is wrapped).
RankProfile read_one(const std::filesystem::path& file, const ImportOptions& options) {
  try {
    const ImportedTrace trace = import_trace(file, options);
    return profile_rank(trace.document, file.string());
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(file.string(), 0, e.what());
  }
}

// Progress over the whole set, in bytes of the traces read so far: one trace's own progress would
// jump back and forth between threads.
class SetProgress {
 public:
  SetProgress(const std::vector<std::filesystem::path>& files, ProgressCallback report)
      : report_(std::move(report)) {
    for (const auto& f : files) {
      std::error_code ec;
      const auto size = std::filesystem::file_size(f, ec);
      sizes_.push_back(ec ? 0 : size);
      total_ += sizes_.back();
    }
  }
  void file_done(std::size_t i) {
    if (!report_) return;
    const std::lock_guard<std::mutex> lock(mutex_);
    done_ += sizes_[i];
    report_(done_, total_);
  }

 private:
  ProgressCallback report_;
  std::vector<std::uint64_t> sizes_;
  std::uint64_t total_ = 0, done_ = 0;
  std::mutex mutex_;
};

}  // namespace

std::vector<std::filesystem::path> expand_rank_inputs(
    const std::vector<std::filesystem::path>& inputs) {
  std::vector<std::filesystem::path> files;
  for (const std::filesystem::path& in : inputs) {
    std::error_code ec;
    if (std::filesystem::is_directory(in, ec)) {
      const auto found = traces_in(in);
      files.insert(files.end(), found.begin(), found.end());
    } else if (std::filesystem::exists(in, ec)) {
      files.push_back(in);
    } else {
      throw Error(ErrorKind::io, in.string(), 0, "no such file or directory");
    }
  }
  return files;
}

std::vector<RankProfile> read_rank_profiles(const std::vector<std::filesystem::path>& files,
                                            const ImportOptions& options, unsigned jobs) {
  ImportOptions quiet = options;
  quiet.progress = {};
  quiet.converting = {};  // several files at once: their lines would interleave
  SetProgress progress(files, options.progress);
  std::vector<std::optional<RankProfile>> slots(files.size());
  std::vector<std::exception_ptr> errors(files.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < files.size(); i = next++) {
      try {
        slots[i] = read_one(files[i], quiet);
        progress.file_done(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const unsigned threads = static_cast<unsigned>(
      std::clamp<std::size_t>(jobs, 1, std::max<std::size_t>(files.size(), 1)));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no more threads to be had: the ones running (and this one) read the rest
    }
  }
  work();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  std::vector<RankProfile> out;
  out.reserve(files.size());
  for (auto& s : slots) out.push_back(std::move(*s));
  return out;
}

}  // namespace candle_graph::ranks
