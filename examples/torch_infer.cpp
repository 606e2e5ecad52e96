// torch_infer: captures one inference call of the example CNN (no gradient, no backward).
//
//   torch_infer [-o TRACE] [--batch B]   (defaults: torch_infer.jsonl, batch 8)
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "torch_example_model.hpp"

int main(int argc, char** argv) {
  std::string out = "torch_infer.jsonl";
  std::int64_t batch = 8;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if ((arg == "-o" || arg == "--output") && i + 1 < argc) {
      out = argv[++i];
    } else if (arg == "--batch" && i + 1 < argc) {
      batch = std::atoll(argv[++i]);
      if (batch <= 0) {
        std::fprintf(stderr, "torch_infer: --batch needs a positive integer\n");
        return 2;
      }
    } else {
      std::fprintf(stderr, "usage: torch_infer [-o TRACE] [--batch B]\n");
      return 2;
    }
  }
  try {
    torch_example::Trainer model({.batch = batch});
    model.infer();  // a warm-up call, like a serving process that already answered requests
    const auto s = model.captured_inference({.trace = out, .step = 2});
    std::printf(
        "captured inference call 2 -> %s\n  measured %.3f ms, %llu ops, %llu memory "
        "events (peak %llu bytes)\n",
        s.trace.c_str(), s.measured_ns / 1e6, static_cast<unsigned long long>(s.ops),
        static_cast<unsigned long long>(s.memory_events),
        static_cast<unsigned long long>(s.peak_bytes));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "torch_infer: %s\n", e.what());
    return 1;
  }
  return 0;
}
