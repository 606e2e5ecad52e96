// trace6.md §9.5 JSON of the evidence packet (declaration order), the comparison, and the bounded
// CLI slices summary/1 and trace-query/1 (keys sorted at every level, as the original's json!).
#pragma once

#include <cstddef>
#include <string_view>

#include "evidence/evidence_packet.hpp"
#include "output/json_stream.hpp"

namespace candle_graph::evidence {

void write_provenance(output::JsonStream& w, const TraceRunMeta& run, output::KeyOrder order);
void write_health(output::JsonStream& w, const TraceHealth& health, output::KeyOrder order);
void write_comparison(output::JsonStream& w, const Comparison& c, output::KeyOrder order);
void write_evidence_packet(output::JsonStream& w, const EvidencePacket& p);
// The elements write_evidence_packet writes as large arrays (output::write_elements: the graph's
// nodes and edges, the memory timeline), which its stream counts as it goes: a progress line's
// total.
std::uint64_t evidence_packet_elements(const EvidencePacket& p);

inline constexpr std::string_view kSummarySchema = "candle-graph/summary/1";
inline constexpr std::string_view kQuerySchema = "candle-graph/trace-query/1";

// `summary`: {findings, gaps, health, provenance, schema, summary}.
void write_summary_document(output::JsonStream& w, const EvidencePacket& p);

enum class QueryKind {
  slowest,
  heaviest,
  memory,
  efficiency,
  spans,
  tensors,
  gradients,
  ops,      // the key_averages() table: host and device time per op name
  kernels,  // device work per name and device
  steps,    // the profiler steps of the source
  gpu,      // per device: busy, idle and why, kernel types, streams, launches, sync stalls
};
std::optional<QueryKind> parse_query_kind(std::string_view s);
std::string_view to_string(QueryKind k);

// `query`: {gaps, health, result}. `limit` caps the op lists (50 in the original).
void write_query_document(output::JsonStream& w, const EvidencePacket& p, QueryKind kind,
                          std::size_t limit = 50);

}  // namespace candle_graph::evidence
