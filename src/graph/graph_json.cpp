#include "graph/graph_json.hpp"

#include "memory/memory_json.hpp"
#include "output/parallel_elements.hpp"

namespace candle_graph::graph {

using output::JsonStream;
using output::KeyOrder;
using output::write_object;

void write_node_id(JsonStream& w, const NodeId& id) {
  if (!id.is_op()) {
    w.string(id.base);
    return;
  }
  // Op ids are formatted here, never stored: on the stack when the span id is short (always in
  // practice), else in a scratch string.
  char buf[128];
  if (const std::size_t size = id.format_to(buf, sizeof buf)) {
    w.string(std::string_view(buf, size));
    return;
  }
  thread_local std::string scratch;
  scratch.clear();
  id.append_to(scratch);
  w.string(scratch);
}

void write_graph_node(JsonStream& w, const ExecutionGraph& g, std::uint32_t i, KeyOrder order) {
  static constexpr std::array<std::string_view, 14> kKeys{
      "id",    "parent_id", "name",   "kind",  "start_ns",   "self_time_ns",   "total_time_ns",
      "shape", "dtype",     "device", "bytes", "peak_bytes", "residual_bytes", "storage_bytes"};
  const GraphNode& n = g.nodes[i];
  const OpEvent* op = n.is_op_node() ? &g.doc->ops()[n.op] : nullptr;
  write_object(w, order, kKeys, [&](std::size_t f, std::string_view k) {
    switch (f) {
      case 0:
        write_node_id(w.schema_key(k), g.node_id(i));
        break;
      case 1: {
        const auto p = g.parent_id(i);
        p ? w.schema_key(k).string(*p)
          : w.schema_key(k).null();  // always present, null for the root
        break;
      }
      case 2:
        w.schema_key(k).string(g.name(i));
        break;
      case 3:
        w.schema_key(k).string(to_string(n.kind));
        break;
      case 4:
        w.schema_key(k).u64(n.start_ns);
        break;
      case 5:
        w.schema_key(k).u64(n.self_time_ns);
        break;
      case 6:
        w.schema_key(k).u64(n.total_time_ns);
        break;
      case 7:  // omitted for spans and for ops with an empty shape
        if (op && !op->shape.empty()) memory::write_shape(w.schema_key(k), op->shape);
        break;
      case 8:
        if (op) w.schema_key(k).string(op->dtype);
        break;
      case 9:
        if (op) w.schema_key(k).string(op->device);
        break;
      case 10:
        w.schema_key(k).u64(n.bytes);
        break;
      case 11:
        w.schema_key(k).u64(n.peak_bytes);
        break;
      case 12:
        w.schema_key(k).u64(0);
        break;  // residual_bytes is never computed in graph/3
      default:
        if (op) w.schema_key(k).u64(op->storage_bytes.value_or(0));
        break;
    }
  });
}

void write_graph_edge(JsonStream& w, const GraphEdgeView& e, KeyOrder order) {
  static constexpr std::array<std::string_view, 5> kKeys{"from", "to", "kind", "duration_ns",
                                                         "label"};
  write_object(w, order, kKeys, [&](std::size_t f, std::string_view k) {
    switch (f) {
      case 0:
        write_node_id(w.schema_key(k), e.from);
        break;
      case 1:
        write_node_id(w.schema_key(k), e.to);
        break;
      case 2:
        w.schema_key(k).string(to_string(e.kind));
        break;
      case 3:
        w.schema_key(k).u64(e.duration_ns);
        break;
      default:
        if (e.label) w.schema_key(k).string(*e.label);
        break;
    }
  });
}

void write_tensor_record(JsonStream& w, const TensorEvent& t, KeyOrder order) {
  static constexpr std::array<std::string_view, 8> kKeys{
      "span_id", "tensor_id",     "shape",         "dtype",
      "device",  "requires_grad", "storage_bytes", "category"};
  write_object(w, order, kKeys, [&](std::size_t f, std::string_view k) {
    w.schema_key(k);
    switch (f) {
      case 0:
        w.string(t.span_id);
        break;
      case 1:
        w.string(t.tensor_id);
        break;
      case 2:
        memory::write_shape(w, t.shape);
        break;
      case 3:
        w.string(t.dtype);
        break;
      case 4:
        w.string(t.device);
        break;
      case 5:
        w.boolean(t.requires_grad);
        break;
      case 6:
        w.u64(t.storage_bytes.value_or(0));
        break;
      default:
        w.string(to_string(t.category));
        break;
    }
  });
}

void write_gradient_record(JsonStream& w, const GradientEvent& g, KeyOrder order) {
  static constexpr std::array<std::string_view, 4> kKeys{"root", "key", "state", "norm"};
  write_object(w, order, kKeys, [&](std::size_t f, std::string_view k) {
    switch (f) {
      case 0:
        w.schema_key(k).string(g.root);
        break;
      case 1:
        w.schema_key(k).string(g.key);
        break;
      case 2:
        w.schema_key(k).string(to_string(g.state));
        break;
      default:
        if (g.norm) w.schema_key(k).f64(*g.norm);
        break;
    }
  });
}

void write_graph_nodes(JsonStream& w, const ExecutionGraph& g, KeyOrder order) {
  w.begin_array();
  output::write_elements(w, g.nodes.size(), [&](JsonStream& out, std::size_t i) {
    write_graph_node(out, g, static_cast<std::uint32_t>(i), order);
  });
  w.end_array();
}

void write_graph_edges(JsonStream& w, const ExecutionGraph& g, KeyOrder order) {
  w.begin_array();
  output::write_elements(w, g.edges.size(), [&](JsonStream& out, std::size_t i) {
    write_graph_edge(out, g.edge_of(g.edges[i]), order);
  });
  w.end_array();
}

void write_tensor_records(JsonStream& w, const TraceDocument& doc, KeyOrder order) {
  w.begin_array();
  for (const TensorEvent& t : doc.tensors()) write_tensor_record(w, t, order);
  w.end_array();
}

void write_gradient_records(JsonStream& w, const TraceDocument& doc, KeyOrder order) {
  w.begin_array();
  for (const GradientEvent& g : doc.gradients()) write_gradient_record(w, g, order);
  w.end_array();
}

void write_span_costs(JsonStream& w, const ExecutionGraph& g,
                      const std::vector<std::uint32_t>& nodes, bool heaviest, KeyOrder order) {
  static constexpr std::array<std::string_view, 3> kSlow{"id", "name", "self_time_ns"};
  static constexpr std::array<std::string_view, 4> kHeavy{"id", "name", "bytes", "peak_bytes"};
  w.begin_array();
  for (std::uint32_t i : nodes) {
    const GraphNode& n = g.nodes[i];
    if (heaviest) {
      write_object(w, order, kHeavy, [&](std::size_t f, std::string_view k) {
        w.schema_key(k);
        if (f == 0) write_node_id(w, g.node_id(i));
        if (f == 1) w.string(g.name(i));
        if (f == 2) w.u64(n.bytes);
        if (f == 3) w.u64(n.peak_bytes);
      });
    } else {
      write_object(w, order, kSlow, [&](std::size_t f, std::string_view k) {
        w.schema_key(k);
        if (f == 0) write_node_id(w, g.node_id(i));
        if (f == 1) w.string(g.name(i));
        if (f == 2) w.u64(n.self_time_ns);
      });
    }
  }
  w.end_array();
}

void write_graph_summary(JsonStream& w, const ExecutionGraph& g, KeyOrder order) {
  static constexpr std::array<std::string_view, 5> kKeys{"entrypoint", "total_ms", "slowest_spans",
                                                         "heaviest_spans", "memory"};
  write_object(w, order, kKeys, [&](std::size_t f, std::string_view k) {
    w.schema_key(k);
    switch (f) {
      case 0:
        w.string(g.summary.entrypoint);
        break;
      case 1:
        w.f64(g.summary.total_ms);
        break;
      case 2:
        write_span_costs(w, g, g.summary.slowest_spans, false, order);
        break;
      case 3:
        write_span_costs(w, g, g.summary.heaviest_spans, true, order);
        break;
      default:
        memory::write_memory_summary(w, g.memory.summary, order);
        break;
    }
  });
}

void write_graph(JsonStream& w, const ExecutionGraph& g, KeyOrder order) {
  static constexpr std::array<std::string_view, 7> kKeys{"schema",    "spans",   "edges", "tensors",
                                                         "gradients", "summary", "memory"};
  write_object(w, order, kKeys, [&](std::size_t f, std::string_view k) {
    w.schema_key(k);
    switch (f) {
      case 0:
        w.string(kGraphSchema);
        break;
      case 1:
        write_graph_nodes(w, g, order);
        break;
      case 2:
        write_graph_edges(w, g, order);
        break;
      case 3:
        write_tensor_records(w, *g.doc, order);
        break;
      case 4:
        write_gradient_records(w, *g.doc, order);
        break;
      case 5:
        write_graph_summary(w, g, order);
        break;
      default:
        memory::write_memory_profile(w, g.memory, order);
        break;
    }
  });
}

}  // namespace candle_graph::graph
