// The report's added sections ("Where the time went", "Memory at the peak", "GPU", "Against the
// baseline") and `report --headline`, end to end through the real binary. Every expected figure
// is derived here, independently of the code under test, from the evidence JSON the same run
// wrote (graph spans/ops, memory summary and peak breakdown, gpu rows, comparison) plus the
// trace's own `measured` flags; the Markdown is parsed back and compared within the rounding
// of its printed digits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "support/evidence_helpers.hpp"
#include "support/run_program.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The text of section `## title` (up to the next `## ` heading), or "" when absent.
std::string section(const std::string& md, const std::string& title) {
  const std::string head = "\n## " + title + "\n";
  const auto at = md.find(head);
  if (at == std::string::npos) return "";
  const auto end = md.find("\n## ", at + head.size());
  return md.substr(at + head.size(), end == std::string::npos ? std::string::npos : end - at);
}

// Body rows of the first Markdown table in `text` after `after`, split into trimmed cells.
std::vector<std::vector<std::string>> table(const std::string& text, const std::string& after) {
  std::vector<std::vector<std::string>> rows;
  const auto at = text.find(after);
  if (at == std::string::npos) return rows;
  bool in_table = false;
  int row = 0;
  for (const std::string& line : split_lines(text.substr(at))) {
    if (line.rfind("| ", 0) != 0) {
      if (in_table) break;
      continue;
    }
    in_table = true;
    if (row++ < 2) continue;  // header and alignment rows
    std::vector<std::string> cells;
    std::string cell;
    for (std::size_t i = 1; i < line.size(); ++i) {
      if (line[i] == '|' && line[i - 1] != '\\') {
        const auto b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
        cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
        cell.clear();
      } else {
        cell += line[i];
      }
    }
    rows.push_back(cells);
  }
  return rows;
}

std::string unquote(const std::string& cell) {  // `x` → x
  if (cell.size() >= 2 && cell.front() == '`' && cell.back() == '`')
    return cell.substr(1, cell.size() - 2);
  return cell;
}

// "283.7 µs" → (283700 ns, half of the last printed digit in ns).
std::pair<double, double> parse_duration(const std::string& text) {
  const double v = std::strtod(text.c_str(), nullptr);
  const auto dot = text.find('.');
  const auto space = text.find(' ');
  const int decimals = dot == std::string::npos ? 0 : static_cast<int>(space - dot - 1);
  const std::string unit = text.substr(space + 1);
  const double scale = unit == "ns" ? 1 : unit == "µs" ? 1e3 : unit == "ms" ? 1e6 : 1e9;
  EXPECT_TRUE(unit == "ns" || unit == "µs" || unit == "ms" || unit == "s") << text;
  return {v * scale, 0.5 * std::pow(10.0, -decimals) * scale + 1e-9};
}

void expect_duration(const std::string& text, double expected_ns, const std::string& what) {
  const auto [v, tolerance] = parse_duration(text);
  EXPECT_NEAR(v, expected_ns, tolerance) << what << ": " << text;
}

void expect_percent(const std::string& text, double expected_fraction, const std::string& what) {
  EXPECT_NEAR(std::strtod(text.c_str(), nullptr), expected_fraction * 100.0, 0.05 + 1e-9)
      << what << ": " << text;
}

std::uint64_t leading_bytes(const std::string& text) {  // "41756 B (40.8 KiB)" → 41756
  return std::strtoull(text.c_str(), nullptr, 10);
}

// The trace's `measured` flags and parent ids, read from the JSONL itself.
std::set<std::string> measured_subtree(const std::string& trace_path) {
  std::map<std::string, std::string> parent;
  std::set<std::string> region;
  for (const std::string& line : split_lines(cg_test::read_file(trace_path))) {
    // The LibTorch writer pads its blocks with whitespace-only lines (valid trace/6).
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const json e = json::parse(line);
    if (e["kind"] != "span_start") continue;
    const std::string id = e["id"];
    if (e.contains("parent_id") && e["parent_id"].is_string()) parent[id] = e["parent_id"];
    if (e.value("measured", false)) region.insert(id);
  }
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [child, p] : parent)
      if (region.count(p) && !region.count(child)) grew = region.insert(child).second;
  }
  return region;
}

