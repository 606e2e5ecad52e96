#include "output/created_parents.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "candle_graph/error.hpp"

namespace candle_graph::output {

namespace fs = std::filesystem;

CreatedParents::~CreatedParents() {
  for (auto it = made_.rbegin(); it != made_.rend(); ++it) {
    std::error_code ignored;
    fs::remove(it->path, ignored);  // an empty directory only: one holding anything stays
  }
}

void CreatedParents::create(const fs::path& dir, const std::string& output) {
  std::vector<fs::path> missing;  // innermost first
  std::error_code ec;
  for (fs::path p = dir; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    int error = 0;
    RemovedOnInterrupt on_interrupt = RemovedOnInterrupt::create(
        [&] { return ::mkdir(it->c_str(), 0777) == 0 ? *it : fs::path(); }, error,
        Removal::if_empty);
    // Made meanwhile by another program: not this output's to remove.
    if (error == EEXIST && fs::is_directory(*it, ec)) continue;
    if (error != 0)
      throw Error(ErrorKind::io, output, 0,
                  "cannot create directory " + it->string() + ": " + std::strerror(error));
    made_.push_back({*it, std::move(on_interrupt)});
  }
}

void CreatedParents::keep() noexcept {
  made_.clear();  // unregisters each from the interrupt clean-up
}

}  // namespace candle_graph::output
