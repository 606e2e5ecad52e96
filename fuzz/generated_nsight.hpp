// An `nsys stats --format csv` report built from a fuzzer's bytes, with the rows it holds, for
// the Nsight reader's target: mutated CSV mostly fails at its header or its first row, so the
// rows' values (units, fractions, thousands separators, quoted names with commas, quotes and
// line breaks, padding, rows without a name) would reach the reader only through the seeds. The
// bytes choose one of six reports in the layouts nsys writes (the kernel summary in its 2021 and
// its present header, the runtime, memory-time and NVTX summaries, the GPU trace, the NVTX
// push/pop trace), the summaries' time unit, and up to 140 rows.
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <array>
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzzed_names.hpp"

namespace candle_graph::fuzz {

// A row as the reader should give it back: times in ns.
struct NsightRowWritten {
  std::string name;
  std::uint64_t total_ns = 0, count = 0, average_ns = 0, minimum_ns = 0, maximum_ns = 0;
  std::uint64_t start_ns = 0, duration_ns = 0, correlation = 0, stream = 0, device = 0;
};

struct NsightReportWritten {
  enum class Kind { kernels, runtime, memory_time, nvtx_summary, gpu_trace, nvtx_pushpop };
  Kind kind = Kind::kernels;
  std::string file_name;
  std::string text;
  std::vector<NsightRowWritten> rows;  // the named rows, in file order
  std::uint64_t unnamed_rows = 0;      // rows whose name is a null marker (skipped)
};

class NsightGenerator {
 public:
  NsightGenerator(const std::uint8_t* data, std::size_t size) : in_(data, size) {}

  NsightReportWritten report() {
    using Kind = NsightReportWritten::Kind;
    out_.kind = static_cast<Kind>(in_.ConsumeIntegralInRange<int>(0, 5));
    const bool timeline = out_.kind == Kind::gpu_trace || out_.kind == Kind::nvtx_pushpop;
    if (!timeline) choose_unit();
    out_.text = header();
    const unsigned rows = in_.ConsumeIntegralInRange<unsigned>(0, 140);
    for (unsigned r = 0; r < rows && in_.remaining_bytes() > 0; ++r) {
      NsightRowWritten row;
      const bool unnamed = in_.ConsumeIntegralInRange<int>(0, 15) == 0;
      row.name = unnamed ? std::string(kNullMarkers[in_.ConsumeIntegralInRange<std::size_t>(
                               0, kNullMarkers.size() - 1)])
                         : name();
      out_.text += timeline ? timeline_row(row) : summary_row(row);
      out_.text += in_.ConsumeIntegralInRange<int>(0, 7) == 0 ? "\r\n" : "\n";
      if (unnamed)
        ++out_.unnamed_rows;
      else
        out_.rows.push_back(std::move(row));
    }
    return std::move(out_);
  }

 private:
  static constexpr std::array<std::string_view, 5> kNullMarkers = {"None", "", "-", "N/A", "null"};
  static constexpr std::uint64_t kMaxValue = std::uint64_t{1} << 40;

  void choose_unit() {
    static constexpr std::array<std::pair<std::string_view, std::uint64_t>, 3> kUnits = {
        {{"ns", 1}, {"us", 1000}, {"ms", 1000000}}};
    const auto& unit = kUnits[in_.ConsumeIntegralInRange<std::size_t>(0, kUnits.size() - 1)];
    unit_ = std::string(unit.first);
    ns_per_unit_ = unit.second;
  }

  std::string header() {
    using Kind = NsightReportWritten::Kind;
    const std::string u = " (" + unit_ + ")";
    const std::string stats = "Time (%),Total Time" + u;
    const std::string spread = ",Avg" + u + ",Med" + u + ",Min" + u + ",Max" + u + ",StdDev" + u;
    switch (out_.kind) {
      case Kind::kernels:
        old_layout_ = in_.ConsumeBool();
        if (old_layout_) {  // 2021: `gpukernsum`, averages without a unit (ns)
          unit_ = "ns";
          ns_per_unit_ = 1;
          out_.file_name = "gen_gpukernsum.csv";
          return "Time(%),Total Time (ns),Instances,Average,Minimum,Maximum,StdDev,Name\n";
        }
        out_.file_name = "gen_cuda_gpu_kern_sum.csv";
        return stats + ",Instances" + spread + ",Name\n";
      case Kind::runtime:
        out_.file_name = "gen_cuda_api_sum.csv";
        return stats + ",Num Calls" + spread + ",Name\n";
      case Kind::memory_time:
        out_.file_name = "gen_cuda_gpu_mem_time_sum.csv";
        return stats + ",Count" + spread + ",Operation\n";
      case Kind::nvtx_summary:
        out_.file_name = "gen_nvtx_sum.csv";
        return stats + ",Instances" + spread + ",Style,Range\n";
      case Kind::gpu_trace:
        out_.file_name = "gen_cuda_gpu_trace.csv";
        return "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,"
               "StcSMem (MB),DymSMem (MB),Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,"
               "Ctx,GreenCtx,Strm,Name\n";
      case Kind::nvtx_pushpop:
        out_.file_name = "gen_nvtx_pushpop_trace.csv";
        return "Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,PID,TID,"
               "Lvl,NumChild,RangeId,ParentId,RangeStack,NameTree\n";
    }
    return {};
  }

