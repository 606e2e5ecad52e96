// Streaming parse of one nsys stats output file (trace6.md §10.3 step 3 and §10.4). Header found by
// signature (preamble lines skipped), file name used only as a fallback hint; rows validated
// and capped while reading; any row error fails the file with its line number.
#include "import/nsight/report_parser.hpp"

#include <algorithm>
#include <string_view>

#include "candle_graph/error.hpp"
#include "import/nsight/capped_rows.hpp"
#include "import/nsight/csv_reader.hpp"
#include "import/nsight/kernel_category.hpp"
#include "import/nsight/nvtx_label.hpp"

namespace candle_graph::import::nsight {
namespace {

// Preamble budget: nsys prints at most a few dozen banner lines; a file with no header in its
// first 1000 non-empty lines is not a report (and must not be scanned to the end).
constexpr int kHeaderSearchLines = 1000;
constexpr std::size_t kMaxRecordBytes = 16u << 20;

std::string shorten(std::string_view text) {
  return text.size() <= 120 ? std::string(text) : std::string(text.substr(0, 117)) + "...";
}

// A report ends at a blank line, or where nsys starts printing about the next one without a
// blank line in between (`Processing [...]`, `NOTICE:`, ` ** … (report):` banners).
bool ends_report(std::string_view line) {
  const std::string_view t = trim(line);
  return t.empty() || t.starts_with("Processing [") || t.starts_with("NOTICE:") ||
         t.starts_with("** ") || t.starts_with("SKIPPED:") || t.starts_with("Running [");
}

struct SummaryLess {
  bool operator()(const NsightSummaryRow& a, const NsightSummaryRow& b) const {
    return a.total_ns > b.total_ns;  // trace6.md §10.4: total_ns descending
  }
};
struct SizeLess {
  bool operator()(const NsightSizeRow& a, const NsightSizeRow& b) const {
    return a.total_bytes > b.total_bytes;
  }
};
struct TimelineLess {
  bool operator()(const NsightTimelineRow& a, const NsightTimelineRow& b) const {
    return a.start_ns < b.start_ns;  // trace6.md §10.4: start_ns ascending
  }
};

// Reads the rows of one report section; everything unit- and version-specific lives here.
class SectionBuilder {
 public:
  SectionBuilder(std::string path, ReportKind kind, ColumnMap columns, std::uint64_t header_line,
                 const std::unordered_set<std::string>& expected)
      : path_(std::move(path)),
        kind_(kind),
        map_(std::move(columns)),
        header_line_(header_line),
        expected_(expected),
        summary_(kSummaryRowCap, SummaryLess{}),
        sizes_(kSummaryRowCap, SizeLess{}),
        timeline_(kTimelineRowCap, TimelineLess{}) {
    check_required_columns();
  }

  void add(const std::vector<std::string>& fields, std::uint64_t line) {
    line_ = line;
    if (fields.size() != map_.columns.size()) {
      fail(fields.size() < map_.columns.size() ? "truncated row: " : "row has too many fields: ",
           std::to_string(fields.size()) + " fields, header has " +
               std::to_string(map_.columns.size()));
    }
    fields_ = &fields;
    const auto name_cell = trim(fields[*map_.at(Role::name)]);
    if (is_null_cell(name_cell))
      return;  // trace6.md §10.4: rows without a name are skipped (nsys `None` root)
    const std::string name(name_cell);
    ++section_.total_rows;
    switch (kind_) {
      case ReportKind::memory_size_summary:
        add_size(name);
        break;
      case ReportKind::gpu_trace:
      case ReportKind::nvtx_projected_trace:
      case ReportKind::nvtx_pushpop_trace:
        add_timeline(name);
        break;
      default:
        add_summary(name);
    }
  }

  ReportKind kind() const { return kind_; }

