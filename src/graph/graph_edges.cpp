#include "graph/graph_edges.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "output/copy_short.hpp"
#include "trace/huge_pages.hpp"
#include "trace/page_prefaulter.hpp"

namespace candle_graph::graph {
namespace {

// An id's place in byte order, as far as 16 bytes can tell: its first 15 bytes (big-endian,
// zero-padded) and then its length when below 16, or 0xFF for 16 bytes or more. Two different
// keys order exactly like their strings (a shorter string whose window equals a longer one's is
// its prefix, hence smaller); equal keys mean equal strings unless the low byte is 0xFF, when
// only the strings themselves can tell. 15 bytes cover the span, tensor and op-node ids of
// usual traces (`s123456/op/12`), so the sort rarely has to read an id again.
constexpr std::uint8_t kLongId = 0xFF;
constexpr std::size_t kWindow = 15;

struct Key {
  std::uint64_t hi = 0, lo = 0;  // bytes 0–7; bytes 8–14 and the length byte
  auto operator<=>(const Key&) const = default;
  bool is_long() const noexcept { return (lo & 0xFF) == kLongId; }
};

std::uint64_t load_big_endian(const unsigned char* p) noexcept {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}

Key key_of_window(const unsigned char* window, std::size_t size) noexcept {  // 16 bytes
  return {load_big_endian(window),
          (load_big_endian(window + 8) & ~std::uint64_t{0xFF}) |
              (size > kWindow ? kLongId : static_cast<std::uint8_t>(size))};
}

Key order_key(std::string_view s) noexcept {
  unsigned char window[16] = {};
  // copy_short: an empty id may be a view of nothing, which memcpy must not get.
  output::copy_short(reinterpret_cast<char*>(window), s.data(), std::min(s.size(), kWindow));
  return key_of_window(window, s.size());
}

// An op node's id is `base/op/N`: the window is built from the pieces (the base is short).
Key order_key(const NodeId& id) noexcept {
  if (!id.is_op() || id.base.size() > kWindow) return order_key(id.base);  // long either way
  char window[kWindow + 32] = {};  // a short base and `/op/N` always fit
  const std::size_t size = id.format_to(window, sizeof window);
  return key_of_window(reinterpret_cast<const unsigned char*>(window), size);  // 15 bytes count
}

// Item::tag_pos: the kind (data) in bit 31 and "derived" (not an explicit edge) in bit 30 above
// the insertion position, so that one integer orders equal (from, to) by kind, then explicit
// before derived, then insertion order (explicit edges are inserted first anyway).
constexpr std::uint32_t kDataBit = 1u << 31;
constexpr std::uint32_t kDerivedBit = 1u << 30;
constexpr std::uint32_t kPosMask = kDerivedBit - 1;

// One edge while sorting: the order keys of both ends and tag_pos. 40 bytes per edge.
struct Item {
  Key from, to;
  std::uint32_t tag_pos;
  std::uint32_t pos() const noexcept { return tag_pos & kPosMask; }
  bool derived() const noexcept { return (tag_pos & kDerivedBit) != 0; }
  bool same_keys(const Item& o) const noexcept {
    return from == o.from && to == o.to && (tag_pos & kDataBit) == (o.tag_pos & kDataBit);
  }
};

// Settles a run of items with equal `from` keys that the keys alone cannot order: the `from`
// ids are compared 7 bytes at a time through further order keys (each id read once per level),
// then equal `from` ids by their `to` keys and, where those are equal and long, by the `to` ids
// themselves.
struct RunSorter {
  const ExecutionGraph& graph;
  const std::vector<GraphEdge>& edges;
  struct Ref {
    Key key;  // order key of the `from` id past `offset`
    std::string_view from;
    Item item;
  };
  std::vector<Ref> refs;

  void sort(std::vector<Item>::iterator begin, std::vector<Item>::iterator end) {
    refs.clear();
    for (auto it = begin; it != end; ++it)
      refs.push_back({{}, graph.edge_of(edges[it->pos()]).from.base, *it});
    // Level 0 is the item's own key: a short one means every `from` of the run is the same id.
    if (begin->from.is_long())
      by_from(refs.begin(), refs.end(), kWindow);
    else
      by_to(refs.begin(), refs.end());
    for (const Ref& r : refs) *begin++ = r.item;
  }

