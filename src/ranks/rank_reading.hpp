// Reading the ranks of a run: the inputs a command line names (files, or directories of traces)
// and each file read and reduced to its RankProfile, in parallel threads.
#pragma once

#include <filesystem>
#include <vector>

#include "candle_graph/importer.hpp"
#include "ranks/rank_profile.hpp"

namespace candle_graph::ranks {

// Every input file: a file as it is, a directory as its `*.json`, `*.json.gz` and `*.jsonl`
// regular files sorted by name. Throws Error naming the path when it does not exist or a
// directory holds no trace.
std::vector<std::filesystem::path> expand_rank_inputs(
    const std::vector<std::filesystem::path>& inputs);

// Reads and reduces every file with `jobs` threads (at least 1). The profiles are in the order
// of `files` whatever the number of threads; when files fail, the error of the first of them in
// that order is thrown (an Error naming the file), so the outcome does not depend on `jobs`.
// `options.progress` is not called (threads would interleave it).
std::vector<RankProfile> read_rank_profiles(const std::vector<std::filesystem::path>& files,
                                            const ImportOptions& options, unsigned jobs);

}  // namespace candle_graph::ranks