  ParsedSection finish(std::string limit_key) {
    section_.kind = kind_;
    section_.limit_key = std::move(limit_key);
    section_.header_line = header_line_;
    section_.summary = summary_.finish();
    section_.sizes = sizes_.finish();
    section_.timeline = timeline_.finish();
    // Classifying only the rows that survive the cap keeps a huge trace cheap.
    if (kind_ == ReportKind::kernel_summary || kind_ == ReportKind::memory_time_summary) {
      for (auto& row : section_.summary)
        if (!row.category) row.category = kernel_category(row.name);
    }
    if (kind_ == ReportKind::gpu_trace) {
      for (auto& row : section_.timeline) row.category = kernel_category(row.name);
    }
    return std::move(section_);
  }

 private:
  [[noreturn]] void fail(std::string_view what, std::string_view detail = {}) const {
    throw Error(path_, line_, std::string(what) + std::string(detail));
  }

  void check_required_columns() {
    line_ = header_line_;
    if (!map_.has(Role::name)) fail("missing operation/name column");  // trace6.md §10.4 messages
    if (kind_ == ReportKind::memory_size_summary) {
      if (!map_.has(Role::total)) fail("missing total-size bytes column");
      if (map_.scale(Role::total).kind != UnitKind::bytes) {
        fail("column `" + map_.column(Role::total).raw + "` has no byte unit such as (MB)");
      }
    } else if (!is_timeline(kind_)) {
      if (!map_.has(Role::total)) fail("missing total-time nanoseconds column");
      time_scale(Role::total);
    } else {
      const bool has_duration = map_.has(Role::duration) ||
                                (kind_ == ReportKind::nvtx_pushpop_trace && map_.has(Role::end));
      if (!map_.has(Role::start) || !has_duration)
        fail("missing start/duration nanoseconds columns");
      if (kind_ == ReportKind::nvtx_projected_trace &&
          (!map_.has(Role::projected_start) || !map_.has(Role::projected_duration))) {
        fail("missing projected start/duration nanoseconds columns");
      }
    }
  }

  // Time columns without a unit are nanoseconds (2021 `Average`, `Minimum`, …).
  UnitScale time_scale(Role role) const {
    const UnitScale s = map_.scale(role);
    if (s.kind == UnitKind::time) return s;
    if (s.kind == UnitKind::none) return unit_scale("ns");
    throw Error(path_, header_line_,
                "unsupported time unit in column `" + map_.column(role).raw + "`");
  }

  UnitScale byte_scale(Role role) const {
    const UnitScale s = map_.scale(role);
    if (s.kind == UnitKind::bytes) return s;
    if (s.kind == UnitKind::none) return map_.scale(Role::total);  // same unit as `Total (MB)`
    throw Error(path_, header_line_,
                "unsupported size unit in column `" + map_.column(role).raw + "`");
  }

  // Absent column or null cell → nullopt; text that is not a number → error (file and line).
  std::optional<std::uint64_t> number(Role role, const UnitScale& scale) const {
    const auto index = map_.at(role);
    if (!index) return std::nullopt;
    const std::string& cell = (*fields_)[*index];
    const CellNumber n = parse_cell_number(cell, scale);
    if (n.state == CellNumber::State::invalid) {
      fail("invalid number `" + shorten(trim(cell)) + "` in column `" + map_.columns[*index].raw +
           "`");
    }
    if (n.state == CellNumber::State::null) return std::nullopt;
    return n.value;
  }
  std::optional<std::uint64_t> time(Role role) const {
    return map_.has(role) ? number(role, time_scale(role)) : std::nullopt;
  }
  std::optional<std::uint64_t> plain(Role role) const { return number(role, UnitScale{}); }

  // `Device` is `"<gpu name> (<id>)"` in cuda_gpu_trace; a bare number is accepted too.
  std::optional<std::uint64_t> device_id() const {
    const auto index = map_.at(Role::device);
    if (!index) return std::nullopt;
    std::string_view cell = trim((*fields_)[*index]);
    const auto open = cell.rfind('(');
    if (!cell.empty() && cell.back() == ')' && open != std::string_view::npos) {
      cell = cell.substr(open + 1, cell.size() - open - 2);
    }
    const CellNumber n = parse_cell_number(cell, UnitScale{});
    return n.state == CellNumber::State::value ? std::optional(n.value) : std::nullopt;
  }

