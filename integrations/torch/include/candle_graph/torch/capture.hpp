// LibTorch auto-capture (trace6.md §13): records one LibTorch training update or inference
// call as a candle-graph/trace/6 trace without hand-written record_op calls.
//
//   candle_graph::libtorch::TorchCapture capture("trace.jsonl",
//       candle_graph::ProfileRun::training("mlp::train_step", 3, "cpu"), *model);
//   capture.record_input("input", x);
//   { auto f = capture.begin_step_span("forward", candle_graph::ExecutionStep::forward);
//     loss = loss_fn(model->forward(x), y); }
//   loss.backward();                        // ops land in an automatic backward span
//   capture.record_gradients();             // optional: else finish() records them
//   { auto o = capture.begin_step_span("optimizer", candle_graph::ExecutionStep::optimizer);
//     optimizer.step(); }
//   candle_graph::libtorch::CaptureSummary s = capture.finish();
//
// What is captured, on the constructing thread only (thread-local RecordFunction callbacks):
//  - every ATen op and autograd node as an `op` event in the innermost open span, with input
//    tensor ids, output id, shape, dtype, device, timestamp, storage and input storage bytes.
//    duration_ns is the op's *exclusive* time (time in nested recorded ops is removed), so the
//    op durations of a span add up without counting nested ops twice (trace6.md §8.2 self times).
//  - tensor ids `t{n}` name one c10 CPU-allocator block (or one tensor seen without an
//    allocation), `@k` marks its k-th in-place write since first seen and `~{op}` a view made by
//    an op. Named tensors (parameters, record_input) use their name instead of `t{n}`.
//  - c10 CPU-allocator allocations and frees (through the PROFILER_STATE memory reporting slot)
//    as `memory` events with the ids above; frees of blocks allocated before the capture are
//    counted in CaptureSummary, never written (they would be unpaired frees, trace6.md §6 check
//    12).
//  - a `device_memory` checkpoint at the start and at the end of the measured region (process
//    RSS as used bytes, MemAvailable as free bytes), `tensor` checkpoints for the parameters
//    and recorded inputs, and `gradient` facts.
//
// This header includes no LibTorch header: the model and tensors are only declared here.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "candle_graph/instrument.hpp"

namespace at {
class Tensor;
}
namespace torch::nn {
class Module;
}

namespace candle_graph::libtorch {

namespace detail {
struct CaptureState;
class Recorder;
}  // namespace detail

struct CaptureOptions {
  // Name of the measured region; empty means `{entrypoint}/update-{step:012}` (training) or
  // `{entrypoint}/inference-{step:012}` (inference), the README labels of trace6.md §13.3.
  std::string measurement_name;
  // Record CPU-allocator alloc/free events. Skipped anyway (and said so in the meta tag
  // `torch.memory_capture`) when LibTorch's own profiler holds the PROFILER_STATE slot.
  bool memory = true;
  // The `root` of the gradient facts (trace6.md §4.9), e.g. "model".
  std::string parameter_root = "model";
  // Before a training update, also run an unrecorded backward pass of a 4-element graph, so that
  // the autograd engine's records are warm when the update's backward() starts. Never changes
  // the trace. It pays off for a LibTorch update (integrations/torch/bench); a Python update
  // (candle_graph.torch) loses more to it than it gains, so the Python capture turns it off
  // (docs/performance.md, "Python capture").
  bool warm_up_backward = true;
};

// What the capture saw, for the caller's summary line; every number can be checked against the
// trace file (ops = op events, memory_events = memory events, ...).
struct CaptureSummary {
  std::filesystem::path trace;
  std::uint64_t ops = 0;
  std::uint64_t memory_events = 0;  // allocs + frees written
  std::uint64_t allocs = 0;
  std::uint64_t frees = 0;        // frees matched to an alloc of this capture
  std::uint64_t live_at_end = 0;  // allocations of this capture not freed by the end
  std::uint64_t live_bytes_at_end = 0;
  std::uint64_t peak_bytes = 0;              // peak of live bytes allocated during the capture
  std::uint64_t pre_capture_frees = 0;       // frees of blocks allocated before the capture
  std::uint64_t pre_capture_free_bytes = 0;  // (0 when the block size was unknown)
  bool memory_captured = false;
  std::string memory_note;  // why memory capture was skipped, empty otherwise
  std::uint64_t gradients = 0;
  std::uint64_t non_finite_gradients = 0;
  std::uint64_t missing_gradients = 0;
  std::uint64_t measured_ns = 0;  // duration of the measured region
  // The capture's own cost, measured as it started (0 when it could not be measured, e.g.
  // while LibTorch's profiler is active), and what it adds up to over the recorded events
  // (meta tags capture.*, libtorch.md §4.1).
  std::uint64_t overhead_per_op_ns = 0;
  std::uint64_t overhead_per_memory_event_ns = 0;
  std::uint64_t overhead_estimate_ns = 0;
};

// The parameters and buffers of a model as named tensors: all a capture needs of the model.
// TorchCapture takes them from a torch::nn::Module by itself; a model whose parameters live
// elsewhere (a Python nn.Module, see integrations/python) lists them here, in the order of its
// named_parameters() / named_buffers(). The tensors are held by reference count, so gradients
// set later on the same parameter objects are the ones the gradient facts read.
class ModelTensors {
 public:
  ModelTensors();
  ModelTensors(ModelTensors&&) noexcept;
  ModelTensors& operator=(ModelTensors&&) noexcept;
  ModelTensors(const ModelTensors&) = delete;
  ModelTensors& operator=(const ModelTensors&) = delete;
  ~ModelTensors();
  // named_parameters(recurse=true) and named_buffers(recurse=true) of `model`.
  static ModelTensors of(const ::torch::nn::Module& model);
  void add_parameter(std::string name, const at::Tensor& tensor);
  void add_buffer(std::string name, const at::Tensor& tensor);
  std::size_t parameter_count() const noexcept;

