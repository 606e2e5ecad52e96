// A small tmpfs mounted on a fresh directory (root only): filled to the last block (a full disk),
// mounted read-only, or left with its room for a test to fill. Unmounted lazily when the object
// goes out of scope, so an open file cannot keep it. Where mounting is refused, mounted() is
// false and refused() says why (tests skip, or use an injected failure instead).
#pragma once

#include <sys/mount.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "support/temp_dir.hpp"

namespace candle_graph::testing {

class FullDisk {
 public:
  enum class Kind { filled, read_only, empty };

  // `size`: tmpfs's size option ("64k").
  explicit FullDisk(Kind kind = Kind::filled, const std::string& size = "64k") {
    if (::mount("tmpfs", dir_.path().c_str(), "tmpfs", kind == Kind::read_only ? MS_RDONLY : 0,
                ("size=" + size + ",mode=0755").c_str()) != 0) {
      refused_ = std::strerror(errno);
      return;
    }
    mounted_ = true;
    if (kind != Kind::filled) return;
    std::ofstream filler(dir_ / "filler", std::ios::binary);
    const std::string block(4096, 'x');
    while (filler.write(block.data(), block.size())) filler.flush();
  }
  ~FullDisk() {
    if (mounted_) ::umount2(dir_.path().c_str(), MNT_DETACH);
  }
  FullDisk(const FullDisk&) = delete;
  FullDisk& operator=(const FullDisk&) = delete;

  bool mounted() const { return mounted_; }
  const std::string& refused() const { return refused_; }
  std::filesystem::path path() const { return dir_.path(); }
  std::vector<std::string> entries() const { return dir_.entries(); }

 private:
  TempDir dir_{"cg-full-disk"};
  bool mounted_ = false;
  std::string refused_;
};

}  // namespace candle_graph::testing