  void add_summary(const std::string& name) {
    NsightSummaryRow row;
    row.name = name;
    row.total_ns = time(Role::total).value_or(0);  // trace6.md §10.4: absent summary numbers are 0
    row.count = plain(Role::count).value_or(0);
    row.average_ns = time(Role::average).value_or(0);
    row.minimum_ns = time(Role::minimum).value_or(0);
    row.maximum_ns = time(Role::maximum).value_or(0);
    if (const auto c = map_.at(Role::category); c && !is_null_cell((*fields_)[*c])) {
      row.category = std::string(trim((*fields_)[*c]));
    } else if (kind_ == ReportKind::kernel_summary || kind_ == ReportKind::memory_time_summary) {
    }
    summary_.add(std::move(row));
  }

  void add_size(const std::string& name) {
    NsightSizeRow row;
    row.name = name;
    row.total_bytes = number(Role::total, byte_scale(Role::total)).value_or(0);
    row.count = plain(Role::count).value_or(0);
    if (map_.has(Role::average))
      row.average_bytes = number(Role::average, byte_scale(Role::average)).value_or(0);
    if (map_.has(Role::minimum))
      row.minimum_bytes = number(Role::minimum, byte_scale(Role::minimum)).value_or(0);
    if (map_.has(Role::maximum))
      row.maximum_bytes = number(Role::maximum, byte_scale(Role::maximum)).value_or(0);
    sizes_.add(std::move(row));
  }

  void add_timeline(const std::string& name) {
    NsightTimelineRow row;
    row.name = name;
    const auto start = time(Role::start);
    if (!start) fail("invalid or missing start_ns value");  // trace6.md §10.4 messages
    row.start_ns = *start;
    auto duration = time(Role::duration);
    if (!duration && kind_ == ReportKind::nvtx_pushpop_trace) {
      if (const auto end = time(Role::end); end && *end >= *start) duration = *end - *start;
    }
    if (!duration) fail("invalid or missing duration_ns value");
    if (*duration == 0) fail("timeline row `" + name + "` has zero duration");
    row.duration_ns = *duration;
    row.correlation_id = plain(Role::correlation);
    if (kind_ == ReportKind::gpu_trace) {
      row.kind = "gpu_operation";
      row.device = device_id();
      row.context = plain(Role::context);
      row.stream = plain(Role::stream);
      if (map_.has(Role::bytes)) {
        const UnitScale s = map_.scale(Role::bytes);
        // 2021 `Bytes` has no unit and counts bytes; newer reports say `Bytes (MB)`.
        if (s.kind == UnitKind::bytes || s.kind == UnitKind::none)
          row.bytes = number(Role::bytes, s);
      }
    } else {
      const SemanticLabel label = semantic_label(name, expected_);
      row.semantic_key = label.key;
      row.matched = label.matched;
      if (kind_ == ReportKind::nvtx_pushpop_trace) {
        row.kind = "nvtx_host_range";
      } else {
        row.kind = "nvtx_range";
        row.projected_start_ns = time(Role::projected_start);
        row.projected_duration_ns = time(Role::projected_duration);
        if (!row.projected_start_ns || row.projected_duration_ns.value_or(0) == 0) {
          fail("projected timeline row `" + name + "` has invalid projected timing");
        }
        row.gpu_operations = plain(Role::gpu_operations);
        if (label.matched) ++section_.matched_ranges;
        if (!row.gpu_operations) section_.every_range_has_gpu_operations = false;
      }
    }
    timeline_.add(std::move(row));
  }

