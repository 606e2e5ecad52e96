// Node ids are formatted only on output: `{span_id}/op/{n}` for op nodes (trace6.md §7.2 step 1).
#include <charconv>
#include <cstring>

#include "candle_graph/graph.hpp"
#include "output/copy_short.hpp"

namespace candle_graph {
std::string_view NodeId::suffix(char (&buf)[32]) const noexcept {
  if (!is_op()) return {};
  std::memcpy(buf, "/op/", 4);
  auto r = std::to_chars(buf + 4, buf + sizeof buf, op_ordinal);
  return {buf, static_cast<std::size_t>(r.ptr - buf)};
}

std::size_t NodeId::format_to(char* out, std::size_t capacity) const noexcept {
  char buf[32];
  const std::string_view tail = suffix(buf);
  if (base.size() + tail.size() > capacity) return 0;
  // copy_short: an empty span id (or a span's empty tail) may be a view of nothing, which
  // memcpy must not get.
  output::copy_short(out, base.data(), base.size());
  output::copy_short(out + base.size(), tail.data(), tail.size());
  return base.size() + tail.size();
}

void NodeId::append_to(std::string& out) const {
  char buf[32];
  out.append(base);
  out.append(suffix(buf));
}

std::string NodeId::str() const {
  std::string s;
  append_to(s);
  return s;
}

int compare_ids(const NodeId& a, const NodeId& b) noexcept {
  char ba[32], bb[32];
  const std::string_view sa = a.suffix(ba), sb = b.suffix(bb);
  const std::size_t common = std::min(a.base.size(), b.base.size());
  if (common > 0)
    if (int c = std::memcmp(a.base.data(), b.base.data(), common)) return c < 0 ? -1 : 1;
  // Compare the rest of the two-piece strings byte by byte (unsigned, like memcmp).
  const std::size_t la = a.base.size() + sa.size(), lb = b.base.size() + sb.size();
  auto at = [](const NodeId& id, std::string_view s, std::size_t i) {
    return static_cast<unsigned char>(i < id.base.size() ? id.base[i] : s[i - id.base.size()]);
  };
  for (std::size_t i = common; i < la && i < lb; ++i) {
    const unsigned char x = at(a, sa, i), y = at(b, sb, i);
    if (x != y) return x < y ? -1 : 1;
  }
  return la == lb ? 0 : (la < lb ? -1 : 1);
}

std::string_view to_string(GraphNodeKind v) noexcept {
  switch (v) {
    case GraphNodeKind::root:
      return "root";
    case GraphNodeKind::function:
      return "function";
    case GraphNodeKind::module:
      return "module";
    case GraphNodeKind::op:
      return "op";
    case GraphNodeKind::other:
      return "other";
  }
  return "other";
}

std::string_view to_string(GraphEdgeKind v) noexcept {
  return v == GraphEdgeKind::call ? "call" : "data";
}

}  // namespace candle_graph
