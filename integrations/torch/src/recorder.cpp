// RecordFunction callbacks and the CPU-allocator memory reporter of a capture: ops and
// memory events. Compiled with NDEBUG whatever the build type: RecordFunction::inputs() asserts on
// a debug-only member the library never sets (libtorch.md §5.1).
//
// Per op the callbacks only append plain records to CaptureState (interned names, flat input
// and shape arrays); they never dispatch a tensor op (re-entrancy, libtorch.md §5.9) and never
// throw (RecordFunction swallows exceptions and then calls the end callback anyway, libtorch.md
// §5.1).
#include "recorder.hpp"

#include "instrument/clock.hpp"

#include <ATen/core/Tensor.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/zeros.h>
#include <ATen/record_function.h>
#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <c10/util/intrusive_ptr.h>
#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/profiler/orchestration/observer.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

namespace candle_graph::libtorch::detail {
namespace {

namespace prof = ::torch::profiler::impl;

// The capture recording on this thread (callbacks are thread-local, libtorch.md §5.3).
thread_local CaptureState* tl_state = nullptr;

// The session's own clock (TSC where invariant): op and memory timestamps must be on the same
// scale as the span edges the session writes, and a TSC read is cheaper than steady_clock.
using ::candle_graph::detail::now_tick;

// ---- identity ----------------------------------------------------------------------------------

c10::StorageImpl* storage_of(const void* p) {
  return static_cast<c10::StorageImpl*>(const_cast<void*>(p));
}

void release_weak(Identity& id) noexcept {
  if (id.storage != nullptr) c10::raw::weak_intrusive_ptr::decref(storage_of(id.storage));
  id.storage = nullptr;
}

bool storage_gone(const Identity& id) {
  return id.storage != nullptr &&
         c10::raw::weak_intrusive_ptr::use_count(storage_of(id.storage)) == 0;
}

// A block that existed before the capture disappeared: counted, never written (an unpaired free
// would make the trace untrusted, trace6.md §6 check 12).
void count_pre_capture_free(CaptureState& s, std::uint64_t bytes) {
  if (!s.memory) return;  // without the reporter nothing can be said about frees
  ++s.pre_capture_frees;
  s.pre_capture_free_bytes += bytes;
}

// ---- labels ------------------------------------------------------------------------------------

// trace6.md §4.12 labels (candle style) for the dtypes that have one, LibTorch's name otherwise.
std::string dtype_label(c10::ScalarType t) {
  switch (t) {
    case c10::ScalarType::Float:
      return "f32";
    case c10::ScalarType::Double:
      return "f64";
    case c10::ScalarType::Half:
      return "f16";
    case c10::ScalarType::BFloat16:
      return "bf16";
    case c10::ScalarType::Long:
      return "i64";
    case c10::ScalarType::Int:
      return "i32";
    case c10::ScalarType::Short:
      return "i16";
    case c10::ScalarType::Char:
      return "i8";
    case c10::ScalarType::Byte:
      return "u8";
    case c10::ScalarType::Bool:
      return "bool";
    default: {
      std::string s = c10::toString(t);
      for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return s;
    }
  }
}

[[gnu::noinline]] std::uint8_t other_device_index(CaptureState& s, c10::Device d) {
  const std::string label = d.str();
  for (std::size_t i = 0; i < s.device_labels.size(); ++i)
    if (s.device_labels[i] == label) return static_cast<std::uint8_t>(i);
  s.device_labels.push_back(label);
  return static_cast<std::uint8_t>(s.device_labels.size() - 1);
}

// Out of line only for a device other than the CPU.
inline std::uint8_t device_index(CaptureState& s, c10::Device d) {
  return d.is_cpu() ? 0 : other_device_index(s, d);  // device_labels[0] is "cpu"
}

bool starts_with(const char* s, std::string_view prefix) {
  return std::strncmp(s, prefix.data(), prefix.size()) == 0;
}

// Interns an op name: by pointer first (schema op names live in the registry), confirmed by
// content in case a pointer was reused. Autograd node and engine records own their names
// (libtorch.md §5.7): a fresh pointer each time, so they are looked up by content and never cached
// by pointer (that cache would grow, and allocate, once per backward op).
[[gnu::noinline]] std::uint32_t intern_by_content(CaptureState& s, const char* name,
                                                  at::RecordScope scope, std::uint32_t* cached) {
  const std::string_view view(name);
  auto it = s.name_index.find(view);
  std::uint32_t index;
  if (it != s.name_index.end()) {
    index = it->second;
  } else {
    index = static_cast<std::uint32_t>(s.names.size());
    s.names.emplace_back(view);
    s.name_index.emplace(std::string_view(s.names.back()), index);
  }
  if (scope == at::RecordScope::FUNCTION && !starts_with(name, "autograd::")) {
    if (cached != nullptr)
      *cached = index;  // the pointer now names another string
    else
      s.name_by_pointer.insert(name, index);
  }
  return index;
}

inline std::uint32_t intern(CaptureState& s, const char* name, at::RecordScope scope) {
  if (name == nullptr) [[unlikely]]
    name = "";
  std::uint32_t* cached = s.name_by_pointer.find(name);
  if (cached != nullptr && std::strcmp(s.names[*cached].c_str(), name) == 0) [[likely]]
    return *cached;
  return intern_by_content(s, name, scope, cached);
}

// ---- automatic backward span ---------------------------------------------------

// Autograd nodes run as BACKWARD_FUNCTION records wrapped in FUNCTION records named
// `autograd::engine::evaluate_function: X` (libtorch.md §5.5); either at top level means backward()
// is running.
bool is_backward_record(const at::RecordFunction& fn, const char* name) {
  return fn.scope() == at::RecordScope::BACKWARD_FUNCTION ||
         (name[0] == 'a' && name[1] == 'u' &&  // most names are aten::…: skip the strncmp
          starts_with(name, "autograd::engine::evaluate_function"));
}

// `loss.backward()` first makes the implicit gradient with `aten::ones_like` (no autograd
// record is open yet), then starts the engine. When the last top-level op before the engine's
// first record is that ones_like, in the span still open, it belongs to backward(): the index
// of that op, else -1.
std::int32_t implicit_gradient_op(const CaptureState& s, SpanRef current) {
  const std::int32_t k = s.last_top_level;
  if (k < 0) return -1;
  const OpSample& op = s.ops[static_cast<std::size_t>(k)];
  if (op.end_tick == 0 || op.span.number != current.number) return -1;
  return s.names[op.name] == "aten::ones_like" ? k : -1;
}

void begin_auto_backward(CaptureState& s, SpanRef current) {
  if (s.auto_backward || s.session == nullptr) return;
  const std::string name = s.measurement_name + "/backward";
  const std::int32_t seed = implicit_gradient_op(s, current);
  if (seed >= 0) {
    // The span starts with the ones_like, which (with its nested ops and their memory events)
    // moves into it: ops inside backward() land in the backward span.
    const OpSample& first = s.ops[static_cast<std::size_t>(seed)];
    try {
      s.auto_backward.emplace(s.session->begin_step_span_at(name, ExecutionStep::backward,
                                                            s.timestamp_ns(first.start_tick)));
    } catch (const InstrumentError&) {
      // e.g. a clock step back: the span starts now and the op stays where it ran
    }
    if (s.auto_backward) {
      const SpanRef span{s.auto_backward->id().number(),
                         static_cast<std::int8_t>(ExecutionStep::backward)};
      for (std::size_t i = static_cast<std::size_t>(seed); i < s.ops.size(); ++i)
        s.ops[i].span = span;
      for (auto m = s.memory_samples.rbegin();
           m != s.memory_samples.rend() && m->tick >= first.start_tick; ++m)
        if (m->op >= seed) m->span = span;
    }
  }
  if (!s.auto_backward)
    s.auto_backward.emplace(s.session->begin_step_span(name, ExecutionStep::backward));
  try {
    // Called from the start callback of an engine record, so a graph task is running here.
    const std::uint64_t serial = s.serial;
    ::torch::autograd::Engine::get_default_engine().queue_callback(
        [serial] { end_auto_backward_of(serial); });
  } catch (...) {
    // no graph task (a backward node run by hand): the next top-level op or span ends it
  }
}

// ---- callbacks ---------------------------------------------------------------------------------

// The span of a top-level record. Only top-level records can change it: nothing runs user code
// inside an op. Out of line: the nested records, the majority, skip this code entirely.
[[gnu::noinline]] SpanRef top_level_span(CaptureState& s, const at::RecordFunction& fn,
                                         const char* name) {
  constexpr auto kBackward = static_cast<std::int8_t>(ExecutionStep::backward);
  const bool backward = is_backward_record(fn, name ? name : "");
  if (!backward && s.auto_backward) end_auto_backward(s);
  SpanRef span = s.current_span();
  if (backward && span.step != kBackward) {
    begin_auto_backward(s, span);
    if (s.auto_backward) span = SpanRef{s.auto_backward->id().number(), kBackward};
  }
  return span;
}

// The callbacks run between LibTorch's own code for every op, which evicts theirs from the
// instruction cache each time: they are kept small (rare paths out of line, [[gnu::cold]] or
// [[gnu::noinline]]) and grouped ([[gnu::hot]] puts them in .text.hot, next to each other).
[[gnu::hot]] std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  CaptureState* st = tl_state;
  if (st == nullptr) return nullptr;
  CaptureState& s = *st;
  if (s.paused) [[unlikely]] {
    s.open_ops.push_back(-1);  // keeps the stack balanced for on_end
    return nullptr;
  }
  const auto index = static_cast<std::int32_t>(s.ops.size());
  try {
    const std::int32_t parent = s.open_ops.empty() ? -1 : s.open_ops.back();
    const char* name = fn.name();
    const SpanRef span =
        parent < 0 ? top_level_span(s, fn, name) : s.ops[static_cast<std::size_t>(parent)].span;
    const std::uint32_t interned = intern(s, name, fn.scope());
    const auto inputs_begin = static_cast<std::uint32_t>(s.inputs.size());
    std::uint64_t input_bytes = 0;
    for (const c10::IValue& v : fn.inputs()) {
      if (!v.isTensor()) continue;
      const at::Tensor& t = v.toTensor();
      if (!t.defined()) continue;
      s.inputs.push_back(identify(s, t));
      input_bytes += static_cast<std::uint64_t>(t.numel()) * t.element_size();
    }
    // Built in place: a record assembled on the stack and copied in was read back with wide
    // loads over narrower stores (store-forwarding stalls, seen with perf annotate).
    OpSample& op = s.ops.emplace_back();
    op.name = interned;
    op.parent = parent;
    op.span = span;
    op.inputs_begin = inputs_begin;
    op.inputs_count = static_cast<std::uint32_t>(s.inputs.size()) - inputs_begin;
    op.input_bytes = input_bytes;
    s.open_ops.push_back(index);
    if (parent < 0) s.last_top_level = index;
    op.start_tick = now_tick();  // last: the bookkeeping above is not the op's time
  } catch (...) {
    if (s.ops.size() > static_cast<std::size_t>(index))
      s.ops.resize(static_cast<std::size_t>(index));
    s.open_ops.push_back(-1);
  }
  return nullptr;  // state lives in CaptureState: no heap allocation per op
}

[[gnu::hot]] void on_end(const at::RecordFunction& fn, at::ObserverContext*) {
  const std::int64_t end = now_tick();
  CaptureState* st = tl_state;
  if (st == nullptr || st->open_ops.empty()) return;
  CaptureState& s = *st;
  const std::int32_t index = s.open_ops.back();
  s.open_ops.pop_back();
  if (index < 0) return;
  try {
    OpSample& op = s.ops[static_cast<std::size_t>(index)];
    op.end_tick = end;
    if (op.parent >= 0)
      s.ops[static_cast<std::size_t>(op.parent)].child_ticks += end - op.start_tick;
    for (const c10::IValue& v : fn.outputs()) {
      if (!v.isTensor()) continue;
      const at::Tensor& t = v.toTensor();
      if (!t.defined()) continue;
      TensorKey key = identify(s, t);
      // A view (or an op returning its input unchanged) gets its own id so that its data edge
      // is not a self-loop.
      for (std::uint32_t i = 0; i < op.inputs_count; ++i)
        if (s.inputs[op.inputs_begin + i] == key) {
          key.view_op = static_cast<std::uint32_t>(index) + 1;
          break;
        }
      op.has_output = true;
      op.output = key;
      op.shape_begin = static_cast<std::uint32_t>(s.shapes.size());
      for (const std::int64_t d : t.sizes()) s.shapes.push_back(static_cast<std::uint64_t>(d));
      op.shape_len = static_cast<std::uint32_t>(s.shapes.size()) - op.shape_begin;
      op.dtype = static_cast<std::uint8_t>(t.scalar_type());
      op.device = device_index(s, t.device());
      op.output_bytes = static_cast<std::uint64_t>(t.numel()) * t.element_size();
      SerialInfo& info = s.serials[key.serial];
      if (key.version == 0 && key.view_op == 0 && info.producer < 0) info.producer = index;
      break;  // the first tensor output is the op's output (trace6.md §4.5 has one)
    }
  } catch (...) {
    // metadata of an exotic tensor could not be read: the op keeps its name and timing
  }
}

// ---- memory reporter (libtorch.md §3c, §5.2)
// -----------------------------------------------------------

// Derived from ProfilerStateBase so that LibTorch code reading the PROFILER_STATE slot sees a
// well-typed, disabled profiler (libtorch.md §5.2).
struct MemoryReporter final : prof::ProfilerStateBase {
  explicit MemoryReporter(CaptureState* s)
      : prof::ProfilerStateBase(prof::ProfilerConfig(prof::ProfilerState::Disabled)), state(s) {}
  bool memoryProfilingEnabled() const override { return true; }
  prof::ActiveProfilerType profilerType() override { return prof::ActiveProfilerType::NONE; }

