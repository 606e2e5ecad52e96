// Helper of bench/pytorch_convert_bench.sh:
//   pytorch_convert_tool generate BYTES OUT   a Kineto trace of about BYTES bytes in the shape of
//                                             ../shared/fixtures/pytorch-chrome-trace (A100
//                                             training steps: cpu_op with shapes, cuda_runtime,
//                                             kernels, memcpy, ac2g flows, [memory] instants,
//                                             fractional µs, Kineto's one-event-per-line layout)
//                                             (+ OUT.events.jsonl: the same events, one a line)
//   pytorch_convert_tool ceiling FILE         the simdjson ceiling: DOM parse of the whole
//                                             document, nothing done with it
//   pytorch_convert_tool ceiling-events FILE  the stricter ceiling: parse_many over the events
//                                             JSONL (bench/json_ceiling.hpp), no document held
#include <simdjson.h>

#include <cstdarg>
#include <cstddef>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "json_ceiling.hpp"

namespace {

const char* const kOps[] = {"aten::linear", "aten::addmm",     "aten::relu",       "aten::empty",
                            "aten::t",      "aten::transpose", "aten::as_strided", "aten::mm"};
const char* const kKernels[] = {
    "ampere_sgemm_128x64_tn",
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::"
    "launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, "
    "at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()"
    "() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, "
    "at::native::(anonymous namespace)::launch_clamp_scalar)",
    "void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, false, false>"};

// Each event goes to the Kineto file and, one per line, to the JSONL twin that the second
// ceiling (parse_many over the same events) reads.
struct Out {
  std::FILE* f = nullptr;
  std::FILE* jsonl = nullptr;
};

__attribute__((format(printf, 2, 3))) unsigned long long emit(Out& out, const char* fmt, ...) {
  char buf[4096];
  va_list ap;
  va_start(ap, fmt);
  const int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n <= 0 || static_cast<std::size_t>(n) >= sizeof buf) std::abort();
  std::fwrite(buf, 1, static_cast<std::size_t>(n), out.f);
  std::fwrite(buf, 1, static_cast<std::size_t>(n), out.jsonl);
  std::fputc('\n', out.jsonl);
  return static_cast<unsigned long long>(n);
}

