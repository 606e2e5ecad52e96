// Cost of the instrumentation API (results in docs/performance.md (Instrumentation)):
//   (a) the disabled CaptureSelector check, ns per invocation           target ≤ 2 ns
//   (b) an active record_op of a 32×32 f32 op, ns per event              target ≤ 100 ns, ≥ 8×
//   naive (c) a span begin + end, ns                                            target ≤ 150 ns
// plus one reading of the session clock (TSC) next to steady_clock: every LibTorch op record
// takes two (docs/performance.md "LibTorch capture").
// Each is measured next to a naive baseline in the same run: the same event built as an
// nlohmann::ordered_json DOM and written with `std::ofstream << dump() << '\n'` (for (a): the
// stateless modulo check). Files go to a scratch directory and are restarted every kRotateEvents
// events (outside the timed region) so the page cache, not the disk size, stays the working set.
// The session hands full buffers to a writer thread, so (b) and (c) are also registered with
// MeasureProcessCPUTime() ("/process_time" rows): CPU of every thread per event, writer included.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "candle_graph/instrument.hpp"
#include "instrument/clock.hpp"

namespace {

using candle_graph::CaptureSelector;
using candle_graph::OpRecord;
using candle_graph::ProfileRun;
using candle_graph::SpanGuard;
using candle_graph::TraceSession;

constexpr std::uint64_t kRotateEvents = 1u << 20;

std::filesystem::path scratch(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("cg-instrument-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir / name;
}

// ---- (a) selector ------------------------------------------------------------------------

// The selector kept in registers by the compiler (a local in the training loop).
void BM_SelectorDisabledTick(benchmark::State& state) {
  CaptureSelector selector = CaptureSelector::every(std::uint64_t{1} << 62);
  for (auto _ : state) benchmark::DoNotOptimize(selector.tick());
}
BENCHMARK(BM_SelectorDisabledTick);

// The selector re-read from and written back to memory on every invocation (a member of a
// trainer object that the loop body may modify): the pessimistic case.
void BM_SelectorDisabledTickInMemory(benchmark::State& state) {
  CaptureSelector selector = CaptureSelector::every(std::uint64_t{1} << 62);
  for (auto _ : state) {
    benchmark::DoNotOptimize(selector.tick());
    benchmark::ClobberMemory();
  }
  benchmark::DoNotOptimize(selector);
}
BENCHMARK(BM_SelectorDisabledTickInMemory);

// Naive: the stateless modulo test on a step counter.
void BM_NaiveSelectorModulo(benchmark::State& state) {
  std::uint64_t step = 0, period = 1000003;
  benchmark::DoNotOptimize(period);
  for (auto _ : state) benchmark::DoNotOptimize(++step % period == 0);
}
BENCHMARK(BM_NaiveSelectorModulo);

// ---- sessions that restart outside the timed region ------------------------------------

class BenchSession {
 public:
  explicit BenchSession(std::string name) : path_(scratch(name)) { open(); }
  ~BenchSession() {
    session_.reset();
    std::filesystem::remove(path_);
  }
  TraceSession& get() { return *session_; }
  void count(benchmark::State& state, std::uint64_t events) {
    if ((written_ += events) < kRotateEvents) return;
    state.PauseTiming();
    open();
    state.ResumeTiming();
  }

 private:
  void open() {
    session_.reset();
    session_ = std::make_unique<TraceSession>(path_, ProfileRun::training("bench", 1, "cpu"));
    written_ = 0;
  }
  std::filesystem::path path_;
  std::unique_ptr<TraceSession> session_;
  std::uint64_t written_ = 0;
};

class NaiveFile {
 public:
  explicit NaiveFile(std::string name) : path_(scratch(name)) { open(); }
  ~NaiveFile() {
    out_.close();
    std::filesystem::remove(path_);
  }
  void write(const nlohmann::ordered_json& j, benchmark::State& state) {
    out_ << j.dump() << '\n';
    if (++written_ < kRotateEvents) return;
    state.PauseTiming();
    open();
    state.ResumeTiming();
  }

 private:
  void open() {
    if (out_.is_open()) out_.close();
    out_.open(path_, std::ios::binary | std::ios::trunc);
    written_ = 0;
  }
  std::filesystem::path path_;
  std::ofstream out_;
  std::uint64_t written_ = 0;
};

// ---- (b) record_op of a 32×32 f32 matmul --------------------------------------------------

void BM_RecordOp32x32(benchmark::State& state) {
  BenchSession bench("record_op.jsonl");
  const std::array<std::uint64_t, 2> shape{32, 32};
  const std::array<std::string_view, 2> inputs{"x", "w"};
  for (auto _ : state) {
    // timestamp 0: the session reads the clock, as a real caller would have it do.
    bench.get().record_op(bench.get().envelope(), OpRecord{.op_name = "matmul",
                                                           .inputs = inputs,
                                                           .output = "y",
                                                           .shape = shape,
                                                           .dtype = "f32",
                                                           .device = "cpu",
                                                           .duration_ns = 1234});
    bench.count(state, 1);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RecordOp32x32);
BENCHMARK(BM_RecordOp32x32)->MeasureProcessCPUTime();

void BM_NaiveRecordOp32x32(benchmark::State& state) {
  NaiveFile file("naive_op.jsonl");
  const auto origin = std::chrono::steady_clock::now();
  for (auto _ : state) {
    const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::steady_clock::now() - origin)
                         .count();
    nlohmann::ordered_json j;
    j["kind"] = "op";
    j["span_id"] = "s1";
    j["op_name"] = "matmul";
    j["inputs"] = nlohmann::ordered_json::array({"x", "w"});
    j["output"] = "y";
    j["shape"] = nlohmann::ordered_json::array({32, 32});
    j["dtype"] = "f32";
    j["device"] = "cpu";
    j["duration_ns"] = 1234;
    j["timestamp_ns"] = now;
    j["storage_bytes"] = 32 * 32 * 4;
    j["input_storage_bytes"] = 0;
    file.write(j, state);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_NaiveRecordOp32x32);
BENCHMARK(BM_NaiveRecordOp32x32)->MeasureProcessCPUTime();

// ---- (c) span begin + end ---------------------------------------------------------------

void BM_SpanBeginEnd(benchmark::State& state) {
  BenchSession bench("spans.jsonl");
  for (auto _ : state) {
    {
      SpanGuard span = bench.get().begin_step_span("layer", candle_graph::ExecutionStep::forward);
      benchmark::DoNotOptimize(span);
    }
    bench.count(state, 2);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SpanBeginEnd);
BENCHMARK(BM_SpanBeginEnd)->MeasureProcessCPUTime();

void BM_NaiveSpanBeginEnd(benchmark::State& state) {
  NaiveFile file("naive_spans.jsonl");
  const auto origin = std::chrono::steady_clock::now();
  std::uint64_t next = 2;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    const std::string id = "s" + std::to_string(next++);
    nlohmann::ordered_json begin;
    begin["kind"] = "span_start";
    begin["id"] = id;
    begin["parent_id"] = "s1";
    begin["name"] = "layer";
    begin["start_ns"] =
        std::chrono::duration_cast<std::chrono::nanoseconds>(start - origin).count();
    begin["span_kind"] = "function";
    begin["measured"] = false;
    begin["step"] = "forward";
    file.write(begin, state);
    nlohmann::ordered_json end;
    end["kind"] = "span_end";
    end["id"] = id;
    end["duration_ns"] = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::steady_clock::now() - start)
                             .count();
    file.write(end, state);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_NaiveSpanBeginEnd);
BENCHMARK(BM_NaiveSpanBeginEnd)->MeasureProcessCPUTime();

// One reading of the session clock (rdtsc scaled to ns) and of steady_clock (vDSO
// clock_gettime), for the per-record cost of timestamps.
void BM_SessionClockTick(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(candle_graph::detail::now_tick());
}
BENCHMARK(BM_SessionClockTick);

void BM_SteadyClockNow(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(std::chrono::steady_clock::now());
}
BENCHMARK(BM_SteadyClockNow);

}  // namespace

BENCHMARK_MAIN();