  [[gnu::hot]] void reportMemoryUsage(void* ptr, std::int64_t bytes, std::int64_t, std::int64_t,
                                      c10::Device device) override {
    // Threads that inherited the slot through at::ThreadLocalState are not recorded: the op
    // stack they would be attributed to is the training thread's.
    if (tl_state != state || ptr == nullptr || bytes == 0) return;
    try {
      bytes > 0 ? on_alloc(ptr, bytes, device) : on_free(ptr, -bytes, device);
    } catch (...) {
    }
  }

  MemorySample sample(std::int64_t bytes, std::uint64_t serial, std::uint8_t device) const {
    MemorySample m;
    m.tick = now_tick();
    m.bytes = bytes;
    m.serial = serial;
    CaptureState& s = *state;
    m.op = s.open_ops.empty() ? -1 : s.open_ops.back();
    m.span = m.op >= 0 ? s.ops[static_cast<std::size_t>(m.op)].span : s.current_span();
    m.device = device;
    return m;
  }

  // The address is reused, so the block we knew there is gone although no free was reported:
  // it was allocated before the capture (the allocator only reports frees of blocks it saw).
  [[gnu::noinline]] void forget_reused_block(void* ptr, Identity& known) {
    CaptureState& s = *state;
    if (!known.captured_alloc) count_pre_capture_free(s, known.bytes);
    release_weak(known);
    s.identities.erase(ptr);
  }

