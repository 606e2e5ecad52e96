// The directories an output creates above itself. `-o new/dir/out.json` creates new/ and new/dir/;
// a command that then fails or is interrupted would leave them behind, empty. They are removed
// again, innermost first and only while empty, unless the output was put in place.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "output/interrupt_cleanup.hpp"

namespace candle_graph::output {

class CreatedParents {
 public:
  CreatedParents() = default;
  CreatedParents(const CreatedParents&) = delete;
  CreatedParents& operator=(const CreatedParents&) = delete;
  ~CreatedParents();  // removes the directories created, unless keep()

  // Creates every missing directory down to `dir`, outermost first, each registered for removal
  // (while empty) on an interrupt. Throws Error(`output`, 0, "cannot create directory D: …").
  void create(const std::filesystem::path& dir, const std::string& output);
  // The output is in place: the directories stay.
  void keep() noexcept;

 private:
  struct Made {
    std::filesystem::path path;
    RemovedOnInterrupt on_interrupt;
  };
  std::vector<Made> made_;  // outermost first
};

}  // namespace candle_graph::output
