#include "synth/synthetic_trace.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "candle_graph/trace.hpp"
#include "output/atomic_file.hpp"

namespace candle_graph::synth {
namespace {

// Emits events with a running clock. Spans are opened with their start time and closed with a
// duration covering their children, so every hierarchy rule of trace6.md §6 holds by construction.
class Generator {
 public:
  Generator(const SynthOptions& o, const std::function<void(std::string_view)>& sink)
      : opt_(o),
        sink_(sink),
        rng_(o.seed),
        noise_(o.noise_seed),
        retimed_(o.time_scale != 1.0 || o.jitter_percent != 0.0),
        sigma_(o.jitter_percent / 100.0) {
    if (!std::isfinite(o.time_scale) || o.time_scale <= 0 || !std::isfinite(o.jitter_percent) ||
        o.jitter_percent < 0)
      throw Error("synth: the time scale must be > 0 and the jitter >= 0");
    if (sigma_ > 0) run_factor_ = std::exp(sigma_ * normal_(noise_));
  }

  SynthStats run();

 private:
  std::uint64_t rand(std::uint64_t lo, std::uint64_t hi) { return lo + rng_() % (hi - lo + 1); }
  // A drawn duration after --time-scale and --jitter. The noise has its own generator, so the
  // structure and the draws of `rng_` stay those of the seed; untouched when neither is set (the
  // default output stays byte-identical).
  std::uint64_t timed(std::uint64_t raw) {
    if (!retimed_) return raw;
    double f = opt_.time_scale * run_factor_;
    if (sigma_ > 0) f *= std::exp(sigma_ * normal_(noise_));
    return std::max<std::uint64_t>(
        1, static_cast<std::uint64_t>(std::llround(static_cast<double>(raw) * f)));
  }
  void emit(const TraceEvent& e) {
    append_event_json(buf_, e);
    buf_.push_back('\n');
    ++stats_.events;
    if (buf_.size() >= (1u << 20)) flush();
  }
  void flush() {
    stats_.bytes += buf_.size();
    sink_(buf_);
    buf_.clear();
  }
  std::string span_id() { return "s" + std::to_string(++span_counter_); }
  std::string tensor_id() { return "t" + std::to_string(++tensor_counter_); }

  struct Open {
    std::string id;
    std::uint64_t start;
  };
  Open open(const std::string& name, const std::optional<std::string>& parent, SpanKind kind,
            bool measured, std::optional<ExecutionStep> step) {
    Open o{span_id(), clock_};
    std::optional<std::string_view> p;
    if (parent) p = *parent;
    emit(SpanStartEvent{o.id, p, name, o.start, kind, measured, step});
    clock_ += timed(rand(200, 2000));
    return o;
  }
  void close(const Open& o) {
    clock_ += timed(rand(200, 2000));
    emit(SpanEndEvent{o.id, clock_ - o.start});
  }
  // One timed op; returns its output tensor id (empty when the op has none).
  std::string op(const std::string& span, std::string_view name, std::vector<std::string> inputs,
                 std::vector<std::uint64_t> shape, std::string_view dtype, bool with_output,
                 std::optional<MemoryCategory> alloc_category) {
    const std::uint64_t ts = clock_;
    const std::uint64_t dur = timed(rand(5'000, 400'000));
    clock_ += dur;
    std::string out = with_output ? tensor_id() : std::string();
    std::vector<std::string_view> in(inputs.begin(), inputs.end());
    OpEvent e;
    e.span_id = span;
    e.op_name = name;
    e.inputs = in;
    if (with_output) e.output = out;
    e.shape = shape;
    e.dtype = dtype;
    e.device = "cpu";
    e.duration_ns = dur;
    e.timestamp_ns = ts;
    e.storage_bytes = storage_bytes(shape, dtype);
    e.input_storage_bytes = *e.storage_bytes * inputs.size();
    emit(e);
    ++stats_.ops;
    if (with_output && alloc_category) {
      memory(span, out, name, *e.storage_bytes, MemoryAction::alloc, shape, dtype, *alloc_category);
    }
    clock_ += timed(rand(50, 500));
    return out;
  }
  void memory(const std::string& span, const std::string& tensor,
              std::optional<std::string_view> op, std::uint64_t bytes, MemoryAction action,
              const std::vector<std::uint64_t>& shape, std::string_view dtype,
              MemoryCategory category) {
    MemoryEvent m;
    m.timestamp_ns = clock_;
    m.tensor_id = tensor;
    m.span_id = span;
    m.op_name = op;
    m.device = "cpu";
    m.bytes = bytes;
    m.action = action;
    m.shape = shape;
    m.dtype = dtype;
    m.category = category;
    emit(m);
  }
  void device_memory() {
    const std::uint64_t capacity = 64ull << 30;
    const std::uint64_t used = (2ull << 30) + live_bytes_;
    emit(DeviceMemoryEvent{clock_, "cpu", used, capacity - used, std::nullopt});
  }

