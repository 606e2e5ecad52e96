// A published bundle to test against: a small synth trace, a baseline and two Nsight files (one
// that parses, one that yields a diagnostic), published through the real CLI.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_test_support.hpp"
#include "support/sanitizers.hpp"

namespace cgbundle {

// The sanitizer pass runs every test at a fraction of the speed: exhaustive loops take a stride.
#if CG_TEST_SANITIZED
inline constexpr std::size_t kStride = 7;
#else
inline constexpr std::size_t kStride = 1;
#endif

namespace fs = std::filesystem;
using cgcli::read_file;
using cgcli::run_cli;
using cgcli::RunResult;
using cgcli::write_file;

// Inputs of a bundle, made once per test in `root`.
struct Inputs {
  fs::path trace, baseline, nsight;
};

inline Inputs make_inputs(const fs::path& root) {
  Inputs in{root / "trace.jsonl", root / "base.jsonl", root / "nsys"};
  EXPECT_EQ(run_cli({"synth", "--layers", "3", "-o", in.trace.string()}).exit_code, 0);
  EXPECT_EQ(
      run_cli({"synth", "--layers", "3", "--seed", "9", "-o", in.baseline.string()}).exit_code, 0);
  fs::create_directories(in.nsight);
  fs::copy_file(cgcli::fixture("nsight/stdout_multi/stats.txt"), in.nsight / "stats.txt");
  fs::copy_file(cgcli::fixture("nsight/truncated_row/run_cuda_gpu_kern_sum.csv"),
                in.nsight / "broken_kern_sum.csv");
  return in;
}

inline RunResult publish(const Inputs& in, const fs::path& dest, bool with_baseline = true,
                         bool with_nsight = true) {
  std::vector<std::string> args = {"report", in.trace.string(), "--bundle", dest.string()};
  if (with_baseline) args.insert(args.end(), {"--baseline", in.baseline.string()});
  if (with_nsight) args.insert(args.end(), {"--nsight-dir", in.nsight.string()});
  return run_cli(args);
}

// Every file a published bundle is expected to hold, bundle-relative.
inline std::vector<std::string> bundle_files(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out.push_back(fs::relative(e.path(), dir).generic_string());
  std::sort(out.begin(), out.end());
  return out;
}

// Rewrites the manifest as `edit` changes it, in the canonical layout (so only the edit differs).
template <typename Edit>
void edit_manifest(const fs::path& dir, Edit edit) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(read_file(dir / "bundle.json"));
  edit(j);
  write_file(dir / "bundle.json", j.dump(2) + "\n");
}

// Changes one byte in place (no truncation: rewriting whole files made ext4 flush them).
inline void flip_byte(const fs::path& file, std::size_t at) {
  const int fd = ::open(file.c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << file;
  char c = 0;
  ASSERT_EQ(::pread(fd, &c, 1, static_cast<off_t>(at)), 1) << file << " byte " << at;
  c = static_cast<char>(c ^ 0x01);
  ASSERT_EQ(::pwrite(fd, &c, 1, static_cast<off_t>(at)), 1);
  ::close(fd);
}

}  // namespace cgbundle