// Op node ids (`{span}/op/{n}`) that key_averages counts as part of their parent's call: the only
// child of an op of the same name. The nesting is rebuilt here from the trace's op lines
// (timestamp_ns, total_ns else duration_ns, thread) with PyTorch's stack rule, not read from the
// tool.
std::set<std::string> merged_into_parent(const std::string& trace_path) {
  struct Op {
    std::string id, name;
    std::uint64_t thread = 0, start = 0, end = 0;
    int children = 0;
    const Op* parent = nullptr;
  };
  std::vector<Op> ops;
  std::map<std::string, int> ordinal;
  for (const std::string& line : split_lines(cg_test::read_file(trace_path))) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const json e = json::parse(line);
    if (e["kind"] != "op" || e.value("op_kind", "host") != "host") continue;
    const std::string span = e["span_id"];
    Op op;
    op.id = span + "/op/" + std::to_string(ordinal[span]++);
    op.name = e["op_name"];
    op.thread = e.value("thread", std::uint64_t{0});
    op.start = e.value("timestamp_ns", std::uint64_t{0});
    op.end = op.start + e.value("total_ns", e["duration_ns"].get<std::uint64_t>());
    ops.push_back(op);
  }
  std::vector<Op*> order;
  for (Op& op : ops) order.push_back(&op);
  std::stable_sort(order.begin(), order.end(), [](const Op* a, const Op* b) {
    if (a->thread != b->thread) return a->thread < b->thread;
    return a->start != b->start ? a->start < b->start : a->end > b->end;
  });
  std::vector<Op*> stack;
  for (Op* op : order) {
    if (!stack.empty() && stack.back()->thread != op->thread) stack.clear();
    while (!stack.empty() && (op->start >= stack.back()->end || op->end > stack.back()->end))
      stack.pop_back();
    if (!stack.empty()) {
      op->parent = stack.back();
      ++stack.back()->children;
    }
    stack.push_back(op);
  }
  std::set<std::string> merged;
  for (const Op& op : ops)
    if (op.parent && op.parent->children == 1 && op.parent->name == op.name) merged.insert(op.id);
  return merged;
}

struct Expected {
  std::string name;
  std::uint64_t calls = 0, self_ns = 0;
};

// "Where the time went" against graph.spans: op-kind nodes in the measured region, by name.
void check_time_section(const std::string& md, const json& ev, const std::string& trace) {
  const std::set<std::string> region = measured_subtree(trace);
  const std::set<std::string> merged = merged_into_parent(trace);
  std::map<std::string, Expected> by_name;
  for (const json& n : ev["graph"]["spans"]) {
    if (n["kind"] != "op") continue;
    const std::string id = n["id"];
    const bool op_node = id.find("/op/") != std::string::npos;
    const std::string owner = op_node ? n["parent_id"].get<std::string>() : id;
    if (!region.count(owner)) continue;
    Expected& e = by_name[n["name"]];
    e.name = n["name"];
    if (!merged.count(id)) ++e.calls;
    e.self_ns += n["self_time_ns"].get<std::uint64_t>();
  }
  std::vector<Expected> expected;
  for (auto& [name, e] : by_name) expected.push_back(e);
  std::stable_sort(expected.begin(), expected.end(),
                   [](const Expected& a, const Expected& b) { return a.self_ns > b.self_ns; });
  if (expected.size() > 10) expected.resize(10);
  const double total_ns = ev["graph"]["summary"]["total_ms"].get<double>() * 1e6;

  const std::string text = section(md, "Where the time went");
  ASSERT_FALSE(text.empty()) << md;
  const auto rows = table(text, "| Op |");
  ASSERT_EQ(rows.size(), expected.size()) << text;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    ASSERT_EQ(r.size(), 6u) << text;
    EXPECT_EQ(unquote(r[0]), expected[i].name) << "row " << i;
    EXPECT_EQ(std::stoull(r[1]), expected[i].calls) << r[0];
    expect_duration(r[2], static_cast<double>(expected[i].self_ns), r[0] + " self time");
    expect_duration(r[3], static_cast<double>(expected[i].self_ns / expected[i].calls),
                    r[0] + " mean");
    if (total_ns > 0)
      expect_percent(r[4], static_cast<double>(expected[i].self_ns) / total_ns, r[0] + " share");
    else
      EXPECT_EQ(r[4], "n/a") << "a zero measured total has no shares";
  }
}

