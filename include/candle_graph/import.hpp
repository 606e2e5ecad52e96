// Reading any trace this tool understands: the registry of importers (candle_graph/importer.hpp)
// in the order they are asked to recognise a file, and the verbs built on it.
#pragma once

#include <filesystem>
#include <span>
#include <string>

#include "candle_graph/importer.hpp"

namespace candle_graph {

// Every importer, in the order they are tried: trace/6, candle-graph's Chrome export, PyTorch.
std::span<const Importer* const> importers();

// The first bytes of `path` (decompressed when it is gzip), at most kInputHeadBytes; `storage`
// owns them. Throws Error (kind io) when the file cannot be opened or read.
InputHead read_input_head(const std::filesystem::path& path, std::string& storage);

// The native format's importer (trace/6 JSONL).
const Importer& trace6_importer();

// The first importer that recognises `head`, or nullptr.
const Importer* find_importer(const InputHead& head);

// Reads `path` with the importer that recognises it; a file none recognises is read as trace/6,
// so its error names the first line that is wrong. Throws Error naming the file when it fails.
ImportedTrace import_trace(const std::filesystem::path& path, const ImportOptions& options = {});

}  // namespace candle_graph
