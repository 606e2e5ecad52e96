// Kernel classification by name substrings. The base name (before template arguments and the
// parameter list) is tried first so that `cutlass::device_kernel<…Gemm…>` falls back to the
// template text only when the base name says nothing.
#include "import/nsight/kernel_category.hpp"

#include <cctype>
#include <initializer_list>

#include "import/nsight/cell_value.hpp"

namespace candle_graph::import::nsight {
namespace {

struct Rule {
  const char* category;
  std::initializer_list<std::string_view> needles;
};

// Order matters: memcpy/memset names are fixed by nsys; communication before reduction
// (`ReduceScatter`), attention and convolution before gemm (fused attention and implicit-GEMM
// convolutions contain `gemm`), normalization before reduction (norms are reductions).
const Rule kRules[] = {
    {"memcpy", {"[cuda memcpy", "memcpy"}},
    {"memset", {"[cuda memset", "memset"}},
    {"communication",
     {"nccl", "allreduce", "all_reduce", "allgather", "all_gather", "reducescatter",
      "reduce_scatter", "alltoall", "all_to_all", "sendrecv", "nvshmem"}},
    {"attention",
     {"fmha", "flash_fwd", "flash_bwd", "flashattn", "flash_attn", "attention", "attn", "sdpa",
      "mha_"}},
    // Not a bare `conv`: XLA's `convert.N` fusions are element-wise casts.
    {"convolution",
     {"convolution", "convolve", "conv1d", "conv2d", "conv3d", "conv_", "fprop", "dgrad", "wgrad",
      "winograd", "implicit_gemm"}},
    {"gemm", {"gemm", "gemv", "matmul", "xmma", "mma", "cublas", "dot_product", "bmm"}},
    {"normalization",
     {"layer_norm", "layernorm", "rms_norm", "rmsnorm", "batch_norm", "batchnorm", "group_norm",
      "groupnorm", "instance_norm", "softmax", "normaliz"}},
    {"reduction",
     {"reduce", "reduction", "triton_red_", "triton_per_", "argmax", "argmin", "cumsum", "scan"}},
    {"elementwise",
     {"elementwise", "element_wise", "pointwise", "triton_poi_", "vectorized", "unrolled", "fill",
      "cast", "convert", "copy", "transpose", "activation", "relu", "gelu", "silu"}},
};

const char* classify(const std::string& name) {
  for (const auto& rule : kRules) {
    for (auto needle : rule.needles) {
      if (name.find(needle) != std::string::npos) return rule.category;
    }
  }
  return nullptr;
}

}  // namespace

std::string kernel_category(std::string_view name) {
  const std::string full = lower(name);
  const auto cut = full.find_first_of("<(");
  if (const char* c = classify(full.substr(0, cut))) return c;
  if (cut != std::string::npos) {
    if (const char* c = classify(full)) return c;
  }
  return "other";
}

}  // namespace candle_graph::import::nsight