// "Memory at the peak" against graph.memory.
void check_memory_section(const std::string& md, const json& ev) {
  const json& mem = ev["graph"]["memory"];
  const json& sum = mem["summary"];
  const std::string text = section(md, "Memory at the peak");
  ASSERT_FALSE(text.empty()) << md;
  const std::uint64_t peak = sum["peak_bytes"];
  ASSERT_GT(peak, 0u);
  const auto at = text.find("- Peak: ");
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_EQ(leading_bytes(text.substr(at + 8)), peak) << text;
  EXPECT_NE(text.find("live on `" + sum["peak_device"].get<std::string>() + "`"),
            std::string::npos);
  // The span named for the peak contains the peak timestamp (graph.spans start/total).
  const auto span_at = text.find("- Reached by an allocation in `");
  ASSERT_NE(span_at, std::string::npos) << text;
  const auto name_begin = span_at + 31;
  std::string shown = text.substr(name_begin, text.find('`', name_begin) - name_begin);
  const std::uint64_t ts = sum["peak_timestamp_ns"];
  bool contains = false;
  for (const json& n : ev["graph"]["spans"]) {
    const std::string name = n["name"];
    const bool same = shown.rfind("…", 0) == 0
                          ? name.size() >= shown.size() - 3 &&
                                name.compare(name.size() - (shown.size() - 3), std::string::npos,
                                             shown.substr(3)) == 0
                          : name == shown;
    if (same && n["kind"] != "op" && n["start_ns"].get<std::uint64_t>() <= ts &&
        ts <= n["start_ns"].get<std::uint64_t>() + n["total_time_ns"].get<std::uint64_t>())
      contains = true;
  }
  EXPECT_TRUE(contains) << shown << " does not contain t=" << ts;
  EXPECT_NE(text.find("- Live allocations at the peak: " +
                      std::to_string(mem["peak_breakdown"].size()) + "\n"),
            std::string::npos)
      << text;
  const auto categories = table(text, "| Category |");
  ASSERT_EQ(categories.size(), sum["peak_by_category"].size()) << text;
  std::size_t i = 0;
  for (const auto& [category, bytes] : sum["peak_by_category"].items()) {
    EXPECT_EQ(categories[i][0], category);
    EXPECT_EQ(leading_bytes(categories[i][1]), bytes.get<std::uint64_t>());
    expect_percent(categories[i][2],
                   static_cast<double>(bytes.get<std::uint64_t>()) / static_cast<double>(peak),
                   category);
    ++i;
  }
  const auto tensors = table(text, "| Tensor |");
  ASSERT_EQ(tensors.size(), std::min<std::size_t>(5, mem["peak_breakdown"].size())) << text;
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    const json& a = mem["peak_breakdown"][k];
    EXPECT_EQ(unquote(tensors[k][0]), a["tensor_id"].get<std::string>());
    EXPECT_EQ(leading_bytes(tensors[k][1]), a["bytes"].get<std::uint64_t>());
    EXPECT_EQ(tensors[k][4], a["category"].get<std::string>());
    EXPECT_EQ(tensors[k][5],
              a["op_name"].is_null() ? "—" : "`" + a["op_name"].get<std::string>() + "`");
  }
}

struct ReportRun {
  json evidence;
  std::string markdown;
  std::string out;
};

