#include "export/gzip_sink.hpp"

#include <zlib.h>

#include <algorithm>
#include <string>
#include <vector>

#include "candle_graph/error.hpp"

namespace candle_graph::exporting {

struct GzipSink::State {
  z_stream z{};
  Sink next;
  std::vector<unsigned char> out = std::vector<unsigned char>(1 << 18);
  bool finished = false;

  void pump(int flush) {
    int rc = Z_OK;
    do {
      z.next_out = out.data();
      z.avail_out = static_cast<uInt>(out.size());
      rc = deflate(&z, flush);
      if (rc == Z_STREAM_ERROR) throw Error("gzip: zlib deflate failed");
      const std::size_t produced = out.size() - z.avail_out;
      if (produced > 0) next(std::string_view(reinterpret_cast<const char*>(out.data()), produced));
    } while (z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
  }
};

GzipSink::GzipSink(Sink next, int level) : state_(std::make_unique<State>()) {
  state_->next = std::move(next);
  // windowBits 15 + 16: a gzip header and trailer instead of the zlib ones.
  if (deflateInit2(&state_->z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw Error("gzip: zlib could not be initialised");
}

GzipSink::~GzipSink() {
  deflateEnd(&state_->z);
}

void GzipSink::write(std::string_view bytes) {
  if (state_->finished) throw Error("gzip: write after finish");
  // avail_in is 32-bit: feed huge pieces in slices.
  while (!bytes.empty()) {
    const std::size_t n = std::min<std::size_t>(bytes.size(), 1u << 30);
    state_->z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    state_->z.avail_in = static_cast<uInt>(n);
    state_->pump(Z_NO_FLUSH);
    bytes.remove_prefix(n);
  }
}

void GzipSink::finish() {
  if (state_->finished) return;
  state_->z.next_in = nullptr;
  state_->z.avail_in = 0;
  state_->pump(Z_FINISH);
  state_->finished = true;
}

}  // namespace candle_graph::exporting