  void on_alloc(void* ptr, std::int64_t bytes, c10::Device device) {
    CaptureState& s = *state;
    if (Identity* known = s.identities.find(ptr)) [[unlikely]]
      forget_reused_block(ptr, *known);
    Identity id;
    id.serial = s.new_serial(s.paused);
    id.captured_alloc = true;
    id.bytes = static_cast<std::uint64_t>(bytes);
    s.identities.insert(ptr, id);
    if (!s.paused) s.memory_samples.push_back(sample(bytes, id.serial, device_index(s, device)));
  }

  void on_free(void* ptr, std::int64_t bytes, c10::Device device) {
    CaptureState& s = *state;
    ++s.frees_seen;
    Identity* known = s.identities.find(ptr);
    if (known == nullptr || !known->captured_alloc) [[unlikely]] {
      count_pre_capture_free(s, static_cast<std::uint64_t>(bytes));
    } else if (!s.serials[known->serial].internal) {
      s.memory_samples.push_back(sample(-bytes, known->serial, device_index(s, device)));
    }
    if (known != nullptr) {
      release_weak(*known);
      s.identities.erase(ptr);
    }
  }

  CaptureState* state;
};

}  // namespace

// ---- public (internal) functions -------------------------------------------------------------

std::optional<std::string> memory_slot_problem() {
  if (c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PROFILER_STATE) != nullptr)
    return std::string(
        "skipped: the PROFILER_STATE slot is taken (LibTorch's profiler is active on this "
        "thread)");
  if (prof::ProfilerStateBase::get(/*global=*/true) != nullptr)
    return std::string("skipped: LibTorch's global profiler is active");
  return std::nullopt;
}