ReportRun run_report(const candle_graph::testing::TempDir& dir, const std::string& trace,
                     const std::string& extra = "") {
  const fs::path ev = dir / "evidence.json", md = dir / "report.md";
  const auto r = cg_test::run_cli("report " + trace + " --json " + ev.string() + " --markdown " +
                                  md.string() + " " + extra);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ReportRun run;
  run.evidence = json::parse(cg_test::read_file(ev.string()));
  run.markdown = cg_test::read_file(md.string());
  run.out = r.out;
  return run;
}

// The original's sections come first, byte for byte as render_markdown writes them (trace6.md
// §9.3).
void check_original_prefix(const ReportRun& run, const std::string& trace) {
  const candle_graph::TraceDocument doc = candle_graph::parse_trace(trace);
  const auto packet = candle_graph::evidence::make_evidence_packet(
      doc, candle_graph::import::nsight::load_optional(std::nullopt, {}), std::nullopt);
  const std::string original = candle_graph::evidence::render_markdown(packet);
  EXPECT_EQ(run.markdown.substr(0, original.size()), original);
  EXPECT_EQ(run.markdown.substr(original.size(), 24), "\n## Where the time went\n");
}

TEST(ReportSections, SpecExampleNumbersMatchTheEvidence) {
  candle_graph::testing::TempDir dir("cg_report");
  const std::string trace = cg_test::fixture_path("spec_example.jsonl");
  const ReportRun run = run_report(dir, trace);
  check_original_prefix(run, trace);
  check_time_section(run.markdown, run.evidence, trace);
  check_memory_section(run.markdown, run.evidence);
  // Read off the fixture by hand as well: matmul 3 ms of the 13 ms total = 23.1%; the peak
  // (10240 B) is set by g_w's allocation in the backward span.
  EXPECT_NE(run.markdown.find("| `matmul` | 1 | 3.00 ms | 3.00 ms | 23.1% | `…/forward` 3.00 ms |"),
            std::string::npos)
      << run.markdown;
  EXPECT_NE(run.markdown.find("- Reached by an allocation in `…/backward`"), std::string::npos);
  // No GPU evidence and no baseline: those sections are left out.
  EXPECT_EQ(run.markdown.find("\n## GPU\n"), std::string::npos);
  EXPECT_EQ(run.markdown.find("\n## Against the baseline\n"), std::string::npos);
}

TEST(ReportSections, EdgeCasesFixtureKeepsTheOriginalAndAddsTheSections) {
  candle_graph::testing::TempDir dir("cg_report");
  const std::string trace = cg_test::fixture_path("edge_cases.jsonl");
  const ReportRun run = run_report(dir, trace);
  check_original_prefix(run, trace);
  check_time_section(run.markdown, run.evidence, trace);
  if (run.evidence["graph"]["memory"]["summary"]["peak_bytes"].get<std::uint64_t>() > 0)
    check_memory_section(run.markdown, run.evidence);
  else
    EXPECT_NE(run.markdown.find("No allocation was recorded"), std::string::npos);
}

