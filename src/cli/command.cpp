#include "cli/command.hpp"

#include <unistd.h>

#include <cstdio>

#include "output/atomic_file.hpp"

namespace candle_graph::cli {

void emit_output(const std::optional<std::filesystem::path>& out, std::string_view text,
                 std::initializer_list<std::filesystem::path> inputs) {
  if (!out || out->empty() || *out == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return;
  }
  for (const auto& in : inputs)
    if (output::same_file(in, *out))
      throw UsageError("refusing to write output over the input file " + in.string());
  output::write_file_atomic(*out, text);
}

ProgressCallback progress_on_stderr(std::string label) {
  return [label = std::move(label)](std::uint64_t done, std::uint64_t total) {
    static const bool tty = ::isatty(STDERR_FILENO) == 1;
    if (!tty || total < (64ull << 20)) return;
    std::fprintf(stderr, "\rreading %s: %3d%% (%llu of %llu MiB)", label.c_str(),
                 static_cast<int>(done * 100 / total), static_cast<unsigned long long>(done >> 20),
                 static_cast<unsigned long long>(total >> 20));
    if (done >= total) std::fputc('\n', stderr);
    std::fflush(stderr);
  };
}

}  // namespace candle_graph::cli
