#include "export/gzip_sink.hpp"

#include <isa-l/igzip_lib.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "candle_graph/error.hpp"

namespace candle_graph::exporting {

struct GzipSink::State {
  isal_zstream z{};
  // Level 1's hash tables and token buffer; ISA-L's suggested size for it.
  std::vector<std::uint8_t> level_buf = std::vector<std::uint8_t>(ISAL_DEF_LVL1_DEFAULT);
  Sink next;
  std::vector<std::uint8_t> out = std::vector<std::uint8_t>(1 << 18);
  bool finished = false;

  // Compresses what next_in holds (all of it: isal_deflate keeps the history it needs in its
  // own buffer), and with `end` the trailer too.
  void pump(bool end) {
    z.end_of_stream = end ? 1 : 0;
    do {
      z.next_out = out.data();
      z.avail_out = static_cast<std::uint32_t>(out.size());
      if (isal_deflate(&z) != COMP_OK) throw Error("gzip: ISA-L deflate failed");
      const std::size_t produced = out.size() - z.avail_out;
      if (produced > 0) next(std::string_view(reinterpret_cast<const char*>(out.data()), produced));
    } while (z.avail_in > 0 || z.avail_out == 0 || (end && z.internal_state.state != ZSTATE_END));
  }
};

GzipSink::GzipSink(Sink next) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.next = std::move(next);
  isal_deflate_init(&s.z);
  s.z.gzip_flag = IGZIP_GZIP;  // a gzip header and trailer around the deflate stream
  s.z.level = 1;
  s.z.level_buf = s.level_buf.data();
  s.z.level_buf_size = static_cast<std::uint32_t>(s.level_buf.size());
}

GzipSink::~GzipSink() = default;

void GzipSink::write(std::string_view bytes) {
  if (state_->finished) throw Error("gzip: write after finish");
  // avail_in is 32-bit: feed huge pieces in slices.
  while (!bytes.empty()) {
    const std::size_t n = std::min<std::size_t>(bytes.size(), 1u << 30);
    state_->z.next_in = reinterpret_cast<std::uint8_t*>(const_cast<char*>(bytes.data()));
    state_->z.avail_in = static_cast<std::uint32_t>(n);
    state_->pump(false);
    bytes.remove_prefix(n);
  }
}

void GzipSink::finish() {
  if (state_->finished) return;
  state_->z.next_in = nullptr;
  state_->z.avail_in = 0;
  state_->pump(true);
  state_->finished = true;
}

}  // namespace candle_graph::exporting