TEST(ReportSections, GpuSectionFromNsightFixture) {
  candle_graph::testing::TempDir dir("cg_report");
  const std::string trace = cg_test::fixture_path("spec_example.jsonl");
  const ReportRun run = run_report(
      dir, trace, "--nsight-dir " + std::string(CG_FIXTURE_DIR) + "/nsight/stdout_multi");
  const json& gpu = run.evidence["gpu"];
  ASSERT_EQ(gpu["status"], "available");
  const std::string text = section(run.markdown, "GPU");
  ASSERT_FALSE(text.empty()) << run.markdown;
  double kernel_ns = 0, memcpy_ns = 0, other_ns = 0;
  for (const json& k : gpu["kernels"]) kernel_ns += k["total_ns"].get<double>();
  for (const json& m : gpu["memory_operations"])
    (m.value("category", "") == "memcpy" ? memcpy_ns : other_ns) += m["total_ns"].get<double>();
  const auto rows = table(text, "| Kernel |");
  ASSERT_EQ(rows.size(), std::min<std::size_t>(5, gpu["kernels"].size()));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const json& k = gpu["kernels"][i];  // one file: already sorted by total time
    EXPECT_EQ(unquote(rows[i][0]), k["name"].get<std::string>());
    EXPECT_EQ(std::stoull(rows[i][2]), k["count"].get<std::uint64_t>());
    expect_duration(rows[i][3], k["total_ns"].get<double>(), "kernel total");
    expect_percent(rows[i][5], k["total_ns"].get<double>() / kernel_ns, "kernel share");
  }
  const auto at = text.find("- Memory copies: ");
  ASSERT_NE(at, std::string::npos) << text;
  expect_percent(text.substr(at + 17), memcpy_ns / (kernel_ns + memcpy_ns + other_ns),
                 "memcpy share");
  // By hand from stats.txt: 1500 ns of copies over 3000 + 1000 + 1500 ns = 27.3%.
  EXPECT_NE(text.find("- Memory copies: 27.3% of device time"), std::string::npos) << text;
}

// The spec example with its backward span 2 ms longer (and the enclosing spans with it).
std::string slower_backward() {
  std::string text = cg_test::read_file(cg_test::fixture_path("spec_example.jsonl"));
  auto replace = [&](const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  };
  replace(R"({"kind":"span_end","id":"s4","duration_ns":5000000})",
          R"({"kind":"span_end","id":"s4","duration_ns":7000000})");
  replace(R"({"kind":"span_end","id":"s2","duration_ns":13000000})",
          R"({"kind":"span_end","id":"s2","duration_ns":15000000})");
  replace(R"({"kind":"span_end","id":"s1","duration_ns":15000000})",
          R"({"kind":"span_end","id":"s1","duration_ns":17000000})");
  return text;
}

void check_baseline_section(const std::string& md, const json& c) {
  const std::string text = section(md, "Against the baseline");
  ASSERT_FALSE(text.empty()) << md;
  EXPECT_NE(text.find(c["comparable"].get<bool>() ? "- Verdict: **comparable**\n"
                                                  : "- Verdict: **not comparable**"),
            std::string::npos)
      << text;
  for (const json& w : c["warnings"])
    EXPECT_NE(text.find(w.get<std::string>()), std::string::npos) << text;
  const auto at = text.find("- Total time: ");
  ASSERT_NE(at, std::string::npos);
  const std::string line = text.substr(at + 14, text.find('\n', at) - at - 14);
  const double delta = c["total_delta_ns"].get<double>();
  if (delta == 0) {
    EXPECT_EQ(line.rfind("0 ns", 0), 0u) << line;
  } else {
    EXPECT_EQ(line[0], delta > 0 ? '+' : '-') << line;
    expect_duration(line.substr(1, line.find(" (") - 1), std::fabs(delta), "total delta");
  }
  if (c["total_delta_percent"].is_number()) {
    const std::string pct = line.substr(line.find(" (") + 2);
    EXPECT_NEAR(std::strtod(pct.c_str(), nullptr), c["total_delta_percent"].get<double>(), 0.005);
  }
  const auto rows = table(text, "| Span |");
  ASSERT_EQ(rows.size(), std::min<std::size_t>(5, c["spans"].size())) << text;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const json& s = c["spans"][i];
    EXPECT_EQ(unquote(rows[i][0]), s["name"].get<std::string>());
    expect_duration(rows[i][1], s["baseline_total_ns"].get<double>(), "baseline");
    expect_duration(rows[i][2], s["candidate_total_ns"].get<double>(), "candidate");
  }
}

