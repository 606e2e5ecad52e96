// A trace/6 text that health trusts, built from a fuzzer's bytes: the targets that follow commands
// refusing untrusted traces (the exports, the evidence, compare) would otherwise reach their code
// through the few mutated inputs that stay trusted (2-5% of a corpus). The bytes choose the shape
// (a span tree of any depth and width, ops on host threads, runtime calls and the device work
// they launch on streams of two GPUs, memory lifetimes on one or two devices, tensors, gradients,
// device-memory samples, edges) and every number and name in it; the construction keeps what health
// checks: one root, one measured span, children inside their parent and no longer than it together,
// every reference to a span that exists, allocations freed at most once.
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzzed_names.hpp"
#include "output/json_text.hpp"

namespace candle_graph::fuzz {

class TraceGenerator {
 public:
  TraceGenerator(const std::uint8_t* data, std::size_t size) : in_(data, size) {}

  std::string trace() {
    const bool train = in_.ConsumeBool();
    device_ = in_.ConsumeBool() ? "cuda:0" : "cpu";
    out_ = R"({"kind":"meta","schema":"candle-graph/trace/6","run_id":"run-fuzz",)"
           R"("correlation_id":"fuzz/update-1","entrypoint":"fuzz","phase":")";
    out_ += train ? "train" : "infer";
    out_ += R"(","timestamp":"2026-01-01T00:00:00.000Z","capture_step":1,"warmup_steps":0,)";
    out_ += R"("device":")" + device_ + R"(","measured_region_device_synchronized":false,)";
    out_ += R"("timing_mode":"host","tags":{)" + tags() + "}}\n";
    const std::uint64_t root_ns = in_.ConsumeIntegralInRange<std::uint64_t>(1, kMaxNs);
    measured_at_ = in_.ConsumeIntegralInRange<unsigned>(0, 8);
    // Counted before the spans take what is left of the bytes.
    const unsigned gradients = in_.ConsumeIntegralInRange<unsigned>(0, 4);
    const unsigned samples = in_.ConsumeIntegralInRange<unsigned>(0, 3);
    const unsigned edges = in_.ConsumeIntegralInRange<unsigned>(0, 4);
    span("", 0, root_ns, 0);
    if (!measured_) mark_measured_fallback();
    tail_events(gradients, samples, edges);
    return out_;
  }

 private:
  static constexpr std::uint64_t kMaxNs = std::uint64_t{1} << 50;

  // What a distributed run's converted trace says of itself (the `ranks` command reads it): its
  // rank, the world size, the backend, an absolute start for the clock alignment, and a process
  // group. Each present or not.
  std::string tags() {
    std::string t;
    const auto add = [&](std::string_view key, const std::string& value) {
      if (!in_.ConsumeBool()) return;
      if (!t.empty()) t += ',';
      t += '"' + std::string(key) + R"(":)";
      output::append_json_string(t, value);
    };
    add("source.rank", std::to_string(in_.ConsumeIntegralInRange<unsigned>(0, 4)));
    add("source.world_size", std::to_string(in_.ConsumeIntegralInRange<unsigned>(1, 4)));
    add("source.backend", "nccl");
    add("source.region_start_ns", std::to_string(in_.ConsumeIntegralInRange<std::int64_t>(
                                      -(std::int64_t{1} << 40), std::int64_t{1} << 40)));
    add("source.process_group.0", R"({"pg_name":"0","ranks":[0,1,2,3]})");
    add("source.device_name", device_name());
    return t;
  }

  // A GPU model as a trace/6 producer may write it: a real one, or one the importer never writes
  // (empty, over 256 bytes, a control character), which every output must read as no model.
  std::string device_name() {
    switch (in_.ConsumeIntegralInRange<int>(0, 4)) {
      case 0:
        return "NVIDIA A100-SXM4-80GB";
      case 1:
        return std::string(in_.ConsumeIntegralInRange<std::size_t>(255, 258), 'x');
      case 2:
        return "V100\a\x1b[2J";
      case 3:
        return "";
      default: {
        std::string s = in_.ConsumeRandomLengthString(300);
        return output::is_valid_utf8(s) ? s : "not UTF-8";
      }
    }
  }
  static constexpr int kMaxDepth = 12;
  static constexpr unsigned kMaxSpans = 300;

  std::string name() {
    // Markdown among them (torchrec's ranges, Python's dunders, a link and a tag): the report's
    // structure check sees them as findings.
    static constexpr std::array<std::string_view, 12> kNames{
        "aten::mm",
        "forward",
        "layer\"0\\",
        "é∑",
        "",
        "aten::add_",
        "a\tb",
        "cudaLaunchKernel",
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
        "## backward ##",
        "Module.__call__",
        "[a](b) <b>"};
    return fuzzed_name(in_, kNames);
  }

  // A span of [start, start + dur) under `parent`, its ops, memory and children, in stream order.
  void span(const std::string& parent, std::uint64_t start, std::uint64_t dur, int depth) {
    const std::string id = "s" + std::to_string(++spans_);
    ids_.push_back(id);
    out_ += R"({"kind":"span_start","id":")" + id + '"';
    if (!parent.empty()) out_ += R"(,"parent_id":")" + parent + '"';
    out_ += R"(,"name":)";
    output::append_json_string(out_, name());
    out_ += R"(,"start_ns":)" + std::to_string(start) + R"(,"span_kind":")";
    static constexpr std::array<std::string_view, 3> kKinds{"function", "op", "module"};
    out_ += kKinds[in_.ConsumeIntegralInRange<unsigned>(0, 2)];
    const bool measured = !measured_ && spans_ - 1 == measured_at_;
    measured_ = measured_ || measured;
    out_ += R"(","measured":)";
    out_ += measured ? "true" : "false";
    static constexpr std::array<std::string_view, 4> kSteps{"", "forward", "backward", "optimizer"};
    const std::string_view step = kSteps[in_.ConsumeIntegralInRange<unsigned>(0, 3)];
    if (!step.empty()) out_ += R"(,"step":")" + std::string(step) + '"';
    out_ += "}\n";
    ops(id, start, dur);
    // Children one after the other inside the span: none outside it, their sum within it.
    std::uint64_t cursor = start;
    const std::uint64_t end = start + dur;
    const unsigned children =
        depth >= kMaxDepth ? 0 : in_.ConsumeIntegralInRange<unsigned>(0, depth == 0 ? 6 : 3);
    for (unsigned c = 0; c < children && cursor < end && spans_ < kMaxSpans; ++c) {
      const std::uint64_t gap = in_.ConsumeIntegralInRange<std::uint64_t>(0, end - cursor - 1);
      const std::uint64_t begin = cursor + gap;
      const std::uint64_t length = in_.ConsumeIntegralInRange<std::uint64_t>(0, end - begin);
      span(id, begin, length, depth + 1);
      cursor = begin + length;
    }
    out_ +=
        R"({"kind":"span_end","id":")" + id + R"(","duration_ns":)" + std::to_string(dur) + "}\n";
  }

  std::uint64_t within(std::uint64_t start, std::uint64_t dur) {
    return start + in_.ConsumeIntegralInRange<std::uint64_t>(0, dur);
  }

  // Host ops (nested by their extents on a thread), runtime calls and the device work they
  // launch (the same correlation), and memory lifetimes, all inside the span.
  void ops(const std::string& span_id, std::uint64_t start, std::uint64_t dur) {
    const unsigned count = in_.ConsumeIntegralInRange<unsigned>(0, 5);
    for (unsigned i = 0; i < count; ++i) {
      const std::uint64_t at = within(start, dur);
      const std::uint64_t total = in_.ConsumeIntegralInRange<std::uint64_t>(0, start + dur - at);
      const unsigned kind = in_.ConsumeIntegralInRange<unsigned>(0, 3);
      out_ += R"({"kind":"op","span_id":")" + span_id + R"(","op_name":)";
      output::append_json_string(out_, name());
      out_ += R"(,"inputs":[)";
      if (!tensors_.empty() && in_.ConsumeBool())
        output::append_json_string(
            out_, tensors_[in_.ConsumeIntegralInRange<std::size_t>(0, tensors_.size() - 1)]);
      out_ += R"(],"shape":[)" + std::to_string(in_.ConsumeIntegral<std::uint32_t>()) +
              R"(],"dtype":"f32","device":")";
      if (kind == 3) {  // device work on a stream, launched by an earlier runtime call or none
        static constexpr std::array<std::string_view, 4> kDevice{"kernel", "memcpy", "memset",
                                                                 "sync"};
        out_ += device_of_work() + R"(","duration_ns":0,"timestamp_ns":)" + std::to_string(at) +
                R"(,"storage_bytes":0,"op_kind":")" +
                std::string(kDevice[in_.ConsumeIntegralInRange<unsigned>(0, 3)]) +
                R"(","total_ns":)" + std::to_string(total) + R"(,"stream":)" +
                std::to_string(in_.ConsumeIntegralInRange<unsigned>(0, 3)) + R"(,"correlation":)" +
                std::to_string(in_.ConsumeIntegralInRange<unsigned>(0, correlations_ + 1));
        if (in_.ConsumeBool())  // a collective's call, as PyTorch's record_param_comms names it
          out_ += R"(,"collective":"allreduce","process_group":"0","collective_seq":)" +
                  std::to_string(in_.ConsumeIntegralInRange<unsigned>(0, 8));
        out_ += "}\n";
        continue;
      }
      const std::uint64_t self = in_.ConsumeIntegralInRange<std::uint64_t>(0, total);
      out_ += R"(cpu","duration_ns":)" + std::to_string(self) + R"(,"timestamp_ns":)" +
              std::to_string(at) + R"(,"storage_bytes":)" +
              std::to_string(in_.ConsumeIntegral<std::uint32_t>());
      if (kind >= 1) {  // with an extent and a thread; a runtime call launches with a correlation
        out_ += R"(,"total_ns":)" + std::to_string(total) + R"(,"thread":)" +
                std::to_string(in_.ConsumeIntegralInRange<unsigned>(1, 3));
        if (kind == 2)
          out_ += R"(,"op_kind":"runtime","correlation":)" + std::to_string(++correlations_);
      }
      out_ += "}\n";
    }
    const unsigned lifetimes = in_.ConsumeIntegralInRange<unsigned>(0, 3);
    for (unsigned i = 0; i < lifetimes; ++i) {
      const std::string tensor = "t" + std::to_string(tensors_.size() + 1);
      tensors_.push_back(tensor);
      const std::uint64_t alloc = within(start, dur);
      const std::uint64_t bytes = in_.ConsumeIntegral<std::uint32_t>();
      const std::string device = device_of_memory();
      memory(span_id, tensor, device, alloc, bytes, "alloc");
      if (in_.ConsumeBool())
        memory(span_id, tensor, device, within(alloc, start + dur - alloc), bytes, "free");
      if (in_.ConsumeBool()) {
        out_ += R"({"kind":"tensor","span_id":")" + span_id + R"(","tensor_id":")" + tensor +
                R"(","shape":[2,)" + std::to_string(in_.ConsumeIntegral<std::uint16_t>()) +
                R"(],"dtype":"f32","device":")" + device_ + R"(","requires_grad":)" +
                (in_.ConsumeBool() ? "true" : "false") + R"(,"category":"parameter"})" + "\n";
      }
    }
  }

  // Device work runs on one of two GPUs (a trace of one process driving two, or a converted
  // trace whose kernels name their device), whatever the run's own device.
  std::string device_of_work() { return in_.ConsumeBool() ? "cuda:0" : "cuda:1"; }

  // Memory lives on the run's device, or on the second GPU beside a CUDA run's first.
  std::string device_of_memory() {
    return device_ != "cpu" && in_.ConsumeBool() ? "cuda:1" : device_;
  }

  void memory(const std::string& span_id, const std::string& tensor, const std::string& device,
              std::uint64_t at, std::uint64_t bytes, std::string_view action) {
    static constexpr std::array<std::string_view, 5> kCategories{"parameter", "activation",
                                                                 "gradient", "optimizer", "other"};
    out_ += R"({"kind":"memory","timestamp_ns":)" + std::to_string(at) + R"(,"tensor_id":")" +
            tensor + R"(","span_id":")" + span_id + R"(","device":")" + device + R"(","bytes":)" +
            std::to_string(bytes) + R"(,"action":")" + std::string(action) +
            R"(","dtype":"f32","category":")" +
            std::string(kCategories[in_.ConsumeIntegralInRange<unsigned>(0, 4)]) + "\"}\n";
  }

  // What does not belong to a span: gradients, device-memory samples and edges between spans.
  void tail_events(unsigned gradients, unsigned samples, unsigned edges) {
    static constexpr std::array<std::string_view, 4> kStates{"present", "missing", "zero",
                                                             "non_finite"};
    for (unsigned i = 0; i < gradients; ++i) {
      const unsigned state = in_.ConsumeIntegralInRange<unsigned>(0, 3);
      out_ += R"({"kind":"gradient","event_id":"gradient-)" + std::to_string(i + 1) +
              R"(","root":"model","key":)";
      output::append_json_string(out_, name());
      out_ += R"(,"state":")" + std::string(kStates[state]) + '"';
      if (state == 0) out_ += R"(,"norm":)" + std::to_string(in_.ConsumeProbability<double>());
      out_ += "}\n";
    }
    for (unsigned i = 0; i < samples; ++i)
      out_ += R"({"kind":"device_memory","timestamp_ns":)" +
              std::to_string(in_.ConsumeIntegralInRange<std::uint64_t>(0, kMaxNs)) +
              R"(,"device":")" + device_of_memory() + R"(","used_bytes":)" +
              std::to_string(in_.ConsumeIntegral<std::uint32_t>()) + R"(,"free_bytes":)" +
              std::to_string(in_.ConsumeIntegral<std::uint32_t>()) + "}\n";
    for (unsigned i = 0; i < edges; ++i)
      out_ += R"({"kind":"edge","from_span":")" + pick_span() + R"(","to_span":")" + pick_span() +
              R"(","duration_ns":)" + std::to_string(in_.ConsumeIntegral<std::uint32_t>()) + "}\n";
  }

  std::string pick_span() {
    return ids_[in_.ConsumeIntegralInRange<std::size_t>(0, ids_.size() - 1)];
  }

  // When the chosen span index was never reached (fewer spans), the root is the measured one:
  // its line is the meta line's successor, rewritten in place.
  void mark_measured_fallback() {
    const std::size_t at = out_.find(R"("measured":false)");
    out_.replace(at, 16, R"("measured":true)");
    measured_ = true;
  }

  FuzzedDataProvider in_;
  std::string out_, device_;
  std::vector<std::string> ids_, tensors_;
  unsigned spans_ = 0, measured_at_ = 0, correlations_ = 0;
  bool measured_ = false;
};

inline std::string generated_trace(const std::uint8_t* data, std::size_t size) {
  return TraceGenerator(data, size).trace();
}

}  // namespace candle_graph::fuzz