namespace {

// identify()'s rare cases, out of line: a block seen for the first time, one whose storage died
// unreported (freed while memory capture was off, or allocated before the capture), or one the
// reporter registered that no op had shown yet (no weak reference to its storage).
[[gnu::noinline]] Identity& register_block(CaptureState& s, const void* p,
                                           const c10::Storage& storage, Identity* found) {
  if (found != nullptr && storage_gone(*found)) {
    if (!found->captured_alloc) count_pre_capture_free(s, found->bytes);
    release_weak(*found);
    s.identities.erase(p);
    found = nullptr;
  }
  if (found == nullptr) {
    Identity fresh;
    fresh.serial = s.new_serial(false);
    fresh.bytes = storage.nbytes();
    found = &s.identities.insert(p, fresh);
  }
  if (found->storage == nullptr) {
    c10::StorageImpl* si = storage.unsafeGetStorageImpl();
    c10::raw::weak_intrusive_ptr::incref(si);
    found->storage = si;
  }
  return *found;
}

}  // namespace

[[gnu::hot]] TensorKey identify(CaptureState& s, const at::Tensor& t) {
  const c10::TensorImpl* impl = t.unsafeGetTensorImpl();
  const c10::Storage& storage = impl->unsafe_storage();
  const void* p = storage ? storage.data() : nullptr;
  if (p == nullptr) [[unlikely]]
    return TensorKey{s.new_serial(false), 0, 0};  // empty or storage-less
  Identity* found = s.identities.find(p);
  if (found == nullptr || found->storage == nullptr || storage_gone(*found)) [[unlikely]]
    found = &register_block(s, p, storage, found);
  Identity& id = *found;
  // Inference tensors have no version counter (reading it throws).
  // (read inline: Tensor::_version() goes through the virtual VariableHooks)
  const std::int64_t version =
      const_cast<c10::TensorImpl*>(impl)->is_inference()
          ? 0
          : static_cast<std::int64_t>(impl->version_counter().current_version());
  if (id.first_version < 0) id.first_version = version;
  TensorKey key;
  key.serial = id.serial;
  key.version =
      version > id.first_version ? static_cast<std::uint32_t>(version - id.first_version) : 0;
  return key;
}

