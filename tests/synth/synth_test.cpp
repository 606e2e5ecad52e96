// synth: valid, trusted, realistic, deterministic for a seed.
#include "candle_graph/health.hpp"
#include "support/trace_lines.hpp"
#include "synth/synthetic_trace.hpp"

namespace {

using namespace cgtest;
using namespace candle_graph;

std::string synth_text(std::uint64_t layers, std::uint64_t ops, std::uint64_t seed,
                       synth::SynthStats* stats = nullptr) {
  std::string text;
  const synth::SynthStats s = synth::generate({.layers = layers, .ops_per_span = ops, .seed = seed},
                                              [&](std::string_view bytes) { text.append(bytes); });
  if (stats != nullptr) *stats = s;
  return text;
}

TEST(Synth, ValidTrustedAndComplete) {
  for (std::uint64_t layers : {1u, 2u, 8u, 33u}) {
    SCOPED_TRACE(layers);
    synth::SynthStats stats;
    const std::string text = synth_text(layers, 3, 5, &stats);
    const TraceDocument doc = parse_trace_text(text, "synth");
    const TraceHealth h = analyze_health(doc);
    EXPECT_TRUE(h.trusted);
    // No gaps either: every kind of evidence is there and every allocation is freed.
    for (const auto& i : h.issues) ADD_FAILURE() << i.code << ": " << i.message;
    EXPECT_EQ(stats.events, doc.event_count());
    EXPECT_EQ(stats.bytes, text.size());
    EXPECT_EQ(stats.ops, doc.ops().size());
    const EvidenceCoverage& c = h.coverage;
    EXPECT_EQ(c.root_spans, 1u);
    EXPECT_EQ(c.measured_spans, 1u);
    EXPECT_EQ(c.forward_spans, 1u);
    EXPECT_EQ(c.backward_spans, 1u);
    EXPECT_EQ(c.optimizer_spans, 1u);
    EXPECT_EQ(c.gradients, layers);
    EXPECT_GE(c.device_memory_samples, 1u);
    EXPECT_GT(c.tensors, 0u);
    // root, region, 3 step spans, a module span per layer in forward and backward
    EXPECT_EQ(c.spans, 5 + 2 * layers);
    // forward and backward k ops per layer, one optimizer update per layer
    EXPECT_EQ(c.operations, 2 * layers * 3 + layers);
  }
}

TEST(Synth, RealisticShape) {
  const TraceDocument doc = parse_trace_text(synth_text(4, 4, 1), "synth");
  int module_spans = 0;
  for (const auto& s : doc.spans()) module_spans += s.kind == SpanKind::module;
  EXPECT_EQ(module_spans, 8);
  std::size_t with_inputs = 0, with_output = 0;
  for (const auto& o : doc.ops()) {
    with_inputs += !o.inputs.empty();
    with_output += o.output.has_value();
  }
  EXPECT_EQ(with_inputs, doc.ops().size());
  EXPECT_GT(with_output, 0u);
  std::size_t allocs = 0, frees = 0;
  bool categories[5] = {};
  for (const auto& m : doc.memory()) {
    (m.action == MemoryAction::alloc ? allocs : frees)++;
    categories[static_cast<int>(m.category)] = true;
  }
  EXPECT_EQ(allocs, frees);
  EXPECT_TRUE(categories[static_cast<int>(MemoryCategory::activation)]);
  EXPECT_TRUE(categories[static_cast<int>(MemoryCategory::gradient)]);
  EXPECT_EQ(doc.run().phase, ExecutionPhase::train);
}

TEST(Synth, EveryGradientStateWithEightLayers) {
  for (std::uint64_t layers : {8u, 9u, 64u}) {
    const TraceDocument doc = parse_trace_text(synth_text(layers, 1, 3), "synth");
    bool seen[4] = {};
    for (const auto& g : doc.gradients()) {
      seen[static_cast<int>(g.state)] = true;
      // a norm only where one can be known
      if (g.state == GradientState::missing || g.state == GradientState::non_finite) {
        EXPECT_FALSE(g.norm.has_value());
      }
    }
    for (int s = 0; s < 4; ++s)
      EXPECT_TRUE(seen[s]) << "layers " << layers << ": no "
                           << to_string(static_cast<GradientState>(s));
  }
}

TEST(Synth, DeterministicForASeed) {
  EXPECT_EQ(synth_text(10, 3, 42), synth_text(10, 3, 42));
  EXPECT_NE(synth_text(10, 3, 42), synth_text(10, 3, 43));
}

TEST(Synth, GenerateFileEqualsTheStream) {
  TempDir dir;
  const fs::path p = dir / "sub" / "synth.jsonl";
  const synth::SynthStats stats =
      synth::generate_file({.layers = 6, .ops_per_span = 2, .seed = 9}, p);
  const std::string text = read_file(p);
  EXPECT_EQ(text, synth_text(6, 2, 9));
  EXPECT_EQ(stats.bytes, text.size());
}

// Large enough that the generator flushes its 1 MiB buffer several times.
TEST(Synth, LargeTraceStaysTrusted) {
  const std::string text = synth_text(3000, 2, 7);
  EXPECT_GT(text.size(), 3u << 20);
  const TraceHealth h = analyze_health(parse_trace_text(text, "synth"));
  EXPECT_TRUE(h.trusted);
  EXPECT_TRUE(h.issues.empty());
}

}  // namespace
