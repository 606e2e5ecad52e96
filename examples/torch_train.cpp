// torch_train: trains the small example CNN (integrations/torch/examples/torch_example_model.hpp)
// on its generated data set for a few Adam updates and captures one of them with
// candle_graph::libtorch::TorchCapture.
//
//   torch_train [-o TRACE] [--capture-step N] [--steps M] [--batch B]
//   (defaults: torch_train.jsonl, update 3 of 5, batch 8), then: candle-graph import TRACE
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "torch_example_model.hpp"

namespace {

struct Args {
  std::string out = "torch_train.jsonl";
  std::uint64_t capture_step = 3;
  std::uint64_t steps = 5;
  std::int64_t batch = 8;
};

constexpr const char* kHelp =
    "torch_train: trains the example CNN (Conv2d 1->4, max-pool, Linear 64->32->10, Adam) on a\n"
    "generated data set and captures one update into a candle-graph trace/6 file.\n"
    "\n"
    "usage: torch_train [-o TRACE] [--capture-step N] [--steps M] [--batch B]\n"
    "  -o, --output TRACE  trace file to write (default torch_train.jsonl)\n"
    "  --capture-step N    the update to capture, 1-based (default 3: two plain updates first)\n"
    "  --steps M           updates to run in all (default 5; raised to N if smaller)\n"
    "  --batch B           images per update (default 8)\n"
    "  -h, --help          this text\n"
    "\n"
    "then: candle-graph validate TRACE; candle-graph import TRACE -o evidence.json;\n"
    "      candle-graph view TRACE -o trace.html\n";

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "torch_train: %s\nusage: torch_train [-o TRACE] [--capture-step N] [--steps M] "
               "[--batch B] (--help for more)\n",
               why);
  std::exit(2);
}

std::uint64_t positive(const char* text, const char* flag) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0' || v == 0)
    usage((std::string(flag) + " needs a positive integer").c_str());
  return v;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kHelp, stdout);
      std::exit(0);
    }
    if (i + 1 >= argc) usage(("missing value after " + std::string(arg)).c_str());
    if (arg == "-o" || arg == "--output")
      a.out = argv[++i];
    else if (arg == "--capture-step")
      a.capture_step = positive(argv[++i], "--capture-step");
    else if (arg == "--steps")
      a.steps = positive(argv[++i], "--steps");
    else if (arg == "--batch")
      a.batch = static_cast<std::int64_t>(positive(argv[++i], "--batch"));
    else
      usage(("unknown argument " + std::string(arg)).c_str());
  }
  if (a.capture_step > a.steps) a.steps = a.capture_step;
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  try {
    torch_example::ModelOptions model;
    model.batch = args.batch;
    torch_example::Trainer trainer(model);
    for (std::uint64_t step = 1; step <= args.steps; ++step) {
      if (step != args.capture_step) {
        std::printf("update %llu: loss %.4f\n", static_cast<unsigned long long>(step),
                    trainer.train_step());
        continue;
      }
      double loss = 0;
      const auto s = trainer.captured_train_step({.trace = args.out, .step = step}, &loss);
      std::printf("update %llu: loss %.4f (captured)\n", static_cast<unsigned long long>(step),
                  loss);
      std::printf(
          "captured update %llu -> %s\n  measured %.3f ms, %llu ops, %llu memory events "
          "(%llu allocs, %llu frees, peak %llu bytes, %llu live at end), %llu gradient facts\n"
          "  frees of blocks allocated before the capture: %llu (%llu bytes), not written\n"
          "  memory capture: %s\n",
          static_cast<unsigned long long>(step), s.trace.c_str(), s.measured_ns / 1e6,
          static_cast<unsigned long long>(s.ops), static_cast<unsigned long long>(s.memory_events),
          static_cast<unsigned long long>(s.allocs), static_cast<unsigned long long>(s.frees),
          static_cast<unsigned long long>(s.peak_bytes),
          static_cast<unsigned long long>(s.live_at_end),
          static_cast<unsigned long long>(s.gradients),
          static_cast<unsigned long long>(s.pre_capture_frees),
          static_cast<unsigned long long>(s.pre_capture_free_bytes),
          s.memory_captured ? "on" : s.memory_note.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "torch_train: %s\n", e.what());
    return 1;
  }
  return 0;
}