void label_tensor(CaptureState& s, const at::Tensor& t, std::string_view label) {
  if (!t.defined()) return;
  const TensorKey key = identify(s, t);
  if (key.serial >= s.serials.size()) return;
  s.labels.emplace_back(label);
  s.serials[key.serial].label = static_cast<std::uint32_t>(s.labels.size() - 1);
}

// Also runs when the autograd engine finishes the backward pass that opened the automatic span
// (the engine's final callbacks, on the thread that called backward() on CPU): the span ends
// when backward() does, not at the next op or span of the user's code.
void end_auto_backward_of(std::uint64_t serial) noexcept {
  CaptureState* s = tl_state;
  if (s != nullptr && s->serial == serial) end_auto_backward(*s);
}

void end_auto_backward(CaptureState& s) noexcept {
  if (!s.auto_backward) return;
  try {
    s.auto_backward->end();
  } catch (...) {
    // left unclosed: finish() reports it through the session
  }
  s.auto_backward.reset();
}

// ---- the capture's own cost (measure_capture_cost) ------------------------------------------

namespace {

constexpr int kCostBatches = 9;      // odd: the median is one batch
constexpr int kOpIterations = 32;    // ~8 records each: ~2300 records timed with the hooks on
constexpr int kAllocsPerBatch = 64;  // 2 memory events each

// A few real ops of the kind an update is made of — a linear layer's addmm, an activation and a
// reduction, each dispatching nested ops (relu > clamp_min, sum > …) — on tiny tensors, so that
// the time is the dispatcher's and the hooks': boxing inputs and outputs for the callbacks,
// the callbacks, the tensor-identity lookups. Dummy records with one input, tried first,
// measured well under half of what these ops show. With RecordFunction disabled this is the
// same loop minus everything the op hooks add (the allocator reporter runs in both).
[[gnu::noinline]] std::int64_t time_small_ops(const at::Tensor& bias, const at::Tensor& x,
                                              const at::Tensor& w, int iterations) {
  const std::int64_t start = now_tick();
  for (int i = 0; i < iterations; ++i) (void)at::sum(at::relu(at::addmm(bias, x, w)));
  return now_tick() - start;
}

[[gnu::noinline]] std::int64_t time_allocations(int n) {
  const std::int64_t start = now_tick();
  for (int i = 0; i < n; ++i) (void)at::empty({1});
  return now_tick() - start;
}

std::int64_t median(std::vector<std::int64_t> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Median extra ticks of `with` over `without` per batch, batches interleaved so that drift of the
// clock or of the machine's load affects both alike.
template <class With, class Without>
std::int64_t median_extra(With with, Without without) {
  std::vector<std::int64_t> on, off;
  for (int b = 0; b < kCostBatches; ++b) {
    on.push_back(with());
    off.push_back(without());
  }
  return median(on) - median(off);
}

// At least 1 ns: the hooks never cost nothing, and a positive figure keeps the estimate from
// vanishing in noise.
std::uint64_t per_event(std::int64_t extra, std::uint64_t events) {
  if (events == 0 || extra <= 0) return 1;
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(extra) / events);
}

// What the calibration recorded is dropped; its blocks died, so their serials are handed out
// again (as warm_up does), unless a block survived.
struct RecordedSizes {
  explicit RecordedSizes(const CaptureState& s)
      : ops(s.ops.size()),
        inputs(s.inputs.size()),
        shapes(s.shapes.size()),
        memory(s.memory_samples.size()),
        serials(s.serials.size()),
        blocks(s.identities.size()),
        last_top_level(s.last_top_level) {}
  void restore(CaptureState& s) const {
    s.ops.resize(ops);
    s.inputs.resize(inputs);
    s.shapes.resize(shapes);
    s.memory_samples.resize(memory);
    if (s.identities.size() == blocks) s.serials.resize(serials);
    s.last_top_level = last_top_level;
  }
  std::size_t ops, inputs, shapes, memory, serials, blocks;
  std::int32_t last_top_level;
};

}  // namespace

