// manual_probe: a real (small) workload instrumented by hand with candle_graph/instrument.hpp.
//
// It trains a two-layer MLP (16 → 32 ReLU → 4, batch 8, mean squared error) with plain loops:
// forward, backward, SGD. Five updates run; the CaptureSelector picks update 3, and only that
// one opens a TraceSession and records every event kind: the measured region, forward /
// backward / optimizer step spans, timed ops, tensor checkpoints, the explicit allocation
// lifecycle of every activation and gradient buffer, a device-memory checkpoint, gradient
// facts with L2 norms, and a call edge. The other updates run the same code with no session.
//
//   manual_probe [TRACE]      (default manual_probe.jsonl), then: candle-graph validate TRACE
#include <sys/sysinfo.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "candle_graph/instrument.hpp"

namespace {

using candle_graph::ExecutionStep;
using candle_graph::MemoryCategory;
using candle_graph::SpanId;
using candle_graph::TraceSession;

constexpr std::size_t kBatch = 8, kIn = 16, kHidden = 32, kOut = 4;
constexpr float kLearningRate = 0.05f;

// A dense row-major matrix with the shape metadata the trace wants.
struct Matrix {
  std::string name;
  std::size_t rows = 0, cols = 0;
  std::vector<float> v;
  Matrix(std::string n, std::size_t r, std::size_t c)
      : name(std::move(n)), rows(r), cols(c), v(r * c) {}
  float& at(std::size_t i, std::size_t j) { return v[i * cols + j]; }
  float at(std::size_t i, std::size_t j) const { return v[i * cols + j]; }
  std::array<std::uint64_t, 2> shape() const { return {rows, cols}; }
  std::uint64_t bytes() const { return v.size() * sizeof(float); }
};

struct Mlp {
  Matrix w1{"w1", kIn, kHidden}, b1{"b1", 1, kHidden}, w2{"w2", kHidden, kOut}, b2{"b2", 1, kOut};
  explicit Mlp(std::mt19937& rng) {
    std::normal_distribution<float> n(0.0f, 0.3f);
    for (float& x : w1.v) x = n(rng);
    for (float& x : w2.v) x = n(rng);
  }
};

// The probe: everything instrumentation-related, a no-op when no session is open. Keeping it in
// one place is what lets the training code below stay readable.
class Probe {
 public:
  explicit Probe(TraceSession* session) : session_(session) {}
  bool on() const { return session_ != nullptr; }
  TraceSession& session() { return *session_; }

  // Runs `kernel`, timing it, and records it as an op producing `out` inside `span`.
  template <typename Kernel>
  void op(SpanId span, std::string_view op_name, std::initializer_list<const Matrix*> inputs,
          const Matrix& out, Kernel&& kernel) {
    if (!on()) {
      kernel();
      return;
    }
    const std::uint64_t start = session_->elapsed_ns();
    kernel();
    const std::uint64_t duration = session_->elapsed_ns() - start;
    std::array<std::string_view, 4> names{};
    std::uint64_t input_bytes = 0;
    std::size_t n = 0;
    for (const Matrix* m : inputs) {
      names[n++] = m->name;
      input_bytes += m->bytes();
    }
    const auto shape = out.shape();
    session_->record_op(span, {.op_name = op_name,
                               .inputs = std::span(names.data(), n),
                               .output = out.name,
                               .shape = shape,
                               .dtype = "f32",
                               .device = "cpu",
                               .duration_ns = duration,
                               .timestamp_ns = start,
                               .input_storage_bytes = input_bytes});
  }
  void tensor(SpanId span, const Matrix& m, bool requires_grad, MemoryCategory category) {
    if (!on()) return;
    const auto shape = m.shape();
    session_->record_tensor(span, {.tensor_id = m.name,
                                   .shape = shape,
                                   .dtype = "f32",
                                   .device = "cpu",
                                   .requires_grad = requires_grad,
                                   .category = category});
  }
  void alloc(SpanId span, const Matrix& m, MemoryCategory category, std::string_view op_name = {}) {
    memory(span, m, category, op_name, true);
  }
  void free(SpanId span, const Matrix& m, MemoryCategory category) {
    memory(span, m, category, {}, false);
  }