  std::string path_;
  ReportKind kind_;
  ColumnMap map_;
  std::uint64_t header_line_;
  const std::unordered_set<std::string>& expected_;
  std::uint64_t line_ = 0;
  const std::vector<std::string>* fields_ = nullptr;
  ParsedSection section_;
  CappedRows<NsightSummaryRow, SummaryLess> summary_;
  CappedRows<NsightSizeRow, SizeLess> sizes_;
  CappedRows<NsightTimelineRow, TimelineLess> timeline_;
};

const std::unordered_set<std::string>& no_keys() {
  static const std::unordered_set<std::string> empty;
  return empty;
}

// One pass over the file. With `forced` set, the first line with at least two CSV fields is the
// header of that report (file-name hint fallback); otherwise headers are found by signature.
// `first_line`/`first_text` report the first non-empty line for the "unrecognised" diagnostic.
std::vector<ParsedSection> scan(const std::filesystem::path& path, const ParseOptions& options,
                                std::optional<ReportKind> forced, std::uint64_t& first_line,
                                std::string& first_text) {
  const std::string shown = path.string();
  LineReader reader(path);
  if (!reader.is_open()) throw Error(shown, 0, "cannot open file");
  const auto& expected = options.expected_keys ? *options.expected_keys : no_keys();
  const std::string file_name = path.filename().string();

  std::vector<ParsedSection> sections;
  std::optional<SectionBuilder> section;
  CsvSplitter record;
  std::size_t record_bytes = 0;
  std::uint64_t record_line = 0;
  int searched = 0;
  std::string line;

  auto close_section = [&] {
    std::string key =
        sections.empty() ? file_name : file_name + " [" + report_name(section->kind()) + "]";
    sections.push_back(section->finish(std::move(key)));
    section.reset();
    searched = 0;
  };

  while (reader.next(line)) {
    const std::uint64_t number = reader.line_number();
    if (!section) {
      // Preamble: `Processing [...]`, `NOTICE:`, banners and blank lines are skipped (nsight.md
      // §6.1).
      if (trim(line).empty()) continue;
      if (first_line == 0) {
        first_line = number;
        first_text = shorten(trim(line));
      }
      if (++searched > kHeaderSearchLines) break;
      std::vector<std::string> cells = split_csv_line(line);
      ColumnMap columns = map_columns(cells);
      std::optional<ReportKind> kind = detect_report(columns);
      if (!kind && forced && sections.empty() && cells.size() >= 2) kind = forced;
      if (kind) section.emplace(shown, *kind, std::move(columns), number, expected);
      continue;
    }
    if (!record.in_quotes && ends_report(line)) {  // blank line or the next report's banner
      close_section();
      if (!trim(line).empty()) {
        first_line = first_line == 0 ? number : first_line;
        ++searched;
      }
      continue;
    }
    if (!record.in_quotes) {
      record_line = number;
      record_bytes = 0;
    }
    record_bytes += line.size();
    if (record_bytes > kMaxRecordBytes) {
      throw Error(shown, record_line, "quoted field is never closed (record exceeds 16 MiB)");
    }
    if (!record.feed(line)) continue;  // quoted field continues on the next line
    section->add(record.fields, record_line);
    record.reset();
  }
  if (record.in_quotes) {
    throw Error(shown, record_line, "truncated row: quoted field is never closed");
  }
  if (section) close_section();
  return sections;
}

}  // namespace

NsightLimit ParsedSection::limit() const {
  const std::uint64_t cap = is_timeline(kind) ? kTimelineRowCap : kSummaryRowCap;
  return {total_rows, std::min<std::uint64_t>(total_rows, cap),
          total_rows > cap};  // trace6.md §10.4
}

std::vector<ParsedSection> parse_report_file(const std::filesystem::path& path,
                                             const ParseOptions& options) {
  std::uint64_t first_line = 0;
  std::string first_text;
  auto sections = scan(path, options, std::nullopt, first_line, first_text);
  if (!sections.empty()) return sections;
  const auto hint = report_hint_from_name(path.filename().string());
  if (hint) {
    // No known signature: trust the file name, so missing columns are named (trace6.md §10.4
    // messages).
    sections = scan(path, options, hint, first_line, first_text);
    if (!sections.empty()) return sections;
    throw Error(path.string(), 0,
                std::string("no CSV header found for the ") + report_name(*hint) + " report");
  }
  if (!options.csv_extension) return sections;  // e.g. status.txt, nsys stdout logs
  if (first_line == 0) throw Error(path.string(), 0, "empty file: no nsys stats CSV header");
  throw Error(
      path.string(), first_line,
      "unrecognized report: header `" + first_text + "` matches no supported nsys stats report");
}

}  // namespace candle_graph::import::nsight
