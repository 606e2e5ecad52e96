// The example CNN, its generated data and its (captured) steps. See torch_example_model.hpp.
#include "torch_example_model.hpp"

#include <torch/csrc/autograd/profiler.h>
#include <torch/torch.h>

#include <limits>

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
};

Trainer::Trainer(const ModelOptions& options) : impl_(std::make_unique<Impl>(options)) {}
Trainer::~Trainer() = default;

double Trainer::train_step() {
  auto [x, y] = impl_->next_batch();
  impl_->optimizer.zero_grad();
  torch::Tensor loss = torch::nn::functional::cross_entropy(impl_->model->forward(x), y);
  loss.backward();
  impl_->optimizer.step();
  impl_->track_loss(loss);
  return loss.item<double>();
}

cgt::CaptureSummary Trainer::captured_train_step(const CaptureRequest& request, double* loss_out) {
  auto [x, y] = impl_->next_batch();  // data loading is not part of the captured update
  cg::ProfileRun run = cg::ProfileRun::training("torch_train::update", request.step, "cpu")
                           .tag("model", "cnn-conv4-fc32-fc10")
                           .tag("optimizer", "adam")
                           .tag("physical_batch", std::to_string(impl_->options.batch))
                           .tag("precision", "f32");
  cgt::CaptureOptions options;
  options.memory = request.memory;
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
  cgt::TorchCapture capture(request.trace, std::move(run), *impl_->model, options);
  capture.record_input("input", x);
  capture.record_input("target", y);
  {
    auto zero = capture.begin_span("zero_grad");
    impl_->optimizer.zero_grad();
  }
  torch::Tensor loss;
  {
    auto forward = capture.begin_step_span("forward", cg::ExecutionStep::forward);
    loss = torch::nn::functional::cross_entropy(impl_->model->forward(x), y);
    impl_->track_loss(loss);
  }
  loss.backward();  // no span opened: the capture attributes it to an automatic backward span
  if (!request.poison_gradient.empty())
    for (auto& p : impl_->model->named_parameters())
      if (p.key() == request.poison_gradient)
        p.value().mutable_grad().fill_(std::numeric_limits<float>::quiet_NaN());
  // Gradient facts: finish() takes them after the measured region (Adam only reads them).
  {
    auto step = capture.begin_step_span("optimizer", cg::ExecutionStep::optimizer);
    impl_->optimizer.step();
  }
  cgt::CaptureSummary summary = capture.finish();
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

std::size_t Trainer::profiled_train_step() {
  namespace prof = torch::autograd::profiler;
  prof::enableProfiler(
      prof::ProfilerConfig(prof::ProfilerState::KINETO, /*report_input_shapes=*/true,
                           /*profile_memory=*/true),
      {torch::autograd::profiler::ActivityType::CPU});
  train_step();
  auto result = prof::disableProfiler();
  return result ? result->events().size() : 0;
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
