#include "output/output_group.hpp"

namespace candle_graph::output {

OutputGroup::~OutputGroup() {
  while (!files_.empty()) files_.pop_back();
}

AtomicFile& OutputGroup::open(const std::filesystem::path& target) {
  if (!files_.empty() && files_.back()->is_open()) files_.back()->finish();
  return *files_.emplace_back(std::make_unique<AtomicFile>(target));
}

void OutputGroup::commit() {
  if (!files_.empty() && files_.back()->is_open()) files_.back()->finish();
  for (const auto& file : files_) file->commit();
  files_.clear();
}

}  // namespace candle_graph::output