 private:
  using RefIt = std::vector<Ref>::iterator;

  // [b, e) share their first `offset` bytes of `from`, and every `from` is longer than that.
  void by_from(RefIt b, RefIt e, std::size_t offset) {
    for (RefIt r = b; r != e; ++r) r->key = order_key(r->from.substr(offset));
    std::sort(b, e, [](const Ref& x, const Ref& y) {
      if (x.key != y.key) return x.key < y.key;
      if (x.item.to != y.item.to) return x.item.to < y.item.to;
      return x.item.tag_pos < y.item.tag_pos;
    });
    for (RefIt run = b; run != e;) {
      RefIt end = run + 1;
      while (end != e && end->key == run->key) ++end;
      if (end - run > 1) {
        if (run->key.is_long())
          by_from(run, end, offset + kWindow);
        else
          by_to(run, end);
      }
      run = end;
    }
  }

  // [b, e) have the same `from` id and are sorted by `to` key: equal long `to` keys are sorted
  // again by the `to` ids.
  void by_to(RefIt b, RefIt e) {
    std::sort(b, e, [](const Ref& x, const Ref& y) {
      if (x.item.to != y.item.to) return x.item.to < y.item.to;
      return x.item.tag_pos < y.item.tag_pos;
    });
    for (RefIt run = b; run != e;) {
      RefIt end = run + 1;
      while (end != e && end->item.to == run->item.to) ++end;
      if (end - run > 1 && run->item.to.is_long())
        std::sort(run, end, [&](const Ref& x, const Ref& y) {
          const NodeId tx = graph.edge_of(edges[x.item.pos()]).to;
          const NodeId ty = graph.edge_of(edges[y.item.pos()]).to;
          if (int c = compare_ids(tx, ty)) return c < 0;
          return x.item.tag_pos < y.item.tag_pos;
        });
      run = end;
    }
  }
};

// The edges in (from, to, kind, insertion) order, as items whose pos() indexes `edges` (which
// is left as it is). Integers first: a sort of the order keys, which is the exact order wherever
// keys differ; then every run of equal `from` keys that the keys cannot settle (a long `from`,
// or equal long `to` keys) is sorted again by the ids themselves. Runs are the few edges out of
// one span or tensor, so the strings behind ~1.4 M edges of a 300 MB trace are read once each
// instead of in every comparison (the string sort was 40% of `import`).
std::vector<Item> sorted_items(const std::vector<GraphEdge>& edges, const ExecutionGraph& graph,
                               std::vector<Item> items) {
  assign_in_huge_pages(items, edges.size(), Item{});
  for (std::uint32_t i = 0; i < edges.size(); ++i) {
    const GraphEdgeView v = graph.edge_of(edges[i]);
    items[i] = {order_key(v.from), order_key(v.to),
                (v.kind == GraphEdgeKind::data ? kDataBit : 0u) |
                    (edges[i].origin == EdgeOrigin::explicit_edge ? 0u : kDerivedBit) | i};
  }
  std::sort(items.begin(), items.end(), [](const Item& x, const Item& y) {
    if (x.from != y.from) return x.from < y.from;
    if (x.to != y.to) return x.to < y.to;
    return x.tag_pos < y.tag_pos;
  });
  RunSorter runs{graph, edges, {}};
  for (auto run = items.begin(); run != items.end();) {
    auto end = run + 1;
    bool unsettled = run->from.is_long();
    for (; end != items.end() && end->from == run->from; ++end)
      unsettled |= end->to.is_long() && end->to == (end - 1)->to;
    if (unsettled && end - run > 1) runs.sort(run, end);
    run = end;
  }
  return items;
}

}  // namespace

void build_edges(ExecutionGraph& graph, PagePrefaulter* prefaulter) {
  const TraceDocument& doc = *graph.doc;
  auto& edges = graph.edges;
  edges.clear();
  // Candidates in the original's insertion order: (a) explicit edges, (b) parent → span calls,
  // (c) per op with an output: data edges input → output, then the span → op call. Counted
  // first, so that the array is sized once (doubling it copied and faulted in twice its size)
  // and the sort's items can be mapped while it fills.
  const auto is_call = [&](std::uint32_t i) {
    return graph.nodes[i].kind != GraphNodeKind::op && doc.spans()[i].parent_id.has_value();
  };
  std::size_t candidates = doc.edges().size();
  for (std::uint32_t i = 0; i < doc.spans().size(); ++i) candidates += is_call(i) ? 1 : 0;
  for (const OpEvent& op : doc.ops()) candidates += op.output ? op.inputs.size() + 1 : 0;
  if (candidates > kPosMask)
    throw std::length_error("graph: more than 2^30 edges, beyond what the edge sort can index");
  reserve_ahead(edges, candidates, prefaulter);
  std::vector<Item> items;
  reserve_ahead(items, candidates, prefaulter);
  for (std::uint32_t i = 0; i < doc.edges().size(); ++i)
    edges.push_back({EdgeOrigin::explicit_edge, i, 0});
  for (std::uint32_t i = 0; i < doc.spans().size(); ++i)
    if (is_call(i)) edges.push_back({EdgeOrigin::parent_call, i, 0});
  for (std::uint32_t k = 0; k < doc.ops().size(); ++k) {
    const OpEvent& op = doc.ops()[k];
    if (!op.output) continue;  // ops without an output get no edges at all
    for (std::uint32_t j = 0; j < op.inputs.size(); ++j) edges.push_back({EdgeOrigin::data, k, j});
    edges.push_back({EdgeOrigin::op_call, k, 0});
  }

  // The original skips a derived edge when an equal (from, to, kind) edge already exists and
  // keeps every explicit edge. Sorting by the key and then by insertion order puts equal keys
  // together in insertion order, so "already exists" becomes "is not the first of its run" —
  // linear after the sort instead of the original's scan per insertion.
  items = sorted_items(edges, graph, std::move(items));
  // Equal keys settle equality unless one of the ids is long.
  auto same = [&](std::size_t i, std::size_t j) {
    if (!items[i].same_keys(items[j])) return false;
    if (!items[i].from.is_long() && !items[i].to.is_long()) return true;
    const GraphEdgeView a = graph.edge_of(edges[items[i].pos()]);
    const GraphEdgeView b = graph.edge_of(edges[items[j].pos()]);
    return a.from == b.from && a.to == b.to;  // kinds are equal: same_keys compares them
  };
  // The positions of the edges kept, in order, compacted into items[0, out).tag_pos: every
  // write lands at or before the item being read, and a run's first item is only read back
  // when nothing of the run was written.
  std::size_t out = 0;
  for (std::size_t i = 0; i < items.size();) {
    std::size_t j = i + 1;
    while (j < items.size() && same(i, j)) ++j;  // run [i, j)
    bool has_explicit = false;
    for (std::size_t k = i; k < j; ++k) {
      if (!items[k].derived()) {
        items[out++].tag_pos = items[k].pos();
        has_explicit = true;
      }
    }
    if (!has_explicit) items[out++].tag_pos = items[i].pos();  // the first derived edge wins
    i = j;
  }
  std::vector<std::uint32_t> kept;
  assign_in_huge_pages(kept, out, std::uint32_t{0});
  for (std::size_t i = 0; i < out; ++i) kept[i] = items[i].tag_pos;
  std::vector<Item>().swap(items);  // before the gather: the peak RSS of `import` is here
  // A gather, not an in-place permutation: its loads are independent, so the cache misses of
  // reading a 17 MB array in random order overlap (following the permutation's cycles made
  // each miss wait for the previous one: ~8% of `import`).
  std::vector<GraphEdge> sorted;
  assign_in_huge_pages(sorted, out, GraphEdge{});
  for (std::size_t i = 0; i < out; ++i) sorted[i] = edges[kept[i]];
  edges = std::move(sorted);
}

}  // namespace candle_graph::graph