CaptureCost measure_capture_cost(CaptureState& s) {
  CaptureCost cost;
  if (tl_state != &s) return cost;
  const bool was_paused = s.paused;
  const RecordedSizes sizes(s);
  try {
    const at::NoGradGuard no_grad;
    // Made unrecorded, like the update's inputs that existed before it.
    s.paused = true;
    const at::Tensor bias = at::zeros({4});
    const at::Tensor x = at::zeros({2, 4});
    const at::Tensor w = at::zeros({4, 4});
    s.paused = false;
    const std::size_t ops_before = s.ops.size();
    const std::int64_t extra =
        median_extra([&] { return time_small_ops(bias, x, w, kOpIterations); },
                     [&] {
                       const at::DisableRecordFunctionGuard off;
                       return time_small_ops(bias, x, w, kOpIterations);
                     });
    // Records per batch as the recorder counted them (nested ops included).
    const std::uint64_t records = (s.ops.size() - ops_before) / kCostBatches;
    cost.per_op_ns = per_event(extra, records);
    cost.calibration_records = s.ops.size() - ops_before;
    if (s.memory) {
      const at::DisableRecordFunctionGuard no_records;  // allocator reporter only
      const std::int64_t memory_extra =
          median_extra([&] { return time_allocations(kAllocsPerBatch); },
                       [&] {
                         // The reporter returns at once for a thread that is not the capture's
                         // (MemoryReporter::reportMemoryUsage): what remains is LibTorch's own
                         // check.
                         tl_state = nullptr;
                         const std::int64_t t = time_allocations(kAllocsPerBatch);
                         tl_state = &s;
                         return t;
                       });
      cost.per_memory_event_ns = per_event(memory_extra, 2 * kAllocsPerBatch);
    }
  } catch (...) {
    tl_state = &s;
    cost = CaptureCost{};  // not measured: the capture says so instead of guessing
  }
  s.paused = was_paused;
  sizes.restore(s);
  return cost;
}