 private:
  void memory(SpanId span, const Matrix& m, MemoryCategory category, std::string_view op_name,
              bool alloc) {
    if (!on()) return;
    const auto shape = m.shape();
    const candle_graph::MemoryRecord r{
        .tensor_id = m.name,
        .device = "cpu",
        .bytes = m.bytes(),
        .dtype = "f32",
        .category = category,
        .op_name = op_name.empty() ? std::nullopt : std::optional<std::string_view>(op_name),
        .shape = shape};
    alloc ? session_->record_memory_alloc(span, r) : session_->record_memory_free(span, r);
  }
  TraceSession* session_;
};

// A span that exists only when probing.
std::optional<candle_graph::SpanGuard> step_span(Probe& p, std::string_view name,
                                                 ExecutionStep step) {
  if (!p.on()) return std::nullopt;
  return p.session().begin_step_span(name, step);
}

double l2(const Matrix& m) {
  double s = 0;
  for (float x : m.v) s += double(x) * x;
  return std::sqrt(s);
}

// One training update; returns the loss. `label` prefixes the span names.
float train_step(Mlp& net, const Matrix& x, const Matrix& target, Probe& p,
                 const std::string& label) {
  SpanId fwd_id{}, bwd_id{};
  Matrix h("h", kBatch, kHidden), y("y", kBatch, kOut);
  float loss = 0;

  {  // ---- forward: h = relu(x·w1 + b1), y = h·w2 + b2, loss = mean((y − t)²)
    auto span = step_span(p, label + "/forward", ExecutionStep::forward);
    const SpanId s = span ? span->id() : SpanId{};
    fwd_id = s;
    p.tensor(s, x, false, MemoryCategory::activation);
    p.alloc(s, h, MemoryCategory::activation, "linear_relu");
    p.op(s, "linear_relu", {&x, &net.w1, &net.b1}, h, [&] {
      for (std::size_t i = 0; i < kBatch; ++i)
        for (std::size_t j = 0; j < kHidden; ++j) {
          float acc = net.b1.at(0, j);
          for (std::size_t k = 0; k < kIn; ++k) acc += x.at(i, k) * net.w1.at(k, j);
          h.at(i, j) = acc > 0 ? acc : 0;
        }
    });
    p.alloc(s, y, MemoryCategory::activation, "linear");
    p.op(s, "linear", {&h, &net.w2, &net.b2}, y, [&] {
      for (std::size_t i = 0; i < kBatch; ++i)
        for (std::size_t j = 0; j < kOut; ++j) {
          float acc = net.b2.at(0, j);
          for (std::size_t k = 0; k < kHidden; ++k) acc += h.at(i, k) * net.w2.at(k, j);
          y.at(i, j) = acc;
        }
    });
    Matrix l("loss", 1, 1);
    p.op(s, "mse_loss", {&y, &target}, l, [&] {
      double sum = 0;
      for (std::size_t i = 0; i < y.v.size(); ++i)
        sum += double(y.v[i] - target.v[i]) * (y.v[i] - target.v[i]);
      l.v[0] = static_cast<float>(sum / y.v.size());
    });
    loss = l.v[0];
    p.tensor(s, y, false, MemoryCategory::activation);
  }

  Matrix dy("grad_y", kBatch, kOut), dh("grad_h", kBatch, kHidden);
  Matrix dw1("grad_w1", kIn, kHidden), db1("grad_b1", 1, kHidden);
  Matrix dw2("grad_w2", kHidden, kOut), db2("grad_b2", 1, kOut);
  {  // ---- backward: gradients of the mean squared error through both layers
    auto span = step_span(p, label + "/backward", ExecutionStep::backward);
    const SpanId s = span ? span->id() : SpanId{};
    bwd_id = s;
    for (const Matrix* g : {&dy, &dw2, &db2, &dh, &dw1, &db1})
      p.alloc(s, *g, MemoryCategory::gradient);
    p.op(s, "mse_loss_backward", {&y, &target}, dy, [&] {
      const float scale = 2.0f / static_cast<float>(y.v.size());
      for (std::size_t i = 0; i < y.v.size(); ++i) dy.v[i] = scale * (y.v[i] - target.v[i]);
    });
    p.op(s, "linear_backward_weight", {&h, &dy}, dw2, [&] {
      for (std::size_t k = 0; k < kHidden; ++k)
        for (std::size_t j = 0; j < kOut; ++j) {
          float acc = 0;
          for (std::size_t i = 0; i < kBatch; ++i) acc += h.at(i, k) * dy.at(i, j);
          dw2.at(k, j) = acc;
        }
      for (std::size_t j = 0; j < kOut; ++j) {
        float acc = 0;
        for (std::size_t i = 0; i < kBatch; ++i) acc += dy.at(i, j);
        db2.at(0, j) = acc;
      }
    });
    p.op(s, "linear_backward_input", {&dy, &net.w2, &h}, dh, [&] {
      for (std::size_t i = 0; i < kBatch; ++i)
        for (std::size_t k = 0; k < kHidden; ++k) {
          float acc = 0;
          for (std::size_t j = 0; j < kOut; ++j) acc += dy.at(i, j) * net.w2.at(k, j);
          dh.at(i, k) = h.at(i, k) > 0 ? acc : 0;  // ReLU gate
        }
    });
    p.free(s, y, MemoryCategory::activation);  // y is no longer needed once dy exists
    p.op(s, "linear_relu_backward_weight", {&x, &dh}, dw1, [&] {
      for (std::size_t k = 0; k < kIn; ++k)
        for (std::size_t j = 0; j < kHidden; ++j) {
          float acc = 0;
          for (std::size_t i = 0; i < kBatch; ++i) acc += x.at(i, k) * dh.at(i, j);
          dw1.at(k, j) = acc;
        }
      for (std::size_t j = 0; j < kHidden; ++j) {
        float acc = 0;
        for (std::size_t i = 0; i < kBatch; ++i) acc += dh.at(i, j);
        db1.at(0, j) = acc;
      }
    });
    p.free(s, h, MemoryCategory::activation);
    p.free(s, dh, MemoryCategory::gradient);
    p.free(s, dy, MemoryCategory::gradient);
    if (p.on()) {
      for (const auto& [param, grad] : {std::pair{&net.w1, &dw1}, std::pair{&net.b1, &db1},
                                        std::pair{&net.w2, &dw2}, std::pair{&net.b2, &db2}}) {
        const double norm = l2(*grad);
        p.session().record_gradient("mlp", param->name,
                                    !std::isfinite(norm) ? candle_graph::GradientState::non_finite
                                    : norm == 0          ? candle_graph::GradientState::zero
                                                         : candle_graph::GradientState::present,
                                    norm);
      }
    }
  }

  {  // ---- optimizer: plain SGD, then the gradients are released (zero_grad set_to_none)
    auto span = step_span(p, label + "/optimizer", ExecutionStep::optimizer);
    const SpanId s = span ? span->id() : SpanId{};
    for (const auto& [param, grad] : {std::pair{&net.w1, &dw1}, std::pair{&net.b1, &db1},
                                      std::pair{&net.w2, &dw2}, std::pair{&net.b2, &db2}}) {
      // Captured by name: clang 14 (the sanitizer and fuzz builds) cannot capture a structured
      // binding, which C++20 allows.
      p.op(s, "sgd_update", {param, grad}, *param, [param = param, grad = grad] {
        for (std::size_t i = 0; i < param->v.size(); ++i) param->v[i] -= kLearningRate * grad->v[i];
      });
      p.tensor(s, *param, true, MemoryCategory::parameter);
      p.free(s, *grad, MemoryCategory::gradient);
    }
  }
  if (p.on()) p.session().record_edge(fwd_id, bwd_id, 0);  // forward hands over to backward
  return loss;
}

// cudaMemGetInfo's CPU counterpart: used and free physical memory of this machine.
void record_host_memory(TraceSession& session) {
  struct sysinfo info {};
  if (::sysinfo(&info) != 0) return;
  const std::uint64_t unit = info.mem_unit;
  session.record_device_memory("cpu", (info.totalram - info.freeram) * unit, info.freeram * unit);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string trace_path = argc > 1 ? argv[1] : "manual_probe.jsonl";
  std::mt19937 rng(7);
  Mlp net(rng);
  Matrix x("x", kBatch, kIn), target("target", kBatch, kOut);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (float& v : x.v) v = u(rng);
  for (std::size_t i = 0; i < kBatch; ++i)
    for (std::size_t j = 0; j < kOut; ++j) target.at(i, j) = x.at(i, j) - 0.5f * x.at(i, j + kOut);

  try {
    candle_graph::CaptureSelector selector = candle_graph::CaptureSelector::at_step(3);
    for (int update = 0; update < 5; ++update) {
      if (!selector.tick()) {
        Probe off(nullptr);
        std::printf("update %llu: loss %.5f\n", static_cast<unsigned long long>(selector.step()),
                    train_step(net, x, target, off, ""));
        continue;
      }
      // ---- the five lines a training loop needs (plus the probe calls inside the step) ----
      TraceSession session(trace_path, candle_graph::ProfileRun::training(
                                           "manual_probe::train_step", selector.step(), "cpu")
                                           .tag("batch", std::to_string(kBatch))
                                           .tag("precision", "f32")
                                           .tag("model", "mlp-16-32-4"));
      char label[64];
      std::snprintf(label, sizeof label, "manual_probe/update-%012llu",
                    static_cast<unsigned long long>(selector.step()));
      float loss = 0;
      {
        candle_graph::SpanGuard update_span = session.begin_measurement(label);
        Probe probe(&session);
        for (const Matrix* param : {&net.w1, &net.b1, &net.w2, &net.b2})
          probe.tensor(update_span.id(), *param, true, MemoryCategory::parameter);
        loss = train_step(net, x, target, probe, label);
        record_host_memory(session);
      }
      const auto written = session.finish();
      std::printf("update %llu: loss %.5f (captured to %s)\n",
                  static_cast<unsigned long long>(selector.step()), loss, written.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "manual_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
