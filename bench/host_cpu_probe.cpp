// How fast each CPU this process may use runs the same fixed computation, alone and with every
// CPU busy at once. Prints, one line each:
//
//   cpu <n> <alone seconds> <together seconds>   for every CPU in the affinity mask
//   cpu_capacity <sum> <count>                    the CPUs' work together, in fastest-CPU units
//
// A virtual machine's CPUs need not be equal: on the project's guest the second vCPU ran integer
// code 1.5× slower than the first, alone and beside it, with the load average at 0 and no steal
// time reported. A single-threaded figure then depends on which CPU the scheduler picked, and
// no code can run on two such CPUs faster than 1 + 1/1.5 ≈ 1.65× one: `cpu_capacity` is that
// bound (the sum over the CPUs of the fastest CPU's time alone over this CPU's time with all of
// them busy). The bench scripts print it beside the load (bench/interleave.sh) and warn when
// the CPUs differ by more than a tenth.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

namespace {

volatile std::uint64_t g_result = 0;

// Four independent chains of integer multiplies and shifts over a 1 MiB table, about 100 ms on
// the guest's faster vCPU. Independent chains keep the core's units busy, so a vCPU that shares
// its physical core with a busy neighbour shows it (one long dependent chain barely did); the
// table adds the caches. Nothing can be folded away: every result ends in g_result.
std::uint64_t fixed_work() {
  static thread_local std::vector<std::uint64_t> table(std::size_t{1} << 17, 0x2545f4914f6cdd1dULL);
  std::uint64_t a = 1, b = 2, c = 3, d = 4;
  for (int pass = 0; pass < 400; ++pass) {
    for (std::uint64_t& t : table) {
      a = (a ^ (a >> 29)) * 0xbf58476d1ce4e5b9ULL + t;
      b = (b ^ (b >> 31)) * 0x94d049bb133111ebULL + a;
      c = (c ^ (c << 7)) * 0xff51afd7ed558ccdULL ^ t;
      d = (d ^ (d >> 11)) * 0xc4ceb9fe1a85ec53ULL + c;
      t ^= d;
    }
  }
  return a ^ b ^ c ^ d;
}

bool pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

// The median of five runs on `cpu`, in seconds: how fast the CPU runs over half a second. Not the
// best run: the host may give a vCPU a fast stretch between slow ones (on the project's guest the
// best of three put one CPU 1.2× behind the other while sha256sum ran 2× slower on it).
double seconds_on(int cpu, std::uint64_t& sink) {
  if (!pin_to(cpu)) return -1;
  std::array<double, 5> runs{};
  for (double& run : runs) {
    const auto t0 = std::chrono::steady_clock::now();
    sink ^= fixed_work();
    run = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

}  // namespace

int main() {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
    std::perror("sched_getaffinity");
    return 1;
  }
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);

  std::uint64_t sink = 0;
  std::vector<double> alone;
  for (int cpu : cpus) alone.push_back(seconds_on(cpu, sink));

  // Every CPU at once, each on a thread of its own; sinks apart so that no cache line is shared.
  struct alignas(64) Slot {
    double seconds = 0;
    std::uint64_t sink = 0;
  };
  std::vector<Slot> together(cpus.size());
  {
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < cpus.size(); ++i)
      threads.emplace_back([&, i] { together[i].seconds = seconds_on(cpus[i], together[i].sink); });
    for (std::thread& t : threads) t.join();
  }

  const double fastest = *std::min_element(alone.begin(), alone.end());
  double capacity = 0;
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    if (alone[i] <= 0 || together[i].seconds <= 0) {
      std::fprintf(stderr, "host_cpu_probe: cannot run on CPU %d\n", cpus[i]);
      return 1;
    }
    std::printf("cpu %d %.4f %.4f\n", cpus[i], alone[i], together[i].seconds);
    capacity += fastest / together[i].seconds;
    sink ^= together[i].sink;
  }
  std::printf("cpu_capacity %.2f %zu\n", capacity, cpus.size());
  g_result = sink;  // the work's result is kept, so it cannot be optimised away
  return 0;
}
