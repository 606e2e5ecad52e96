// The example CNN, its generated data and its (captured) steps. See torch_example_model.hpp.
#include "torch_example_model.hpp"

#include <torch/csrc/autograd/profiler.h>
#include <torch/torch.h>

#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <limits>
#include <optional>
#include <utility>

namespace torch_example {

namespace cg = candle_graph;
namespace cgt = candle_graph::libtorch;

namespace {

struct CnnImpl : torch::nn::Module {
  explicit CnnImpl(bool unused_parameter)
      : conv(register_module("conv",
                             torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 4, 3).padding(1)))),
        fc1(register_module("fc1", torch::nn::Linear(64, 32))),
        fc2(register_module("fc2", torch::nn::Linear(32, 10))) {
    if (unused_parameter) unused = register_module("unused", torch::nn::Linear(3, 3));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor h = torch::max_pool2d(torch::relu(conv->forward(x)), 2);
    h = torch::relu(fc1->forward(h.flatten(1)));
    return fc2->forward(h);
  }
  torch::nn::Conv2d conv;
  torch::nn::Linear fc1, fc2;
  torch::nn::Linear unused{nullptr};
};
TORCH_MODULE(Cnn);

}  // namespace

struct Trainer::Impl {
  explicit Impl(const ModelOptions& o)
      : options(o),
        model((torch::manual_seed(o.seed), Cnn(o.unused_parameter))),
        optimizer(model->parameters(), torch::optim::AdamOptions(1e-2)),
        generator(at::detail::createCPUGenerator(o.seed + 1)) {
    // A fixed random projection labels the images: learnable, deterministic, no download.
    projection = torch::randn({64, 10}, generator);
  }

  // The next batch of the generated data set (deterministic sequence for a given seed).
  std::pair<torch::Tensor, torch::Tensor> next_batch() {
    torch::Tensor x = torch::randn({options.batch, 1, 8, 8}, generator);
    torch::Tensor y = x.flatten(1).matmul(projection).argmax(1);
    return {x, y};
  }

  // Logging pattern: a running loss kept as a tensor (no host sync per step). Each update
  // replaces it, so the capture sees a block from an earlier update being freed.
  void track_loss(const torch::Tensor& loss) {
    running_loss =
        running_loss.defined() ? running_loss * 0.9 + loss.detach() * 0.1 : loss.detach();
  }

  ModelOptions options;
  Cnn model;
  torch::optim::Adam optimizer;
  at::Generator generator;
  torch::Tensor projection;
  torch::Tensor running_loss;

  torch::Tensor update(const torch::Tensor& x, const torch::Tensor& y, cgt::TorchCapture* capture,
                       const CaptureRequest* request);
  cgt::CaptureSummary captured_update(const CaptureRequest& request, double* loss_out,
                                      StepTiming& timing);
};

Trainer::Trainer(const ModelOptions& options) : impl_(std::make_unique<Impl>(options)) {}
Trainer::~Trainer() = default;

namespace {

// A point in time on both clocks of StepTiming.
struct Stamp {
  std::int64_t wall = 0;
  std::int64_t cpu = 0;
  std::int64_t faults = 0;  // minor page faults of the calling thread so far
  static Stamp now() {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    rusage ru{};
    ::getrusage(RUSAGE_THREAD, &ru);
    return Stamp{std::chrono::steady_clock::now().time_since_epoch().count(),
                 static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec,
                 static_cast<std::int64_t>(ru.ru_minflt)};
  }
};

PhaseTime between(const Stamp& a, const Stamp& b) {
  return PhaseTime{static_cast<std::uint64_t>(b.wall - a.wall),
                   static_cast<std::uint64_t>(b.cpu - a.cpu),
                   static_cast<std::uint64_t>(b.faults - a.faults)};
}

}  // namespace

// The update every variant runs: zero_grad, forward + loss (+ running loss), backward, Adam
// step. Under a capture it opens the spans the examples show (zero_grad, forward, optimizer;
// backward() gets the automatic span) or, with session_spans, forward/backward/optimizer spans
// through the session's own API.
torch::Tensor Trainer::Impl::update(const torch::Tensor& x, const torch::Tensor& y,
                                    cgt::TorchCapture* capture, const CaptureRequest* request) {
  const bool session_spans = request != nullptr && request->session_spans;
  auto span = [&](const char* name, std::optional<cg::ExecutionStep> step) {
    std::optional<cgt::CaptureSpan> by_capture;
    std::optional<cg::SpanGuard> by_session;
    if (capture != nullptr && session_spans && step)
      by_session.emplace(capture->session().begin_step_span(name, *step));
    else if (capture != nullptr && !session_spans)
      by_capture.emplace(step ? capture->begin_step_span(name, *step) : capture->begin_span(name));
    return std::make_pair(std::move(by_capture), std::move(by_session));
  };
  {
    auto zero = span("zero_grad", std::nullopt);
    optimizer.zero_grad();
  }
  torch::Tensor loss;
  {
    auto forward = span("forward", cg::ExecutionStep::forward);
    loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    track_loss(loss);
  }
  {
    // Without session spans no span is opened: the capture attributes backward() to an
    // automatic backward span.
    std::optional<cg::SpanGuard> backward;
    if (capture != nullptr && session_spans)
      backward.emplace(capture->session().begin_step_span("backward", cg::ExecutionStep::backward));
    loss.backward();
  }
  {
    std::optional<cg::SpanGuard> after;
    if (capture != nullptr && request != nullptr && !request->span_after_backward.empty())
      after.emplace(capture->session().begin_span(request->span_after_backward));
    if (request != nullptr && !request->poison_gradient.empty())
      for (auto& p : model->named_parameters())
        if (p.key() == request->poison_gradient)
          p.value().mutable_grad().fill_(std::numeric_limits<float>::quiet_NaN());
  }
  // Gradient facts: finish() takes them after the measured region (Adam only reads them).
  {
    auto step = span("optimizer", cg::ExecutionStep::optimizer);
    optimizer.step();
  }
  return loss;
}

