// The outputs of one command that land together (`report --json --markdown --html`, `ranks -o
// --markdown --html --rank-pages`). Each is written to its temporary file as the command goes,
// and none is put in place until every one is written: a command whose second output cannot be
// written (a full disk) leaves the first as it was, instead of a new first beside an old second.
#pragma once

#include <filesystem>
#include <memory>
#include <vector>

#include "output/atomic_file.hpp"

namespace candle_graph::output {

class OutputGroup {
 public:
  OutputGroup() = default;
  OutputGroup(const OutputGroup&) = delete;
  OutputGroup& operator=(const OutputGroup&) = delete;
  // Removes the temporary files of an uncommitted group, the last opened first: a directory the
  // first file created for them all goes once the others' files are gone.
  ~OutputGroup();

  // A new output of the group. The one opened before it must be complete: it is finished (closed,
  // its buffers freed) now, so that a group of many files holds one open at a time.
  AtomicFile& open(const std::filesystem::path& target);
  // Finishes every file first (a write error surfaces before any is in place), then renames
  // each into place in the order they were opened. Without it, every temporary file is removed.
  void commit();

 private:
  void finish_last();  // the file opened last, if it still takes writes
  std::vector<std::unique_ptr<AtomicFile>> files_;
};

}  // namespace candle_graph::output
