#include "output/output_group.hpp"

namespace candle_graph::output {

OutputGroup::~OutputGroup() {
  while (!files_.empty()) files_.pop_back();
}

void OutputGroup::finish_last() {
  if (!files_.empty() && files_.back()->is_open()) files_.back()->finish();
}

AtomicFile& OutputGroup::open(const std::filesystem::path& target) {
  finish_last();
  return *files_.emplace_back(std::make_unique<AtomicFile>(target));
}

void OutputGroup::commit() {
  finish_last();
  for (const auto& file : files_) file->commit();
  files_.clear();
}

}  // namespace candle_graph::output
