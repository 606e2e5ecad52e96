// The legacy autograd profiler (torch.autograd.profiler, and torch.profiler in builds without
// Kineto such as Debian's python3-torch 1.13) writes a bare array of cat-less `X` events. Which of
// them are ops and which are record_function ranges has to come from the names.
#include <cctype>

#include "import/trace_event/kineto_vocabulary.hpp"
#include "trace/profiler_steps.hpp"

namespace candle_graph::import::trace_event {
namespace {

// Autograd node names: an identifier ending in `Backward` + optional digits (AddmmBackward0,
// MaxPool2DWithIndicesBackward0, CudnnConvolutionBackward).
bool is_autograd_node(std::string_view name) {
  std::size_t end = name.size();
  while (end > 0 && std::isdigit(static_cast<unsigned char>(name[end - 1]))) --end;
  constexpr std::string_view kSuffix = "Backward";
  if (end <= kSuffix.size() || name.substr(end - kSuffix.size(), kSuffix.size()) != kSuffix) {
    return false;
  }
  for (std::size_t i = 0; i < end; ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (!std::isalnum(c) && c != '_') return false;
  }
  return true;
}

}  // namespace

Role legacy_role(std::string_view name) {
  std::uint64_t n = 0;
  if (parse_profiler_step(name, n)) return Role::step_marker;
  if (name.find("::") != std::string_view::npos || is_autograd_node(name)) return Role::cpu_op;
  return Role::annotation;  // record_function("...") ranges, Optimizer.step#SGD.step, ...
}

}  // namespace candle_graph::import::trace_event