  struct Activation {
    std::string tensor;
    std::uint64_t bytes;
    std::vector<std::uint64_t> shape;
    std::string_view dtype = "f32";
  };

  const SynthOptions& opt_;
  const std::function<void(std::string_view)>& sink_;
  std::mt19937_64 rng_;
  std::mt19937_64 noise_;
  std::normal_distribution<double> normal_;
  bool retimed_;
  double sigma_;
  double run_factor_ = 1.0;
  std::string buf_;
  SynthStats stats_;
  std::uint64_t clock_ = 0;
  std::uint64_t span_counter_ = 0;
  std::uint64_t tensor_counter_ = 0;
  std::uint64_t live_bytes_ = 0;
};

constexpr std::string_view kForwardOps[] = {"matmul",     "add",     "gelu",
                                            "layer_norm", "dropout", "softmax"};
constexpr std::string_view kBackwardOps[] = {"matmul_backward", "gelu_backward", "add_backward",
                                             "layer_norm_backward"};

SynthStats Generator::run() {
  const std::uint64_t layers = std::max<std::uint64_t>(opt_.layers, 1);
  const std::uint64_t k = std::max<std::uint64_t>(opt_.ops_per_span, 1);
  const std::uint64_t batch = 8, hidden = 64 * (1 + opt_.seed % 4);
  const std::string entry = "synth::train::update";
  const std::string update = "synth/update-000000000003";

  std::vector<Tag> tags = {
      {"generator", "candle-graph synth"}, {"layers", ""}, {"ops_per_span", ""}, {"seed", ""}};
  const std::string layers_s = std::to_string(layers), k_s = std::to_string(k),
                    seed_s = std::to_string(opt_.seed);
  tags[1].value = layers_s;
  tags[2].value = k_s;
  tags[3].value = seed_s;
  for (const auto& tag : opt_.tags) {
    const std::string& k = tag.first;
    if (std::any_of(tags.begin(), tags.end(), [&](const Tag& t) { return t.key == k; }))
      throw Error("synth: tag `" + k + "` given twice (or it is one the generator writes)");
    tags.push_back({k, tag.second});
  }
  std::sort(tags.begin(), tags.end(), [](const Tag& a, const Tag& b) { return a.key < b.key; });
  MetaEvent meta;
  meta.schema = kTraceSchema;
  const std::string run_id = opt_.run_id.empty() ? "run-synth-" + seed_s : opt_.run_id;
  const std::string correlation = entry + "/update-3";
  meta.run = TraceRunMeta{run_id,
                          correlation,
                          entry,
                          ExecutionPhase::train,
                          "2026-11-29T00:00:00.000Z",
                          3,
                          2,
                          "cpu",
                          false,
                          TimingMode::host,
                          tags,
                          std::nullopt,
                          {}};
  emit(meta);

  Open root = open(entry, std::nullopt, SpanKind::function, false, std::nullopt);
  Open region = open(update, root.id, SpanKind::function, true, std::nullopt);
  device_memory();

  // Forward: one module span per layer, activations allocated.
  std::vector<std::vector<Activation>> saved(layers);
  Open fwd =
      open(update + "/forward", region.id, SpanKind::function, false, ExecutionStep::forward);
  std::string x = "input";
  emit(TensorEvent{fwd.id, x, std::vector<std::uint64_t>{batch, hidden}, "f32", "cpu", false,
                   batch * hidden * 4, MemoryCategory::activation});
  for (std::uint64_t l = 0; l < layers; ++l) {
    const std::string lname = "layer" + std::to_string(l);
    Open m = open(update + "/forward/" + lname, fwd.id, SpanKind::module, false, std::nullopt);
    const std::string w = lname + ".weight";
    emit(TensorEvent{m.id, w, std::vector<std::uint64_t>{hidden, hidden}, "f32", "cpu", true,
                     hidden * hidden * 4, MemoryCategory::parameter});
    for (std::uint64_t j = 0; j < k; ++j) {
      const std::string_view name = kForwardOps[(l + j) % std::size(kForwardOps)];
      std::vector<std::string> inputs = {x};
      if (name == "matmul" || name == "add") inputs.push_back(w);
      std::vector<std::uint64_t> shape = {batch, hidden};
      const std::string_view dtype = j % 5 == 4 ? "bf16" : "f32";
      x = op(m.id, name, inputs, shape, dtype, true, MemoryCategory::activation);
      const std::uint64_t bytes = storage_bytes(shape, dtype);
      live_bytes_ += bytes;
      saved[l].push_back({x, bytes, shape, dtype});
    }
    close(m);
  }
  close(fwd);

  // Backward: layers in reverse, activations freed, gradients allocated.
  Open bwd =
      open(update + "/backward", region.id, SpanKind::function, false, ExecutionStep::backward);
  std::vector<Activation> grads;
  for (std::uint64_t r = 0; r < layers; ++r) {
    const std::uint64_t l = layers - 1 - r;
    const std::string lname = "layer" + std::to_string(l);
    Open m = open(update + "/backward/" + lname, bwd.id, SpanKind::module, false, std::nullopt);
    std::string g = x;
    for (std::uint64_t j = 0; j < k; ++j) {
      const std::string_view name = kBackwardOps[(l + j) % std::size(kBackwardOps)];
      g = op(m.id, name, {g, saved[l][k - 1 - j].tensor}, {batch, hidden}, "f32", true,
             std::nullopt);
    }
    const std::string gw = "grad." + lname + ".weight";
    const std::vector<std::uint64_t> wshape = {hidden, hidden};
    memory(m.id, gw, std::nullopt, hidden * hidden * 4, MemoryAction::alloc, wshape, "f32",
           MemoryCategory::gradient);
    live_bytes_ += hidden * hidden * 4;
    grads.push_back({gw, hidden * hidden * 4, wshape});
    for (const Activation& a : saved[l]) {
      memory(m.id, a.tensor, std::nullopt, a.bytes, MemoryAction::free, a.shape, a.dtype,
             MemoryCategory::activation);
      live_bytes_ -= a.bytes;
    }
    close(m);
  }
  close(bwd);

  // Optimizer: one in-place update per layer (no output), gradients freed; gradient facts.
  Open optim =
      open(update + "/optimizer", region.id, SpanKind::function, false, ExecutionStep::optimizer);
  for (std::uint64_t l = 0; l < layers; ++l) {
    const std::string lname = "layer" + std::to_string(l);
    const Activation& g = grads[layers - 1 - l];
    op(optim.id, "sgd_update", {lname + ".weight", g.tensor}, g.shape, "f32", false, std::nullopt);
    memory(optim.id, g.tensor, std::nullopt, g.bytes, MemoryAction::free, g.shape, "f32",
           MemoryCategory::gradient);
    live_bytes_ -= g.bytes;
  }
  for (std::uint64_t l = 0; l < layers; ++l) {
    const std::string id = "gradient-" + std::to_string(l + 1);
    const std::string key = "layer" + std::to_string(l) + ".weight";
    // Every state appears: most present, a few zero / missing / non-finite.
    GradientState state = GradientState::present;
    if (l % 8 == 5) state = GradientState::zero;
    if (l % 8 == 6) state = GradientState::missing;
    if (l % 8 == 7) state = GradientState::non_finite;
    std::optional<double> norm;
    if (state == GradientState::present) norm = static_cast<double>(rand(1, 100000)) / 1000.0;
    if (state == GradientState::zero) norm = 0.0;
    emit(GradientEvent{id, "model", key, state, norm});
  }
  close(optim);
  device_memory();
  close(region);
  close(root);
  flush();
  return stats_;
}

}  // namespace

SynthStats generate(const SynthOptions& options,
                    const std::function<void(std::string_view)>& sink) {
  return Generator(options, sink).run();
}

SynthStats generate_file(const SynthOptions& options, const std::filesystem::path& path) {
  output::AtomicFile file(path);
  const SynthStats stats = generate(options, [&](std::string_view bytes) { file.write(bytes); });
  file.commit();
  return stats;
}

}  // namespace candle_graph::synth
