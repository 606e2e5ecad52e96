// How fast this machine hands a process fresh memory: maps MIB mebibytes (default 256), writes
// one byte per page, and prints `fresh_memory <MiB> <seconds> <MB/s>`.
//
// A load average below 1 does not make a virtual machine quiet. Where the host backs a guest's
// memory lazily (free page reporting returns freed pages to it), every page a process touches
// for the first time may be a fault in the host too, and how long that takes depends on the
// host, not on this machine's load. The JSON ceiling copies the whole trace into fresh memory,
// so on a host slow to map it the ceiling measures the host: a ratio against it then says
// nothing about the code. The bench scripts print this rate beside the load average
// (bench/interleave.sh) and warn when it is low.
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc > 2) {
    std::fprintf(stderr, "usage: %s [MIB]\n", argv[0]);
    return 2;
  }
  const long mib = argc == 2 ? std::strtol(argv[1], nullptr, 10) : 256;
  if (mib <= 0 || mib > 65536) {
    std::fprintf(stderr, "%s: MIB must be between 1 and 65536\n", argv[0]);
    return 2;
  }
  const std::size_t bytes = static_cast<std::size_t>(mib) << 20;
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const auto t0 = std::chrono::steady_clock::now();
  void* mapped = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) {
    std::perror("mmap");
    return 1;
  }
  auto* p = static_cast<volatile char*>(mapped);
  for (std::size_t at = 0; at < bytes; at += page) p[at] = 1;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  munmap(mapped, bytes);
  std::printf("fresh_memory %ld %.4f %.0f\n", mib, s, static_cast<double>(bytes) / 1e6 / s);
  return 0;
}