  // A name the reader keeps as written: no carriage return (a line break inside a quoted field
  // is read as `\n`), no space around it (cells are trimmed), not a null marker.
  std::string name() {
    static constexpr std::string_view kNames[] = {
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int)",
        "ncclDevKernel_AllGather_RING_LL(ncclDevComm *, unsigned long, ncclWork *)",
        "[CUDA memcpy Host-to-Device]",
        "[CUDA memset]",
        "cudaLaunchKernel",
        ":measured_request",
        "domain:forward",
        "a \"quoted\" name",
        "line\nbreak",
        "comma, inside",
        "\xC3\xA9t\xC3\xA9",
        "_Z4gemmv"};
    std::string s = fuzzed_name(in_, kNames);
    for (char& c : s)
      if (c == '\r') c = '?';
    std::size_t first = 0, last = s.size();
    while (first < last && std::isspace(static_cast<unsigned char>(s[first]))) ++first;
    while (last > first && std::isspace(static_cast<unsigned char>(s[last - 1]))) --last;
    s = s.substr(first, last - first);
    std::string folded;
    for (char c : s) folded += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (folded.empty() || folded == "none" || folded == "-" || folded == "n/a" || folded == "null")
      s = "named";
    return s;
  }

  // The name as a CSV cell: quoted when it must be (or when the bytes say so), with spaces
  // around it now and then, which the reader trims.
  std::string name_cell(const std::string& name) {
    const bool quote = name.find_first_of(",\"\n") != std::string::npos || in_.ConsumeBool();
    const std::string pad = in_.ConsumeIntegralInRange<int>(0, 7) == 0 ? " " : "";
    if (!quote) return pad + name;
    std::string cell = "\"" + pad;  // inside the quotes: a quote opens a field only as its first
    for (char c : name) cell += c == '"' ? std::string("\"\"") : std::string(1, c);
    return cell + '"';
  }

  // A whole number of the unit, written plain or, quoted, with thousands separators.
  std::string units(std::uint64_t v) {
    std::string digits = std::to_string(v);
    if (digits.size() < 4 || !in_.ConsumeBool()) return digits;
    std::string grouped;
    for (std::size_t i = 0; i < digits.size(); ++i) {
      if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
      grouped += digits[i];
    }
    return '"' + grouped + '"';
  }

  std::uint64_t value() { return in_.ConsumeIntegralInRange<std::uint64_t>(0, kMaxValue); }

  std::string summary_row(NsightRowWritten& row) {
    const std::uint64_t total = value(), count = value() >> 8, minimum = value(), maximum = value(),
                        average = value();
    const unsigned tenths = in_.ConsumeIntegralInRange<unsigned>(0, 9);
    row.total_ns = total * ns_per_unit_;
    row.count = count;
    row.minimum_ns = minimum * ns_per_unit_;
    row.maximum_ns = maximum * ns_per_unit_;
    // Fractions are cut after the unit's scaling: 7.5 ns is 7 ns, 7.5 us is 7,500 ns.
    row.average_ns = (average * 10 + tenths) * ns_per_unit_ / 10;
    const std::string avg = std::to_string(average) + "." + std::to_string(tenths);
    std::string line = "12.5," + units(total) + "," + std::to_string(count) + "," + avg + ",";
    if (!old_layout_) line += avg + ",";  // the median
    line += units(minimum) + "," + units(maximum) + ",0.0,";
    if (out_.kind == NsightReportWritten::Kind::nvtx_summary) line += "PushPop,";
    return line + name_cell(row.name);
  }

  std::string timeline_row(NsightRowWritten& row) {
    row.start_ns = value();
    row.duration_ns = in_.ConsumeIntegralInRange<std::uint64_t>(1, kMaxValue);
    row.correlation = in_.ConsumeIntegralInRange<std::uint64_t>(0, 1u << 20);
    row.stream = in_.ConsumeIntegralInRange<std::uint64_t>(0, 64);
    row.device = in_.ConsumeIntegralInRange<std::uint64_t>(0, 7);
    const std::string start = units(row.start_ns);
    if (out_.kind == NsightReportWritten::Kind::gpu_trace)
      return start + "," + units(row.duration_ns) + "," + std::to_string(row.correlation) +
             ",,,,,,,,,,,,,,\"NVIDIA H100 80GB HBM3 (" + std::to_string(row.device) + ")\",1,," +
             std::to_string(row.stream) + "," + name_cell(row.name);
    return start + "," + std::to_string(row.start_ns + row.duration_ns) + "," +
           units(row.duration_ns) + ",0," + std::to_string(row.duration_ns) + "," +
           name_cell(row.name) + ",53,53,0,0,1,,:1," + name_cell(row.name);
  }

  FuzzedDataProvider in_;
  NsightReportWritten out_;
  std::string unit_ = "ns";
  std::uint64_t ns_per_unit_ = 1;
  bool old_layout_ = false;
};

inline NsightReportWritten generated_nsight(const std::uint8_t* data, std::size_t size) {
  return NsightGenerator(data, size).report();
}

}  // namespace candle_graph::fuzz