TEST(ReportSections, BaselinePairComparable) {
  candle_graph::testing::TempDir dir("cg_report");
  const std::string candidate = dir.write("candidate.jsonl", slower_backward()).string();
  const ReportRun run =
      run_report(dir, candidate, "--baseline " + cg_test::fixture_path("spec_example.jsonl"));
  const json& c = run.evidence["comparison"];
  ASSERT_TRUE(c["comparable"].get<bool>());
  check_baseline_section(run.markdown, c);
  // By hand: the measured span went from 13 to 15 ms (+2.00 ms, +15.38%); the backward span
  // changed most (5 → 7 ms).
  EXPECT_NE(run.markdown.find("- Total time: +2.00 ms (+15.38%)"), std::string::npos)
      << run.markdown;
  // The original's baseline section is still there, before the added ones.
  EXPECT_LT(run.markdown.find("## Baseline comparison"),
            run.markdown.find("## Where the time went"));
}

TEST(ReportSections, BaselinePairNotComparable) {
  candle_graph::testing::TempDir dir("cg_report");
  const ReportRun run = run_report(dir, cg_test::fixture_path("spec_example.jsonl"),
                                   "--baseline " + cg_test::fixture_path("edge_cases.jsonl"));
  const json& c = run.evidence["comparison"];
  ASSERT_FALSE(c["comparable"].get<bool>());
  ASSERT_FALSE(c["warnings"].empty());
  check_baseline_section(run.markdown, c);
}

// The demo's closing lines: `report --headline` (what ./run demo prints last).
void check_headline(const std::string& out, const json& ev, const fs::path& html,
                    const std::string& md) {
  const auto lines = split_lines(out);
  ASSERT_GE(lines.size(), 8u) << out;
  EXPECT_EQ(lines[0].rfind("Trace:          TRUSTED, " +
                               ev["provenance"]["entrypoint"].get<std::string>() + ", update " +
                               std::to_string(ev["provenance"]["capture_step"].get<int>()),
                           0),
            0u)
      << out;
  ASSERT_EQ(lines[1].rfind("Measured total: ", 0), 0u);
  expect_duration(lines[1].substr(16), ev["graph"]["summary"]["total_ms"].get<double>() * 1e6,
                  "measured total");
  // The heaviest ops are the first rows of "Where the time went", with the same figures.
  const auto rows = table(section(md, "Where the time went"), "| Op |");
  const std::size_t n = std::min<std::size_t>(3, rows.size());
  for (std::size_t i = 0; i < n; ++i) {
    const std::string& line = lines[2 + i];
    EXPECT_EQ(line.rfind(i == 0 ? "Heaviest ops:   " : "                ", 0), 0u) << line;
    // The name column, not the first word: op names hold spaces
    // ("autograd::engine::evaluate_function: AddmmBackward0"); it is padded, then two spaces.
    const std::string name = unquote(rows[i][0]);
    EXPECT_EQ(line.compare(16, name.size(), name), 0) << line;
    EXPECT_EQ(line.compare(16 + name.size(), 2, "  "), 0) << line;
    EXPECT_NE(line.find(rows[i][2] + " self, " + rows[i][4] + " of the total"), std::string::npos)
        << line;
  }
  const std::string& peak = lines[2 + std::max<std::size_t>(n, 1)];
  ASSERT_EQ(peak.rfind("Peak memory:    ", 0), 0u) << out;
  EXPECT_EQ(leading_bytes(peak.substr(16)),
            ev["graph"]["memory"]["summary"]["peak_bytes"].get<std::uint64_t>());
  EXPECT_NE(out.find("\nOutputs:\n"), std::string::npos);
  EXPECT_NE(out.find("  viewer    " + html.string() + "\n"), std::string::npos) << out;
  EXPECT_EQ(lines.back(), "Open the viewer: xdg-open " + html.string());
  EXPECT_NE(cg_test::read_file(html.string()).find("candle-graph/viewer/4"), std::string::npos);
}

