// How the converter reads PyTorch's event vocabulary: categories of every Kineto layout since
// 2021 (and the legacy profiler's cat-less events) to roles, PyTorch dtype names to trace/6 dtype
// labels, and `[memory]` device types to device labels.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "import/trace_event/event_model.hpp"

namespace candle_graph::import::trace_event {

// Role of a complete (`X`) event with a `cat` (Kineto 2021: Operator/Runtime/Kernel/Memcpy/
// Memset; 2022+: cpu_op/cuda_runtime/cuda_driver/kernel/gpu_memcpy/gpu_memset/user_annotation).
Role kineto_role(std::string_view cat, std::string_view name);

// The kind of device work by its category: kernel, memcpy, memset, or sync (cuda_sync: a stream
// or event wait, which keeps no device busy).
OpKind device_kind(std::string_view cat);

// Role of a complete event without `cat` (the legacy autograd profiler, legacy_mapping.cpp):
// names with "::" (aten::, autograd::engine::evaluate_function: ..., torch::autograd::...) and
// autograd node names (AddmmBackward0) are ops; other names are record_function ranges.
Role legacy_role(std::string_view name);

// "float" -> "f32", "c10::Half" -> "f16", "long int" -> "i64", ...; unknown names pass through
// unchanged (trace/6 then counts 0 bytes for them).
std::string_view torch_dtype_label(std::string_view torch_type);

// `[memory]` "Device Type": 0 CPU, 1 CUDA, 6 HIP (ROCm builds report HIP memory; PyTorch shows
// those devices as `cuda`, so the label is `cuda:N` as for the kernels on them).
std::string memory_device_label(std::int64_t device_type, std::int64_t device_id);

}  // namespace candle_graph::import::trace_event
