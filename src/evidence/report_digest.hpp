// What the report's added sections say ("Where the time went", "Memory at the peak", "GPU",
// "Against the baseline") and the headline `report --headline` prints, read off one evidence
// packet. The Markdown and the headline both render this digest, so a figure shown twice is the
// same figure: nothing here re-derives what the packet already holds (the measured total, the
// peak, the kernel rows, the comparison), it only selects, groups and divides.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "evidence/evidence_packet.hpp"

namespace candle_graph::evidence {

// Self time of one op name inside one span.
struct SpanSelfTime {
  std::uint32_t span = kNoIndex;  // index into doc.spans()
  std::uint64_t self_time_ns = 0;
};

// One op name over the measured region: the graph's op-kind nodes (op events and spans of kind
// op) grouped by name.
struct OpNameCost {
  std::string_view name;
  std::uint64_t calls = 0;
  std::uint64_t self_time_ns = 0;   // Σ of the nodes' self_time_ns
  std::uint64_t mean_ns = 0;        // self_time_ns / calls, rounded down
  double share = 0;                 // self_time_ns ÷ graph.summary.total_ms (0 when that is 0)
  std::vector<SpanSelfTime> spans;  // where it ran: most self time first, ties in span order
};

struct TimeDigest {
  double total_ms = 0;                // graph.summary.total_ms
  std::vector<OpNameCost> top;        // most self time first, ties by name; ≤ the limit
  std::uint64_t op_names = 0;         // distinct op names in the measured region
  std::uint64_t op_calls = 0;         // op-kind nodes in the measured region
  std::uint64_t op_self_time_ns = 0;  // their Σ self time
};

struct PeakDigest {
  const MemorySummary* summary = nullptr;      // graph.memory.summary; null: no memory event
  std::uint32_t span = kNoIndex;               // where the allocation that set the peak was made
  std::uint32_t measured_span = kNoIndex;      // the first measured span (for "into the region")
  std::vector<const LiveAllocation*> largest;  // the head of graph.memory.peak_breakdown
  std::uint64_t live_allocations = 0;          // graph.memory.peak_breakdown.size()
};

struct GpuDigest {
  bool available = false;                                            // gpu.status == available
  std::vector<const import::nsight::NsightSummaryRow*> top_kernels;  // the head of gpu.kernels
  std::uint64_t kernel_rows = 0;                                     // gpu.kernels.size()
  std::uint64_t kernel_ns = 0;                                       // Σ gpu.kernels[].total_ns
  std::uint64_t memcpy_ns = 0;        // Σ memory operations of category memcpy
  std::uint64_t other_memory_ns = 0;  // Σ the other memory operations (memset)
  std::uint64_t device_ns = 0;        // kernel + memcpy + other memory
  bool memory_summary = false;        // gpu.coverage.memory_summary
  bool truncated = false;             // a kernel or memory summary hit its row cap
};

struct ReportDigest {
  TimeDigest time;
  PeakDigest peak;
  GpuDigest gpu;
  const Comparison* comparison = nullptr;  // packet.comparison
};

struct DigestLimits {
  std::size_t ops = 10;
  std::size_t spans_per_op = 2;
  std::size_t tensors = 5;
  std::size_t kernels = 5;
};

ReportDigest make_report_digest(const EvidencePacket& packet, const DigestLimits& limits = {});

// Rendering shared by the Markdown sections and the headline.
std::string format_duration_ns(std::uint64_t ns);  // `840 ns`, `12.3 µs`, `1.92 ms`, `3.20 s`
std::string format_signed_duration_ns(std::int64_t ns);  // `+1.20 ms`, `-840 ns`, `0 ns`
std::string format_bytes(std::uint64_t bytes);           // `512 B`, `41756 B (40.8 KiB)`
std::string format_share(double fraction);               // `16.2%`
// A span's name with the measured region's name and `/` removed when it starts with them
// (`…/forward`), so the tables stay narrow; the region's own name is kept whole.
std::string short_span_name(const TraceDocument& doc, std::uint32_t measured_span,
                            std::uint32_t span);

// The Markdown that follows the original's sections (trace6.md §9.3 and the baseline section): the
// four added sections, each starting with a blank line and a `## ` heading.
std::string render_report_sections(const EvidencePacket& packet, const ReportDigest& digest);

// render_markdown(packet) followed by render_report_sections: the `report` command's Markdown.
std::string render_report(const EvidencePacket& packet);

// The report's top lines as plain text for a terminal: trust verdict, measured total, the three
// heaviest ops and the peak (`report --headline`, the end of `./run demo`).
std::string render_headline(const EvidencePacket& packet, const ReportDigest& digest);

}  // namespace candle_graph::evidence
