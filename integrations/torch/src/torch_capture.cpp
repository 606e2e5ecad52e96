// TorchCapture: the session, the measured region, parameter/input checkpoints, gradient facts
// and the end of a capture. The per-op work lives in recorder.cpp.
#include <ATen/Parallel.h>
#include <torch/nn/module.h>
#include <torch/version.h>

#include <cstdio>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "candle_graph/torch/capture.hpp"
#include "event_writer.hpp"
#include "instrument/clock.hpp"
#include "process_memory.hpp"
#include "recorder.hpp"

namespace candle_graph::libtorch {
namespace {

std::string default_measurement_name(const ProfileRun::Fields& f) {
  char step[32];
  std::snprintf(step, sizeof step, "%012llu", static_cast<unsigned long long>(f.capture_step));
  return f.entrypoint + (f.phase == ExecutionPhase::train ? "/update-" : "/inference-") + step;
}

std::vector<std::uint64_t> shape_of(const at::Tensor& t) {
  std::vector<std::uint64_t> shape;
  for (const std::int64_t d : t.sizes()) shape.push_back(static_cast<std::uint64_t>(d));
  return shape;
}

// Names `t` for the capture and records it in `span`: its shape, dtype, device and storage size.
void record_named_tensor(detail::CaptureState& s, TraceSession& session, SpanId span,
                         std::string_view name, const at::Tensor& t, bool requires_grad,
                         MemoryCategory category) {
  detail::label_tensor(s, t, name);
  const std::vector<std::uint64_t> shape = shape_of(t);
  const std::string dev = t.device().str();
  TensorRecord r;
  r.tensor_id = name;
  r.shape = shape;
  r.dtype = s.dtype_labels[static_cast<std::size_t>(t.scalar_type())];
  r.device = dev;
  r.requires_grad = requires_grad;
  r.storage_bytes = static_cast<std::uint64_t>(t.numel()) * t.element_size();
  r.category = category;
  session.record_tensor(span, r);
}

// A recorder's first records are its most expensive: by the time the user's update starts, the
// work since the previous capture has evicted from the caches LibTorch's RecordFunction path with
// callbacks on, the allocator reporter's path and the capture's own buffers, and the update's
// first ops would pay for fetching them back (and report that time as theirs). So, like
// torch.profiler's warm-up phase, the capture runs a few tiny ops through its callbacks
// unrecorded (paused: no op record, their blocks internal) — for a training update also a
// backward pass of a 4-element graph of its own, so that the autograd engine's records are warm
// too (CaptureOptions::warm_up_backward) — then reads the memory the update will write. Not when
// LibTorch's profiler holds the PROFILER_STATE slot: it would record them. Measured:
// docs/performance.md, "Session 6".
enum class WarmUp { memory_only, ops, ops_and_backward };

// Room in the meta line for the capture.* tags: about 270 bytes in a typical trace, under 400 with
// 20-digit counts; too little would make finish() throw after writing the trace.
constexpr std::size_t kOverheadTagRoom = 512;

void warm_up(detail::CaptureState& s, WarmUp what) {
  if (what != WarmUp::memory_only) {
    const std::size_t serials = s.serials.size();
    const std::size_t blocks = s.identities.size();
    try {
      ::torch::NoGradGuard no_grad;
      const at::Tensor t = at::zeros({4});
      (void)t.add(1);
      if (what == WarmUp::ops_and_backward) {
        const at::AutoGradMode grad(true);
        const at::Tensor x = at::zeros({4}).requires_grad_(true);
        x.mul(2).sum().backward();
      }
    } catch (...) {
      // a warm-up that failed (e.g. under InferenceMode) only leaves the caches cold
    }
    // Its blocks are gone again (each free erased its identity): their serials are handed out
    // again, so the trace's tensor ids do not depend on the warm-up. Kept if a block survived.
    if (s.identities.size() == blocks) s.serials.resize(serials);
  }
  s.warm();
}

// The capture's own tensor work (gradient norms) runs with the recorder paused: its ops are not
// the user's step, and its temporary blocks are marked internal.
class Pause {
 public:
  explicit Pause(detail::CaptureState& s) : s_(s), was_(s.paused) { s_.paused = true; }
  ~Pause() { s_.paused = was_; }
  Pause(const Pause&) = delete;
  Pause& operator=(const Pause&) = delete;