int generate(unsigned long long target, const char* path) {
  std::FILE* f = std::fopen(path, "wb");
  if (!f) return 1;
  Out out;
  out.f = f;
  out.jsonl = std::fopen((std::string(path) + ".events.jsonl").c_str(), "wb");
  if (!out.jsonl) return 1;
  std::fprintf(f,
               "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {\"id\": 0, \"name\": "
               "\"NVIDIA A100-SXM4-80GB\", \"totalGlobalMem\": 85097971712, \"computeMajor\": 8, "
               "\"computeMinor\": 0, \"numSms\": 108}\n  ],\n  \"record_shapes\": 1,\n  "
               "\"profile_memory\": 1,\n  \"traceEvents\": [\n");
  unsigned long long written = 0;
  double ts = 4203669603018.756;  // fractional µs like the ROCm 6.2 fixture
  long long corr = 1, ext = 1, addr = 139926520725504LL;
  bool first = true;
  auto sep = [&] {
    if (!first) written += static_cast<unsigned long long>(std::fputs(",\n", f) >= 0 ? 2 : 0);
    first = false;
  };
  for (int step = 1; written < target; ++step) {
    const double step_begin = ts;
    // The step's own event is written after its content (Kineto does not sort either).
    for (int i = 0; i < 2000 && written < target; ++i) {
      const char* op = kOps[i % 8];
      const long long c = corr++, e = ext++;
      sep();
      written += emit(
          out,
          "  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": 493459, "
          "\"tid\": "
          "493459,\n    \"ts\": %.3f, \"dur\": 12.345,\n    \"args\": {\n      \"External id\": "
          "%lld,\"Record function id\": 0, \"Ev Idx\": %lld, \"Input Dims\": [[64, 1024], [1024, "
          "1024], []], \"Input type\": [\"float\", \"float\", \"Scalar\"], \"Input Strides\": "
          "[[1024, 1], [1, 1024], []]\n    }\n  }",
          op, ts, e, e);
      sep();
      written += emit(
          out,
          "  {\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
          "\"pid\": 493459, \"tid\": 493459,\n    \"ts\": %.3f, \"dur\": 4.5,\n    \"args\": {\n  "
          "    \"External id\": %lld, \"cbid\": 211, \"correlation\": %lld\n    }\n  }",
          ts + 2, e, c);
      sep();
      written += emit(
          out,
          "  {\n    \"ph\": \"s\", \"id\": %lld, \"pid\": 493459, \"tid\": 493459, \"ts\": %.3f, "
          "\"cat\": \"ac2g\", \"name\": \"ac2g\"\n  }",
          c, ts + 2);
      sep();
      written += emit(
          out,
          "  {\n    \"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": 0, \"tid\": 7,\n "
          "   \"ts\": %.3f, \"dur\": 8.25,\n    \"args\": {\n      \"External id\": %lld,\n      "
          "\"queued\": 0, \"device\": 0, \"context\": 1,\n      \"stream\": 7, \"correlation\": "
          "%lld,\n      \"registers per thread\": 32,\n      \"shared memory\": 0,\n      "
          "\"blocks per SM\": 1.2,\n      \"warps per SM\": 4.8,\n      \"grid\": [128, 1, 1],\n "
          "     \"block\": [128, 1, 1],\n      \"est. achieved occupancy %%\": 6\n    }\n  }",
          i % 50 == 49 ? "gpu_memcpy" : "kernel",
          i % 50 == 49 ? "Memcpy HtoD (Pageable -> Device)" : kKernels[i % 3], ts + 20, e, c);
      sep();
      written += emit(
          out,
          "  {\n    \"ph\": \"f\", \"id\": %lld, \"pid\": 0, \"tid\": 7, \"ts\": %.3f, \"cat\": "
          "\"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  }",
          c, ts + 20);
      if (i % 4 == 0) {
        const long long bytes = (i % 8 == 0) ? 262144 : -262144;
        if (bytes > 0) addr += 262144;
        sep();
        written += emit(
            out,
            "  {\n    \"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": "
            "\"[memory]\",\n    \"pid\": 493459, \"tid\": 493459,\n    \"ts\": %.3f,\n    "
            "\"args\": {\n      \"Total Reserved\": 12782141440, \"Total Allocated\": "
            "5435638784, \"Bytes\": %lld, \"Addr\": %lld, \"Device Id\": 0, \"Device Type\": 1\n "
            "   }\n  }",
            ts + 1, bytes, addr);
      }
      ts += 25.0;
    }
    sep();
    written += emit(
        out,
        "  {\n    \"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%d\", "
        "\"pid\": 493459, \"tid\": 493459,\n    \"ts\": %.3f, \"dur\": %.3f,\n    \"args\": {\n  "
        "    \"External id\": %lld, \"Ev Idx\": 0\n    }\n  }",
        step, step_begin - 1, ts - step_begin + 2, ext++);
    ts += 10.0;
  }
  std::fprintf(f, "\n  ],\n  \"traceName\": \"generated-a100\"\n}\n");
  return std::fclose(f) == 0 && std::fclose(out.jsonl) == 0 ? 0 : 1;
}

int ceiling(const char* path) {
  simdjson::padded_string json;
  if (simdjson::padded_string::load(path).get(json)) return 1;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  return parser.parse(json).get(doc) ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "generate") == 0) {
    return generate(std::strtoull(argv[2], nullptr, 10), argv[3]);
  }
  if (argc == 3 && std::strcmp(argv[1], "ceiling") == 0) return ceiling(argv[2]);
  if (argc == 3 && std::strcmp(argv[1], "ceiling-events") == 0) {
    return candle_graph::bench::run_parse_many(argv[2]);
  }
  std::fprintf(stderr,
               "usage: %s generate BYTES OUT | ceiling FILE | ceiling-events FILE.events.jsonl\n",
               argv[0]);
  return 2;
}