double Trainer::train_step() {
  auto [x, y] = impl_->next_batch();
  return impl_->update(x, y, nullptr, nullptr).item<double>();
}

StepTiming Trainer::timed_train_step() {
  auto [x, y] = impl_->next_batch();
  StepTiming timing;
  const Stamp t1 = Stamp::now();
  (void)impl_->update(x, y, nullptr, nullptr);
  timing.step = between(t1, Stamp::now());
  return timing;
}

cgt::CaptureSummary Trainer::captured_train_step(const CaptureRequest& request, double* loss_out) {
  StepTiming timing;
  return impl_->captured_update(request, loss_out, timing);
}

cgt::CaptureSummary Trainer::timed_captured_train_step(const CaptureRequest& request,
                                                       StepTiming& timing) {
  return impl_->captured_update(request, nullptr, timing);
}

cgt::CaptureSummary Trainer::Impl::captured_update(const CaptureRequest& request, double* loss_out,
                                                   StepTiming& timing) {
  auto [x, y] = next_batch();  // data loading is not part of the captured update
  const Stamp t0 = Stamp::now();
  cg::ProfileRun run = cg::ProfileRun::training("torch_train::update", request.step, "cpu")
                           .tag("model", "cnn-conv4-fc32-fc10")
                           .tag("optimizer", "adam")
                           .tag("physical_batch", std::to_string(options.batch))
                           .tag("precision", "f32");
  cgt::CaptureOptions capture_options;
  capture_options.memory = request.memory;
  namespace prof = torch::autograd::profiler;
  if (request.under_torch_profiler)
    prof::enableProfiler(prof::ProfilerConfig(prof::ProfilerState::KINETO, true, true),
                         {prof::ActivityType::CPU});
  struct StopProfiler {
    bool on;
    ~StopProfiler() {
      if (on) (void)prof::disableProfiler();
    }
  } stop_profiler{request.under_torch_profiler};
  cgt::TorchCapture capture(request.trace, std::move(run), *model, capture_options);
  capture.record_input("input", x);
  capture.record_input("target", y);
  const Stamp t1 = Stamp::now();
  torch::Tensor loss = update(x, y, &capture, &request);
  const Stamp t2 = Stamp::now();
  cgt::CaptureSummary summary = capture.finish();
  const Stamp t3 = Stamp::now();
  timing = StepTiming{between(t0, t1), between(t1, t2), between(t2, t3)};
  if (loss_out != nullptr) *loss_out = loss.item<double>();
  return summary;
}

void Trainer::infer() {
  auto [x, y] = impl_->next_batch();
  torch::NoGradGuard no_grad;
  (void)impl_->model->forward(x);
}

cgt::CaptureSummary Trainer::captured_inference(const CaptureRequest& request) {
  auto [x, y] = impl_->next_batch();
  torch::NoGradGuard no_grad;
  cg::ProfileRun run = cg::ProfileRun::inference("torch_infer::forward", request.step, "cpu")
                           .tag("model", "cnn-conv4-fc32-fc10")
                           .tag("physical_batch", std::to_string(impl_->options.batch))
                           .tag("precision", "f32");
  cgt::CaptureOptions options;
  options.memory = request.memory;
  cgt::TorchCapture capture(request.trace, std::move(run), *impl_->model, options);
  capture.record_input("input", x);
  {
    auto forward = capture.begin_step_span("forward", cg::ExecutionStep::forward);
    torch::Tensor logits = impl_->model->forward(x);
    (void)logits.argmax(1);
  }
  return capture.finish();
}

std::size_t Trainer::profiled_train_step(TorchProfiler profiler, StepTiming* timing) {
  namespace prof = torch::autograd::profiler;
  auto [x, y] = impl_->next_batch();
  const Stamp t0 = Stamp::now();
  // Shapes and memory on, as our capture records them (libtorch.md §3d).
  if (profiler == TorchProfiler::kineto_api)
    prof::enableProfiler(
        prof::ProfilerConfig(prof::ProfilerState::KINETO, /*report_input_shapes=*/true,
                             /*profile_memory=*/true),
        {torch::autograd::profiler::ActivityType::CPU});
  else
    prof::enableProfilerLegacy(prof::ProfilerConfig(
        prof::ProfilerState::CPU, /*report_input_shapes=*/true, /*profile_memory=*/true));
  const Stamp t1 = Stamp::now();
  (void)impl_->update(x, y, nullptr, nullptr);
  const Stamp t2 = Stamp::now();
  std::size_t events = 0;
  if (profiler == TorchProfiler::kineto_api) {
    auto result = prof::disableProfiler();
    events = result ? result->events().size() : 0;
  } else {
    for (const auto& list : prof::disableProfilerLegacy()) events += list.size();
  }
  const Stamp t3 = Stamp::now();
  if (timing != nullptr) *timing = StepTiming{between(t0, t1), between(t1, t2), between(t2, t3)};
  return events;
}

std::vector<std::string> Trainer::parameter_names() const {
  std::vector<std::string> names;
  for (const auto& p : impl_->model->named_parameters()) names.push_back(p.key());
  return names;
}

std::int64_t Trainer::batch() const {
  return impl_->options.batch;
}

}  // namespace torch_example
