// The commands' writes to standard output. A write to stdout can fail like any other (a full
// disk behind `> out.json`, a closed descriptor, /dev/full), and stdio only says so in a return
// value or in the stream's error flag; a command that ignored them exited 0 with its output lost.
// These throw instead, naming <stdout> and the system's reason.
#pragma once

#include <string_view>

namespace candle_graph::cli {

// Writes `bytes` to stdout (buffered); throws Error("<stdout>", …) when the write fails.
void write_stdout(std::string_view bytes);

// Flushes stdout; throws when the flush fails or an earlier write to it failed.
void flush_stdout();

}  // namespace candle_graph::cli
