// One rank of a distributed run, reduced right after its trace is read (docs/ranks.md): who it
// is (rank, world size), its profiler steps, the GPU time of its measured region and its
// collective kernels on the trace's own clock. Only this small value outlives the document, so
// reading a run's ranks takes memory for one trace per thread, not for every rank.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "candle_graph/trace_document.hpp"

namespace candle_graph::ranks {

// One collective kernel on its rank's own clock (the region's absolute start + its offset).
struct CollectiveCall {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  // The process group's sequence number of the call, where PyTorch recorded it (`Seq` of
  // record_param_comms): calls with one seq in one group are the same call on every rank.
  std::optional<std::uint64_t> seq;
};

// The collective calls of one name in one process group on one rank, by start.
struct RankCollective {
  // PyTorch's `Collective name` ("allreduce") where record_param_comms recorded one, else the
  // kernel name without its parameter list ("ncclKernel_AllReduce_RING_LL_Sum_float").
  std::string name;
  std::string process_group;  // empty when not recorded
  std::vector<CollectiveCall> calls;
  std::uint64_t total_ns = 0;  // Σ of their device times
};

struct StepWall {
  std::uint64_t step = 0;
  std::uint64_t wall_ns = 0;
  // The last step, cut short by the profiler's stop (trace/profiler_steps.hpp): listed, but its
  // wall time says when the profiler stopped, not how long a step takes.
  bool cut_short = false;
};

struct RankProfile {
  std::string file;  // the path as it was given
  std::uint64_t rank = 0;
  std::string rank_from;  // "distributedInfo" (the `source.rank` tag) or "file name"
  std::optional<std::uint64_t> world_size;
  std::string backend;
  std::string device;  // the run's device (`cuda:3`); empty when unknown (an older summary)
  // Its GPU's model where the trace names it (`source.device_name`, Kineto's deviceProperties).
  std::optional<std::string> gpu_model;
  // The measured region's start on the trace's own clock (`source.region_start_ns`); without it
  // the rank cannot be put on a common clock with the others.
  std::optional<std::int64_t> region_start_ns;
  std::uint64_t region_ns = 0;  // the measured region's wall time
  std::vector<StepWall> steps;  // every profiler step, in order
  // The GPU analysis of the measured region (device/gpu_analysis.hpp), summed over the rank's
  // devices (one per rank in the usual one-GPU-per-process layout).
  std::uint64_t busy_ns = 0, compute_ns = 0, communication_ns = 0, idle_ns = 0;
  std::uint64_t exposed_communication_ns = 0;  // communication not overlapped by compute
  std::optional<double> comm_compute_overlap;  // overlap ÷ communication; absent without any
  std::vector<RankCollective> collectives;     // by name
  // The run's process groups as this rank's trace lists them (distributedInfo.pg_config): the
  // group's name and its entry as compact JSON. Ranks of one run agree on a group they share.
  std::map<std::string, std::string> process_groups;
  // Why the rank's trace is untrusted (its first health error, and how many more there are);
  // empty when it is trusted. Its figures above are then as wrong as that error says.
  std::string untrusted;
};

// The rank a file name states: `rank-N`, `rank_N`, `rankN` or `workerN` (case-insensitive; the
// last such mention wins, so a directory name does not), else nothing.
std::optional<std::uint64_t> rank_from_file_name(std::string_view file_name);

// The collective's name of a kernel: its name up to the parameter list.
std::string_view collective_name(std::string_view kernel_name);

// Reduces `doc` (read from `file`) to its profile. The rank comes from the `source.rank` tag
// (Kineto's distributedInfo), else from the file name; throws Error naming `file` when neither
// states one.
RankProfile profile_rank(const TraceDocument& doc, const std::string& file);

}  // namespace candle_graph::ranks
