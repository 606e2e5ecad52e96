// No command writes inside an evidence bundle: a bundle is evidence that must not change after
// publication. Every file output goes through AtomicFile, which asks this guard first.
#pragma once

#include <filesystem>
#include <optional>

#include "candle_graph/error.hpp"

namespace candle_graph::output {

// A destination the tool refuses to write (inside a bundle, or an existing bundle directory):
// a usage problem, exit code 2 in the CLI.
struct RefusedDestination : Error {
  RefusedDestination(std::string path, std::uint64_t line, std::string message)
      : Error(ErrorKind::usage, std::move(path), line, std::move(message)) {}
};

// The bundle directory `target` lies in (or is), after resolving `..` and symlinks of every
// existing component; nullopt when none. A bundle is a directory holding a `bundle.json` that
// declares schema candle-graph/bundle/1 (within its first 64 KiB).
std::optional<std::filesystem::path> enclosing_bundle(const std::filesystem::path& target);

// Throws RefusedDestination naming the bundle when `target` lies inside one.
void refuse_inside_bundle(const std::filesystem::path& target);

}  // namespace candle_graph::output
