#include "trace/event_copier.hpp"

namespace candle_graph {

std::span<const std::string_view> EventCopier::copy_ids(std::span<const std::string_view> ids) {
  scratch_ids_.clear();
  for (std::string_view id : ids) scratch_ids_.push_back(copies_.recent(id));
  return arena_->copy(std::span<const std::string_view>(scratch_ids_));
}

const OpCollective* EventCopier::copy_collective(const OpCollective& c) {
  OpCollective copied = c;
  copied.name = copies_.intern(c.name);
  copied.process_group = copies_.intern(c.process_group);
  return arena_->copy(std::span<const OpCollective>(&copied, 1)).data();
}

}  // namespace candle_graph
