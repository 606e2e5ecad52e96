// gzip for outputs that end in `.gz` (Perfetto and chrome://tracing open gzip), through ISA-L's
// igzip at its fastest level: one standard gzip member, four times zlib level 1's speed here and
// a little smaller. Bytes written are compressed in a stream and passed on to the next sink piece
// by piece, so a large export is never held in memory uncompressed or compressed.
#pragma once

#include <functional>
#include <memory>
#include <string_view>

namespace candle_graph::exporting {

class GzipSink {
 public:
  using Sink = std::function<void(std::string_view)>;
  explicit GzipSink(Sink next);
  GzipSink(const GzipSink&) = delete;
  GzipSink& operator=(const GzipSink&) = delete;
  ~GzipSink();

  void write(std::string_view bytes);
  // Writes the gzip trailer; nothing may be written after it.
  void finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace candle_graph::exporting
