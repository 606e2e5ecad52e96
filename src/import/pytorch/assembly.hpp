// Assembly: the compact model -> one trusted trace/6 trace (meta, span tree, ops, memory).
// kineto_assembly.cpp handles Kineto and legacy traces, candle_chrome_mapping.cpp candle-graph's
// own Chrome export.
#pragma once

#include <map>
#include <string>

#include "import/convert.hpp"
#include "import/trace_event/event_model.hpp"
#include "import/trace_output.hpp"

namespace candle_graph::import::pytorch {

using trace_event::CandleOpArgs;
using trace_event::CandleSpanArgs;
using trace_event::Flow;
using trace_event::kNone;
using trace_event::MemoryInstant;
using trace_event::Model;
using trace_event::Role;
using trace_event::Slice;

ConvertResult assemble_pytorch(Model& model, const ConvertOptions& options,
                               const SourceInfo& source, const std::string& path, TraceOutput& out);

// True when otherData.schema says the file is candle-graph's own Chrome export.
bool is_candle_chrome(const Model& model);
ConvertResult assemble_candle_chrome(Model& model, const SourceInfo& source,
                                     const std::string& path, TraceOutput& out);

// "YYYY-MM-DDTHH:MM:SS.mmmZ" for Unix-epoch nanoseconds.
std::string iso_utc(std::int64_t epoch_ns);
// `convert.ignored.<category>` counts, at most 32 categories (the rest summed).
void add_ignored(std::map<std::string, std::uint64_t>& repairs,
                 const std::map<std::string, std::uint64_t>& ignored);
// Repairs as sorted (key, count) pairs plus their meta tags.
void add_counts(ConvertResult& result, const std::map<std::string, std::uint64_t>& counts);

}  // namespace candle_graph::import::pytorch