 private:
  friend class TorchCapture;
  struct Data;
  std::unique_ptr<Data> data_;
};

// RAII end of a capture span (ends an automatic backward span opened inside it, then its own).
class CaptureSpan {
 public:
  CaptureSpan() noexcept = default;
  CaptureSpan(CaptureSpan&& other) noexcept;
  CaptureSpan& operator=(CaptureSpan&& other) noexcept;
  CaptureSpan(const CaptureSpan&) = delete;
  CaptureSpan& operator=(const CaptureSpan&) = delete;
  ~CaptureSpan();
  SpanId id() const noexcept { return guard_.id(); }
  void end();

 private:
  friend class TorchCapture;
  CaptureSpan(std::uint64_t capture, SpanGuard guard) noexcept
      : capture_(capture), guard_(std::move(guard)) {}
  std::uint64_t capture_ = 0;  // serial of the capture that opened the span, 0 = ended
  SpanGuard guard_;
};

// One capture: opens the trace, begins the measured region and starts recording on the calling
// thread; finish() (or the destructor) stops recording, writes the buffered events and closes
// the trace. Use on one thread; at most one capture per thread at a time.
class TorchCapture {
 public:
  // Opens `trace` (meta tags torch.memory_capture, torch.version, torch.threads are added to
  // `run`), checkpoints the parameters and buffers of `model`, measures its own cost per op and
  // per memory event (a few milliseconds of small ops; the capture.* tags written at finish,
  // libtorch.md §4.1), warms up and starts recording.
  // The warm-up runs `zeros` and `add` on 4 elements (and, for a training run, a backward pass of
  // its own 4-element graph) unrecorded, so that the update's first ops do not pay for cold
  // caches; other RecordFunction observers of the process see those ops. It is skipped while
  // LibTorch's profiler is active. Throws InstrumentError when the file cannot be written or
  // another capture is active on the thread.
  TorchCapture(const std::filesystem::path& trace, ProfileRun run, const ::torch::nn::Module& model,
               CaptureOptions options = {});
  // The same for a model given as named tensors (gradient facts: one per listed parameter).
  TorchCapture(const std::filesystem::path& trace, ProfileRun run, ModelTensors model,
               CaptureOptions options = {});
  TorchCapture(const TorchCapture&) = delete;
  TorchCapture& operator=(const TorchCapture&) = delete;
  // Runs finish() if it was not called; errors are swallowed (call finish() to see them).
  ~TorchCapture();

  // Spans inside the measured region, named with the measurement name as prefix: "forward" →
  // ".../forward". Spans begun directly on session() (begin_span, begin_step_span) work the
  // same way: every op lands in the innermost span open on the capturing thread, however it was
  // opened, else in the automatic backward span or the measured region.
  CaptureSpan begin_step_span(std::string_view name, ExecutionStep step);
  CaptureSpan begin_span(std::string_view name);

  // A `tensor` checkpoint (category activation) in the current span; later op events use
  // `name` as the tensor's id.
  void record_input(std::string_view name, const at::Tensor& tensor);
  // One gradient fact per named parameter of the model: missing (no grad), non_finite (a NaN
  // or infinity; norm omitted), zero (norm 0) or present, with its L2 norm. Called after
  // backward, it runs in a span `.../gradient_facts` inside the measured region (its tensor work
  // is not recorded as ops). When a training capture did not call it, finish() takes the facts
  // after the measured region ended, which is cheaper and equivalent as long as nothing between
  // backward and finish() replaced or cleared the gradients (optimizer steps only read them).
  void record_gradients();

  // Whether a capture is recording on the calling thread (a second one would be refused).
  static bool recording_on_this_thread() noexcept;

  TraceSession& session() noexcept { return *session_; }
  SpanId measurement() const noexcept { return measurement_.id(); }

  // Stops recording, ends any capture span still open (automatic backward), records the end
  // device_memory checkpoint, ends the measured region, writes the buffered op and memory
  // events and finishes the trace. Idempotent.
  CaptureSummary finish();

 private:
  void write_gradient_facts();
  void write_overhead_tags();
  std::unique_ptr<detail::CaptureState> state_;
  std::unique_ptr<TraceSession> session_;
  std::unique_ptr<detail::Recorder> recorder_;
  SpanGuard measurement_;
  ModelTensors model_;
  CaptureOptions options_;
  ExecutionPhase phase_;
  bool gradients_recorded_ = false;
  bool finished_ = false;
  CaptureSummary summary_;
};

}  // namespace candle_graph::libtorch
