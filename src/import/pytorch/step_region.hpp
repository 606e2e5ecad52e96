// The first passes over a PyTorch trace's compact model: which events are steps, ops,
// annotations and device work, and which profiler step is the measured region.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "candle_graph/trace_events.hpp"
#include "import/trace_event/event_model.hpp"
#include "import/trace_event/trace_event_source.hpp"

namespace candle_graph::import::pytorch {

using trace_event::kNone;
using trace_event::Model;
using trace_event::RepairCounts;

struct Step {
  std::uint64_t number = 0;  // N of ProfilerStep#N
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::uint32_t name = kNone;
  std::uint64_t ops = 0;  // CPU ops starting inside it
};

// Slice indices by role: steps sorted by start, CPU ops sorted by start.
struct EventLists {
  std::vector<Step> steps;
  std::vector<std::uint32_t> cpu_ops;
  std::vector<std::uint32_t> annotations;
  std::vector<std::uint32_t> device_ops;
  std::vector<std::uint32_t> runtime_calls;  // cuda_runtime / cuda_driver / hip* on the host
};

// Throws Error naming `path` when the model holds no operator, annotation, kernel or step.
EventLists classify_events(const Model& m, const std::string& path, RepairCounts& repairs);

// The measured region: `[begin, end]` in source ns.
struct Region {
  const Step* step = nullptr;  // the ProfilerStep measured, or null for the whole window
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::string measured_name;  // "ProfilerStep#3" or "profiled window"
  std::uint64_t capture_step = 1;
};

// `--step N` picks ProfilerStep#N (Error naming `path` and the steps present when there is none);
// by default the last step, unless it holds fewer than half the CPU ops of the step before it
// (the profiler's stop cut it short). Without steps, or with `all_steps`: the whole window of
// every event.
Region choose_region(const Model& m, const EventLists& lists, std::optional<std::uint64_t> step,
                     bool all_steps, const std::string& path, RepairCounts& repairs);

// Every profiler step with its wall time and the time its device work (kernels, memcpys,
// memsets: launched inside the step, by the launch's time) kept the devices busy, their union.
std::vector<ProfilerStepRecord> step_records(const Model& m, const EventLists& lists);

// CPU ops (sorted by start) that start inside [begin, end].
std::uint64_t ops_starting_in(const Model& m, const std::vector<std::uint32_t>& cpu_ops,
                              std::int64_t begin, std::int64_t end);

}  // namespace candle_graph::import::pytorch