TEST(ReportSections, HeadlinePrintsTheTopLinesAndTheOutputs) {
  candle_graph::testing::TempDir dir("cg_report");
  const fs::path html = dir / "viewer.html";
  const std::string trace = cg_test::fixture_path("spec_example.jsonl");
  const ReportRun run = run_report(dir, trace, "--html " + html.string() + " --headline");
  check_headline(run.out, run.evidence, html, run.markdown);
  // By hand: 13 ms measured, matmul first; the peak 10240 B at 8 ms, 7 ms into s2.
  EXPECT_NE(run.out.find("Measured total: 13.00 ms\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("Peak memory:    10240 B (10.0 KiB) on cpu, 7.00 ms into the measured "
                         "region (trace time 8.00 ms), in demo/update-000000000001/backward\n"),
            std::string::npos)
      << run.out;
  // Without --headline nothing goes to stdout; --html may not name another output.
  EXPECT_TRUE(run_report(dir, trace).out.empty());
  const auto clash =
      cg_test::run_cli("report " + trace + " --json " + (dir / "a.json").string() + " --markdown " +
                       (dir / "a.md").string() + " --html " + (dir / "a.md").string());
  EXPECT_EQ(clash.exit_code, 2) << clash.err;
}

TEST(ReportSections, LibTorchCapture) {
  const fs::path torch_train = CG_TORCH_TRAIN;
  if (!fs::exists(torch_train))
    GTEST_SKIP() << torch_train << " was not built (LibTorch not found or CG_WITH_TORCH=OFF)";
  candle_graph::testing::TempDir dir("cg_report");
  const fs::path trace = dir / "x.jsonl";
  const auto train = candle_graph::testing::run_program(
      {torch_train.string(), "--capture-step", "3", "--steps", "5", "-o", trace.string()});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  const fs::path html = dir / "viewer.html";
  const ReportRun run = run_report(dir, trace.string(), "--html " + html.string() + " --headline");
  check_time_section(run.markdown, run.evidence, trace.string());
  check_memory_section(run.markdown, run.evidence);
  check_headline(run.out, run.evidence, html, run.markdown);
  // A LibTorch update runs convolutions and matrix products: the table is full.
  EXPECT_EQ(table(section(run.markdown, "Where the time went"), "| Op |").size(), 10u);
}

TEST(ReportSections, TimingModeIsWrittenInBackticksLikeTheOriginal) {
  // The original (0.7.0) writes `{:?}` inside backticks: `Host`, `DeviceSynchronized`.
  candle_graph::testing::TempDir dir("cg_report");
  const std::string trace =
      dir.write(
             "sync.jsonl",
             cg_test::meta_line(R"({"timing_mode":"device_synchronized"})") +
                 R"({"kind":"span_start","id":"s1","name":"session","start_ns":0,"span_kind":"function","measured":true})"
                 "\n"
                 R"({"kind":"span_end","id":"s1","duration_ns":1000})"
                 "\n")
          .string();
  const ReportRun run = run_report(dir, trace);
  EXPECT_NE(run.markdown.find("\n- Timing mode: `DeviceSynchronized`\n"), std::string::npos)
      << run.markdown;
  EXPECT_NE(run.markdown.find("No op ran in the measured region"), std::string::npos);
}

TEST(ReportSections, GradientNormKeepsTheCorrectlyRoundedDecimal) {
  // The original reads decimals with serde_json's default (not float_roundtrip) parser, which
  // can land one ulp off: 0.21977032988786283 comes back from its `import` as …285. Both decimals
  // are distinct doubles (strtod, correctly rounded, tells them apart), and ours keeps the first.
  ASSERT_NE(std::strtod("0.21977032988786283", nullptr),
            std::strtod("0.21977032988786285", nullptr));
  candle_graph::testing::TempDir dir("cg_report");
  std::string text = cg_test::read_file(cg_test::fixture_path("spec_example.jsonl"));
  const std::string from = R"("norm":0.42)";
  text.replace(text.find(from), from.size(), R"("norm":0.21977032988786283)");
  const std::string trace = dir.write("norm.jsonl", text).string();
  const auto r = cg_test::run_cli("import " + trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"norm\": 0.21977032988786283"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("0.21977032988786285"), std::string::npos);
  const double norm = json::parse(r.out)["graph"]["gradients"][0]["norm"].get<double>();
  EXPECT_EQ(norm, std::strtod("0.21977032988786283", nullptr));
}

}  // namespace