 private:
  detail::CaptureState& s_;
  bool was_;
};

}  // namespace

// ---- CaptureSpan -------------------------------------------------------------------------------

CaptureSpan::CaptureSpan(CaptureSpan&& other) noexcept
    : capture_(std::exchange(other.capture_, 0)), guard_(std::move(other.guard_)) {}

CaptureSpan& CaptureSpan::operator=(CaptureSpan&& other) noexcept {
  if (this != &other) {
    try {
      end();
    } catch (...) {
    }
    capture_ = std::exchange(other.capture_, 0);
    guard_ = std::move(other.guard_);
  }
  return *this;
}

CaptureSpan::~CaptureSpan() {
  try {
    end();
  } catch (...) {
    // an out-of-order end leaves the span unclosed (health open_span); finish() reports it
  }
}

void CaptureSpan::end() {
  if (capture_ == 0) return;
  // An automatic backward span opened inside this span ends first (spans end in LIFO order) if
  // the capture is still recording on this thread. Only then: a span that outlives its capture
  // must not touch the capture's state, which the next capture on the thread reuses (or which is
  // gone with its thread).
  detail::end_auto_backward_of(std::exchange(capture_, 0));
  guard_.end();
}

// ---- ModelTensors ------------------------------------------------------------------------------

struct ModelTensors::Data {
  std::vector<std::pair<std::string, at::Tensor>> parameters;
  std::vector<std::pair<std::string, at::Tensor>> buffers;
};

ModelTensors::ModelTensors() : data_(std::make_unique<Data>()) {}
ModelTensors::ModelTensors(ModelTensors&&) noexcept = default;
ModelTensors& ModelTensors::operator=(ModelTensors&&) noexcept = default;
ModelTensors::~ModelTensors() = default;

ModelTensors ModelTensors::of(const ::torch::nn::Module& model) {
  ModelTensors m;
  for (const auto& p : model.named_parameters(/*recurse=*/true))
    m.add_parameter(p.key(), p.value());
  for (const auto& b : model.named_buffers(/*recurse=*/true)) m.add_buffer(b.key(), b.value());
  return m;
}

void ModelTensors::add_parameter(std::string name, const at::Tensor& tensor) {
  data_->parameters.emplace_back(std::move(name), tensor);
}

void ModelTensors::add_buffer(std::string name, const at::Tensor& tensor) {
  data_->buffers.emplace_back(std::move(name), tensor);
}

std::size_t ModelTensors::parameter_count() const noexcept {
  return data_ ? data_->parameters.size() : 0;
}

// ---- TorchCapture ------------------------------------------------------------------------------

bool TorchCapture::recording_on_this_thread() noexcept {
  return detail::recording_on_this_thread();
}

TorchCapture::TorchCapture(const std::filesystem::path& trace, ProfileRun run,
                           const ::torch::nn::Module& model, CaptureOptions options)
    : TorchCapture(trace, std::move(run), ModelTensors::of(model), std::move(options)) {}

TorchCapture::TorchCapture(const std::filesystem::path& trace, ProfileRun run, ModelTensors model,
                           CaptureOptions options)
    : state_(detail::acquire_capture_state()),
      model_(std::move(model)),
      options_(std::move(options)),
      phase_(run.fields().phase) {
  // Refused before the trace file is created: a second capture on the thread must not truncate
  // a file or leave one behind.
  if (detail::recording_on_this_thread())
    throw InstrumentError(trace,
                          "another TorchCapture is already recording on this thread; finish it "
                          "first");
  if (!model_.data_) model_ = ModelTensors();  // a moved-from argument: no parameters
  // Set when LibTorch's own profiler is active (it holds the PROFILER_STATE slot).
  const std::optional<std::string> slot_problem = detail::memory_slot_problem();
  const std::optional<std::string> memory_problem =
      options_.memory ? slot_problem
                      : std::optional<std::string>("off: CaptureOptions::memory is false");
  summary_.memory_captured = !memory_problem;
  summary_.memory_note = memory_problem.value_or("");
  run.tag("torch.memory_capture", memory_problem.value_or("on"));
  run.tag("torch.version", TORCH_VERSION);
  run.tag("torch.intra_op_threads", std::to_string(at::get_num_threads()));
  run.tag("torch.op_duration", "exclusive");  // nested recorded ops are separate events
  // The capture.* tags (libtorch.md §4.1) count what finish() wrote, so they are set then.
  run.final_tag_room(kOverheadTagRoom);
  const std::string device = run.fields().device;
  if (options_.measurement_name.empty())
    options_.measurement_name = default_measurement_name(run.fields());

  session_ = std::make_unique<TraceSession>(trace, run);
  detail::CaptureState& s = *state_;
  s.session = session_.get();
  s.measurement_name = options_.measurement_name;
  s.run_device = device;
  recorder_ = std::make_unique<detail::Recorder>(s, !memory_problem);
  s.paused = true;  // nothing of the user's step runs before the measured region begins
  // LibTorch's profiler, when active, would record the calibration's ops as the user's.
  if (!slot_problem) s.cost = detail::measure_capture_cost(s);

  // Parameter and buffer checkpoints, as the update begins (envelope span: formatting them is
  // not part of the measured step).
  auto checkpoint = [&](const std::string& name, const at::Tensor& t, bool requires_grad) {
    if (!t.defined()) return;
    record_named_tensor(s, *session_, session_->envelope(), name, t, requires_grad,
                        MemoryCategory::parameter);
    s.parameter_serials.insert(detail::identify(s, t).serial);
  };
  for (const auto& [name, tensor] : model_.data_->parameters) {
    checkpoint(name, tensor, tensor.requires_grad());
    // Gradients kept from the previous update (zero_grad zeroes them in place) get names too.
    if (tensor.defined() && tensor.grad().defined())
      detail::label_tensor(s, tensor.grad(), name + ".grad");
  }
  for (const auto& [name, tensor] : model_.data_->buffers) checkpoint(name, tensor, false);
  warm_up(s, slot_problem ? WarmUp::memory_only
             : phase_ == ExecutionPhase::train && options_.warm_up_backward
                 ? WarmUp::ops_and_backward
                 : WarmUp::ops);

  measurement_ = session_->begin_measurement(options_.measurement_name);
  if (const auto mem = detail::read_process_memory())
    session_->record_device_memory(device, mem->used_bytes, mem->free_bytes);
  s.origin_ns = session_->elapsed_ns();
  s.origin_tick = ::candle_graph::detail::now_tick();  // the recorder's clock (recorder.cpp)
  s.paused = false;
}

TorchCapture::~TorchCapture() {
  try {
    finish();
  } catch (...) {
  }
  // finish() stopped the recorder in every case; the state goes back to the thread's pool.
  recorder_.reset();
  detail::release_capture_state(std::move(state_));
}

CaptureSpan TorchCapture::begin_step_span(std::string_view name, ExecutionStep step) {
  detail::CaptureState& s = *state_;
  detail::end_auto_backward(s);
  SpanGuard guard =
      session_->begin_step_span(options_.measurement_name + "/" + std::string(name), step);
  return CaptureSpan(s.serial, std::move(guard));
}

CaptureSpan TorchCapture::begin_span(std::string_view name) {
  detail::CaptureState& s = *state_;
  detail::end_auto_backward(s);
  SpanGuard guard = session_->begin_span(options_.measurement_name + "/" + std::string(name));
  return CaptureSpan(s.serial, std::move(guard));
}

void TorchCapture::record_input(std::string_view name, const at::Tensor& t) {
  detail::CaptureState& s = *state_;
  record_named_tensor(s, *session_, SpanId(s.current_span().number), name, t, t.requires_grad(),
                      MemoryCategory::activation);
}

void TorchCapture::record_gradients() {
  if (gradients_recorded_) return;
  // backward() has returned: its span must not hold this work, which gets a span of its own so
  // that the measured region's breakdown shows what the checks cost.
  detail::end_auto_backward(*state_);
  CaptureSpan span = begin_span("gradient_facts");
  write_gradient_facts();
}

void TorchCapture::write_gradient_facts() {
  detail::CaptureState& s = *state_;
  Pause pause(s);
  ::torch::NoGradGuard no_grad;
  gradients_recorded_ = true;
  for (const auto& [name, tensor] : model_.data_->parameters) {
    const at::Tensor g = tensor.defined() ? tensor.grad() : at::Tensor();
    GradientState state = GradientState::missing;
    std::optional<double> norm;
    if (g.defined()) {
      const bool finite = at::isfinite(g).all().item<bool>();
      if (!finite) {
        state = GradientState::non_finite;
        ++summary_.non_finite_gradients;
      } else {
        norm = g.to(at::kDouble).norm().item<double>();  // double: no float overflow of Σx²
        state = *norm == 0.0 ? GradientState::zero : GradientState::present;
      }
      s.gradient_serials.insert(detail::identify(s, g).serial);
    } else {
      ++summary_.missing_gradients;
    }
    session_->record_gradient(options_.parameter_root, name, state, norm);
    ++summary_.gradients;
  }
}

// libtorch.md §4.1: the per-event cost measured at start times the events written, so that the
// analysis can say how much of the measured time is the capture's own.
void TorchCapture::write_overhead_tags() {
  const detail::CaptureCost& c = state_->cost;
  auto tag = [&](std::string_view key, std::uint64_t value) {
    session_->set_final_tag(key, std::to_string(value));
  };
  tag("capture.ops_recorded", summary_.ops);
  tag("capture.memory_events_recorded", summary_.memory_events);
  if (c.per_op_ns == 0) {
    session_->set_final_tag(
        "capture.overhead_calibration",
        "not measured: LibTorch's profiler was active, or the calibration failed");
    return;
  }
  summary_.overhead_per_op_ns = c.per_op_ns;
  summary_.overhead_per_memory_event_ns = c.per_memory_event_ns;
  summary_.overhead_estimate_ns =
      c.per_op_ns * summary_.ops + c.per_memory_event_ns * summary_.memory_events;
  tag("capture.overhead_per_op_ns", c.per_op_ns);
  if (summary_.memory_captured) tag("capture.overhead_per_memory_event_ns", c.per_memory_event_ns);
  tag("capture.overhead_estimate_ns", summary_.overhead_estimate_ns);
  session_->set_final_tag(
      "capture.overhead_calibration",
      std::to_string(c.calibration_records) +
          " records of small ops timed at start, median of 9 batches (a lower bound)");
}

CaptureSummary TorchCapture::finish() {
  if (finished_) return summary_;
  finished_ = true;
  detail::CaptureState& s = *state_;
  std::exception_ptr first_error;
  auto attempt = [&](auto&& step) {
    try {
      step();
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
  };
  attempt([&] { detail::end_auto_backward(s); });
  attempt([&] {
    Pause pause(s);
    for (const auto& [name, tensor] : model_.data_->parameters)
      if (tensor.defined() && tensor.grad().defined())
        s.gradient_serials.insert(detail::identify(s, tensor.grad()).serial);
  });
  attempt([&] { recorder_->stop(); });
  attempt([&] {
    if (const auto mem = detail::read_process_memory())
      session_->record_device_memory(s.run_device, mem->used_bytes, mem->free_bytes);
  });
  summary_.measured_ns = measurement_.elapsed_ns();
  attempt([&] { measurement_.end(); });
  // Gradient facts not recorded during the step are taken now, outside the measured region
  // (optimizer steps read gradients, they do not change them).
  if (phase_ == ExecutionPhase::train && !gradients_recorded_)
    attempt([&] { write_gradient_facts(); });
  attempt([&] {
    const detail::WrittenEvents w = detail::write_events(s, *session_);
    summary_.ops = w.ops;
    summary_.allocs = w.allocs;
    summary_.frees = w.frees;
    summary_.memory_events = w.allocs + w.frees;
    summary_.live_at_end = w.live_at_end;
    summary_.live_bytes_at_end = w.live_bytes_at_end;
    summary_.peak_bytes = w.peak_bytes;
  });
  attempt([&] { write_overhead_tags(); });
  summary_.pre_capture_frees = s.pre_capture_frees;
  summary_.pre_capture_free_bytes = s.pre_capture_free_bytes;
  attempt([&] { summary_.trace = session_->finish(); });
  if (first_error) std::rethrow_exception(first_error);
  return summary_;
}

}  // namespace candle_graph::libtorch
