// One row of the op table (op_table.hpp) and of the kernel table (device/kernel_table.hpp) as a
// JSON object, keys sorted: the same row in `query --kind ops|kernels` and in the viewer payload.
#pragma once

#include "device/kernel_table.hpp"
#include "evidence/op_table.hpp"
#include "output/json_stream.hpp"

namespace candle_graph::evidence {

// {calls, device_self_ns, device_total_ns, host_self_ns, host_total_ns, name}
void write_op_row(output::JsonStream& w, const OpRow& r);

// {calls, device, kind, max_ns, mean_ns, min_ns, name, raw_name, total_ns}; mean = total ÷ calls,
// rounded down.
void write_kernel_row(output::JsonStream& w, const device::KernelRow& r);

}  // namespace candle_graph::evidence
