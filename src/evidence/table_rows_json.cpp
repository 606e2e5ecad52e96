#include "evidence/table_rows_json.hpp"

namespace candle_graph::evidence {

void write_op_row(output::JsonStream& w, const OpRow& r) {
  w.begin_object();
  w.key("calls").u64(r.calls);
  w.key("device_self_ns").u64(r.device_self_ns);
  w.key("device_total_ns").u64(r.device_total_ns);
  w.key("host_self_ns").u64(r.host_self_ns);
  w.key("host_total_ns").u64(r.host_total_ns);
  w.key("name").string(r.name);
  w.end_object();
}

void write_kernel_row(output::JsonStream& w, const device::KernelRow& r) {
  w.begin_object();
  w.key("calls").u64(r.calls);
  w.key("device").string(r.device);
  w.key("kind").string(to_string(r.kind));
  w.key("max_ns").u64(r.max_ns);
  w.key("mean_ns").u64(r.calls ? r.total_ns / r.calls : 0);
  w.key("min_ns").u64(r.min_ns);
  w.key("name").string(r.name);
  w.key("raw_name").string(r.raw_name);
  w.key("total_ns").u64(r.total_ns);
  w.end_object();
}

}  // namespace candle_graph::evidence
