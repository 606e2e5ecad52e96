// A PyTorch profiler (Kineto) trace built from a fuzzer's bytes, for the importer target: most
// mutated JSON never gets past the parser, so the conversion (steps, host nesting, launches and
// the device work they correlate with on one of two GPUs, flows, memory, collectives) would see
// only the seeds. The bytes choose everything in the shape PyTorch writes it: ProfilerStep#N
// annotations on the main thread; cpu_op and user_annotation slices nested or overlapping on three
// threads; cuda_runtime launches with a correlation, their kernels, copies, memsets and syncs on
// three streams (`args.correlation`, `device`, `stream`) and the flow pair that joins them;
// `[memory]` instants that allocate and free addresses; record_param_comms with a collective's
// name, process group and sequence number; distributedInfo; deviceProperties naming the two GPUs
// (with any names); a third thread now and then in a second process, as in the traces of two
// ranks concatenated (health's `processes_merged`); and times in fractional µs, durations of 0,
// events outside every step and out of order.
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzzed_names.hpp"
#include "output/json_text.hpp"

namespace candle_graph::fuzz {

class KinetoGenerator {
 public:
  KinetoGenerator(const std::uint8_t* data, std::size_t size) : in_(data, size) {}

  std::string trace() {
    out_ = R"({"schemaVersion":1,)";
    if (in_.ConsumeBool())
      out_ += R"("distributedInfo":{"backend":"nccl","rank":)" +
              std::to_string(in_.ConsumeIntegralInRange<unsigned>(0, 3)) + R"(,"world_size":)" +
              std::to_string(in_.ConsumeIntegralInRange<unsigned>(1, 4)) + "},";
    if (in_.ConsumeBool()) {
      out_ += R"("deviceProperties":[)";
      for (unsigned id = 0; id < 2; ++id) {
        out_ += std::string(id ? "," : "") + R"({"id":)" + std::to_string(id) + R"(,"name":)";
        output::append_json_string(out_, name());
        out_ += '}';
      }
      out_ += "],";
    }
    out_ += R"("traceEvents":[)";
    const unsigned steps = in_.ConsumeIntegralInRange<unsigned>(0, 4);
    const std::uint64_t first_step = in_.ConsumeIntegralInRange<std::uint64_t>(0, 40);
    std::uint64_t at = base_ = in_.ConsumeIntegralInRange<std::uint64_t>(0, kMaxNs);
    for (unsigned s = 0; s < steps; ++s) {
      at += in_.ConsumeIntegralInRange<std::uint64_t>(0, 5'000);
      const std::uint64_t dur = in_.ConsumeIntegralInRange<std::uint64_t>(0, 2'000'000);
      slice("user_annotation", "ProfilerStep#" + std::to_string(first_step + s), 1, at, dur);
      host_work(1, at, dur, 0);
      at += dur;
    }
    // Work outside every step, on the other threads and after the last step; the third thread's
    // now and then in another process.
    host_work(2, base_, at - base_ + 1'000, 0);
    if (in_.ConsumeIntegralInRange<unsigned>(0, 9) == 0) pid_ = 101;
    host_work(3, at, in_.ConsumeIntegralInRange<std::uint64_t>(0, 100'000), 0);
    pid_ = 100;
    memory_events(at);
    out_ += "]}";
    return out_;
  }

 private:
  static constexpr std::uint64_t kMaxNs = std::uint64_t{1} << 52;

  // A time in ns written as Kineto's µs, with a fraction of up to three digits.
  static std::string us(std::uint64_t ns) {
    std::string s = std::to_string(ns / 1000);
    if (const std::uint64_t frac = ns % 1000) {
      std::string f = std::to_string(frac);
      s += '.' + std::string(3 - f.size(), '0') + f;
    }
    return s;
  }

  std::string name() {
    static constexpr std::array<std::string_view, 10> kNames{"aten::mm",
                                                             "aten::add_",
                                                             "aten::copy_",
                                                             "## forward ##",
                                                             "Optimizer.step#Adam.step",
                                                             "nccl:all_reduce",
                                                             "record_param_comms",
                                                             "é∑ \"q\"",
                                                             "",
                                                             "aten::to"};
    return fuzzed_name(in_, kNames);
  }

  void open_event() {
    if (!first_) out_ += ',';
    first_ = false;
  }

  void slice(std::string_view cat, const std::string& n, unsigned tid, std::uint64_t ts,
             std::uint64_t dur, const std::string& args = {}) {
    open_event();
    out_ += R"({"ph":"X","cat":")" + std::string(cat) + R"(","name":)";
    output::append_json_string(out_, n);
    out_ += R"(,"pid":)" + std::to_string(pid_) + R"(,"tid":)" + std::to_string(tid) + R"(,"ts":)" +
            us(ts) + R"(,"dur":)" + us(dur);
    if (!args.empty()) out_ += R"(,"args":{)" + args + '}';
    out_ += '}';
  }

  // Ops inside [start, start + dur) on `tid`, one after the other or overlapping, each with
  // children of its own, launches and what they launch.
  void host_work(unsigned tid, std::uint64_t start, std::uint64_t dur, int depth) {
    if (depth > 6 || events_ > 400) return;
    const unsigned count = in_.ConsumeIntegralInRange<unsigned>(0, depth == 0 ? 5 : 3);
    for (unsigned i = 0; i < count && events_ <= 400; ++i) {
      const std::uint64_t at = start + in_.ConsumeIntegralInRange<std::uint64_t>(0, dur);
      // Mostly inside the parent; now and then past its end, as clock skew makes it.
      const std::uint64_t room = start + dur - at;
      const std::uint64_t length =
          in_.ConsumeIntegralInRange<std::uint64_t>(0, in_.ConsumeBool() ? room : room + 500);
      ++events_;
      switch (in_.ConsumeIntegralInRange<unsigned>(0, 4)) {
        case 0:
          launch(tid, at, length);
          break;
        case 1: {  // a collective call, as PyTorch's record_param_comms writes it
          const std::string args = R"("Collective name":"allreduce","Process Group Name":"0",)"
                                   R"("Seq":)" +
                                   std::to_string(in_.ConsumeIntegralInRange<unsigned>(0, 9));
          slice("cpu_op", "record_param_comms", tid, at, length, args);
          host_work(tid, at, length, depth + 1);
          break;
        }
        case 2:
          slice("user_annotation", name(), tid, at, length);
          host_work(tid, at, length, depth + 1);
          break;
        default:
          slice("cpu_op", name(), tid, at, length,
                R"("Input Dims":[[2,)" +
                    std::to_string(in_.ConsumeIntegralInRange<unsigned>(0, 64)) + "]]");
          host_work(tid, at, length, depth + 1);
          break;
      }
    }
  }

  // A runtime call and, usually, the device work it launches later on a stream, with the flow
  // pair between them; sometimes the device work's correlation names no call.
  void launch(unsigned tid, std::uint64_t at, std::uint64_t length) {
    const std::uint64_t corr = ++correlations_;
    static constexpr std::array<std::string_view, 4> kCalls{
        "cudaLaunchKernel", "cudaMemcpyAsync", "cudaStreamSynchronize", "hipLaunchKernel"};
    slice("cuda_runtime", std::string(kCalls[in_.ConsumeIntegralInRange<std::size_t>(0, 3)]), tid,
          at, length, R"("correlation":)" + std::to_string(corr));
    if (!in_.ConsumeBool()) return;
    static constexpr std::array<std::string_view, 4> kCats{"kernel", "gpu_memcpy", "gpu_memset",
                                                           "cuda_sync"};
    static constexpr std::array<std::string_view, 3> kKernels{
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "void gemm<float>(float*)", "Memcpy HtoD"};
    const std::uint64_t start = at + in_.ConsumeIntegralInRange<std::uint64_t>(0, 50'000);
    const unsigned stream = in_.ConsumeIntegralInRange<unsigned>(7, 9);
    // One of two GPUs: Kineto gives each device's rows the device's number as their pid.
    const std::string device = std::to_string(in_.ConsumeIntegralInRange<unsigned>(0, 1));
    const std::uint64_t device_corr = in_.ConsumeBool() ? corr : corr + 100'000;
    open_event();
    out_ += R"({"ph":"X","cat":")" +
            std::string(kCats[in_.ConsumeIntegralInRange<std::size_t>(0, 3)]) + R"(","name":")" +
            std::string(kKernels[in_.ConsumeIntegralInRange<std::size_t>(0, 2)]) + R"(","pid":)" +
            device + R"(,"tid":)" + std::to_string(stream) + R"(,"ts":)" + us(start) +
            R"(,"dur":)" + us(in_.ConsumeIntegralInRange<std::uint64_t>(0, 20'000)) +
            R"(,"args":{"device":)" + device + R"(,"stream":)" + std::to_string(stream) +
            R"(,"correlation":)" + std::to_string(device_corr) + "}}";
    if (in_.ConsumeBool()) {
      open_event();
      out_ += R"({"ph":"s","id":)" + std::to_string(corr) + R"(,"pid":)" + std::to_string(pid_) +
              R"(,"tid":)" + std::to_string(tid) + R"(,"ts":)" + us(at) +
              R"(,"cat":"ac2g","name":"ac2g","bp":"e"},)";
      out_ += R"({"ph":"f","id":)" + std::to_string(corr) + R"(,"pid":)" + device + R"(,"tid":)" +
              std::to_string(stream) + R"(,"ts":)" + us(start) +
              R"(,"cat":"ac2g","name":"ac2g","bp":"e"})";
    }
  }

  // Allocations of a few addresses and, mostly, their frees later; on the CPU or the GPU.
  void memory_events(std::uint64_t end) {
    const unsigned count = in_.ConsumeIntegralInRange<unsigned>(0, 8);
    for (unsigned i = 0; i < count; ++i) {
      const std::uint64_t addr = 4096 * (1 + in_.ConsumeIntegralInRange<unsigned>(0, 3));
      const std::uint64_t bytes = 1 + in_.ConsumeIntegral<std::uint32_t>();
      const unsigned type = in_.ConsumeIntegralInRange<unsigned>(0, 1);
      const unsigned device = type == 0 ? 0 : in_.ConsumeIntegralInRange<unsigned>(0, 1);
      const std::uint64_t at = base_ + in_.ConsumeIntegralInRange<std::uint64_t>(0, end - base_);
      memory(at, addr, static_cast<std::int64_t>(bytes), type, device);
      if (in_.ConsumeBool())
        memory(at + in_.ConsumeIntegralInRange<std::uint64_t>(0, 10'000), addr,
               -static_cast<std::int64_t>(bytes), type, device);
    }
  }

  void memory(std::uint64_t at, std::uint64_t addr, std::int64_t bytes, unsigned type,
              unsigned device) {
    open_event();
    out_ += R"({"ph":"i","s":"t","name":"[memory]","pid":100,"tid":1,"ts":)" + us(at) +
            R"(,"args":{"Device Type":)" + std::to_string(type) + R"(,"Device Id":)" +
            std::to_string(device) + R"(,"Addr":)" + std::to_string(addr) + R"(,"Bytes":)" +
            std::to_string(bytes) + "}}";
  }

  FuzzedDataProvider in_;
  std::string out_;
  std::uint64_t base_ = 0, correlations_ = 0;
  unsigned events_ = 0;
  unsigned pid_ = 100;  // the host process of the slices written now
  bool first_ = true;
};

inline std::string generated_kineto(const std::uint8_t* data, std::size_t size) {
  return KinetoGenerator(data, size).trace();
}

}  // namespace candle_graph::fuzz