struct Recorder::Hooks {
  at::CallbackHandle handle = 0;
  std::unique_ptr<c10::DebugInfoGuard> memory_guard;
};

bool recording_on_this_thread() noexcept {
  return tl_state != nullptr;
}

Recorder::Recorder(CaptureState& state, bool memory) : state_(state) {
  if (tl_state != nullptr)
    throw InstrumentError(state.session ? state.session->path() : std::filesystem::path(),
                          "another TorchCapture is already recording on this thread; finish it "
                          "first");
  if (state_.dtype_labels.empty())  // kept by a recycled state (capture_state.cpp)
    for (int t = 0; t < static_cast<int>(c10::ScalarType::NumOptions); ++t)
      state_.dtype_labels.push_back(dtype_label(static_cast<c10::ScalarType>(t)));
  state_.device_labels = {"cpu"};
  static std::atomic<std::uint64_t> next_serial{1};
  state_.serial = next_serial.fetch_add(1);
  hooks_ = new Hooks();
  tl_state = &state_;
  if (memory) {
    hooks_->memory_guard = std::make_unique<c10::DebugInfoGuard>(
        c10::DebugInfoKind::PROFILER_STATE, std::make_shared<MemoryReporter>(&state_));
    state_.memory = true;
  }
  hooks_->handle = at::addThreadLocalCallback(
      at::RecordFunctionCallback(&on_start, &on_end)
          .needsInputs(true)
          .needsOutputs(true)
          .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION}));
}

Recorder::~Recorder() {
  stop();
}

void Recorder::stop() {
  if (hooks_ == nullptr) return;
  at::removeCallback(hooks_->handle);
  hooks_->memory_guard.reset();
  delete hooks_;
  hooks_ = nullptr;
  tl_state = nullptr;
  state_.identities.for_each([&](const void*, Identity& id) {
    if (!id.captured_alloc && storage_gone(id)) count_pre_capture_free(state_, id.bytes);
    release_weak(id);
  });
  state_.identities.clear();
}

}  // namespace candle_graph::libtorch::detail
