// Category vocabulary (docs/compatibility.md, "PyTorch convert"): pytorch.md §1.4/§1.4b
// and the fixtures in ../shared/fixtures/pytorch-chrome-trace.
#include "import/trace_event/kineto_vocabulary.hpp"

#include "format/chrome.hpp"
#include "trace/profiler_steps.hpp"

namespace candle_graph::import::trace_event {

Role kineto_role(std::string_view cat, std::string_view name) {
  // Our own export's categories first: a PyTorch trace read as found names its measured span
  // `ProfilerStep#N`, and in the export that span is ours, not a step marker to measure again.
  if (cat == format::chrome::kSpanCategory) return Role::candle_span;
  if (cat == format::chrome::kOpCategory) return Role::candle_op;
  if (cat == format::chrome::kDeviceCategory || cat == format::chrome::kSyncCategory)
    return Role::candle_device;
  std::uint64_t n = 0;
  const bool gpu_side = cat == "gpu_user_annotation";
  if (!gpu_side && parse_profiler_step(name, n)) return Role::step_marker;
  if (cat == "cpu_op" || cat == "Operator" || cat == "operator") return Role::cpu_op;
  if (cat == "user_annotation" || cat == "User annotation") return Role::annotation;
  if (cat == "kernel" || cat == "Kernel" || cat == "gpu_memcpy" || cat == "Memcpy" ||
      cat == "gpu_memset" || cat == "Memset" || cat == "cuda_sync") {
    return Role::device_op;
  }
  if (cat == "cuda_runtime" || cat == "Runtime" || cat == "cuda_driver") return Role::runtime;
  return Role::ignored;  // python_function, gpu_user_annotation, Trace, ...
}

OpKind device_kind(std::string_view cat) {
  if (cat == "gpu_memcpy" || cat == "Memcpy") return OpKind::memcpy;
  if (cat == "gpu_memset" || cat == "Memset") return OpKind::memset;
  if (cat == "cuda_sync") return OpKind::sync;
  return OpKind::kernel;
}

std::string_view torch_dtype_label(std::string_view t) {
  if (t == "float") return "f32";
  if (t == "double") return "f64";
  if (t == "c10::Half" || t == "half") return "f16";
  if (t == "c10::BFloat16") return "bf16";
  if (t == "long int" || t == "long" || t == "int64_t" || t == "long long int") return "i64";
  if (t == "int") return "i32";
  if (t == "short int" || t == "short") return "i16";
  if (t == "signed char") return "i8";
  if (t == "unsigned char") return "u8";
  if (t == "bool") return "bool";
  return t;
}

std::string memory_device_label(std::int64_t device_type, std::int64_t device_id) {
  const std::string id = std::to_string(device_id < 0 ? 0 : device_id);
  switch (device_type) {
    case 0:
      return "cpu";
    case 1:
    case 6:
      return "cuda:" + id;
    default:
      return "device" + std::to_string(device_type) + ":" + id;
  }
}

}  // namespace candle_graph::import::trace_event
