// torch_infer: captures one inference call of the example CNN (no gradient, no backward).
//
//   torch_infer [-o TRACE] [--batch B]   (defaults: torch_infer.jsonl, batch 8)
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "torch_example_model.hpp"

constexpr const char* kHelp =
    "torch_infer: captures one inference call (no gradient) of the example CNN into a\n"
    "candle-graph trace/6 file, after one uncaptured call.\n"
    "\n"
    "usage: torch_infer [-o TRACE] [--batch B]\n"
    "  -o, --output TRACE  trace file to write (default torch_infer.jsonl)\n"
    "  --batch B           images per call (default 8)\n"
    "  -h, --help          this text\n"
    "\n"
    "then: candle-graph validate TRACE; candle-graph import TRACE -o evidence.json\n";

int main(int argc, char** argv) {
  std::string out = "torch_infer.jsonl";
  std::int64_t batch = 8;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kHelp, stdout);
      return 0;
    }
    if ((arg == "-o" || arg == "--output") && i + 1 < argc) {
      out = argv[++i];
    } else if (arg == "--batch" && i + 1 < argc) {
      char* end = nullptr;
      const char* text = argv[++i];
      batch = std::strtoll(text, &end, 10);
      if (end == text || *end != '\0' || batch <= 0) {
        std::fprintf(stderr, "torch_infer: --batch needs a positive integer\n");
        return 2;
      }
    } else {
      std::fprintf(stderr,
                   "torch_infer: unknown or incomplete argument %s\nusage: torch_infer [-o TRACE] "
                   "[--batch B] (--help for more)\n",
                   argv[i]);
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
