#include "export/gzip_sink.hpp"

#include <isa-l/igzip_lib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "candle_graph/error.hpp"

namespace candle_graph::exporting {

struct GzipSink::State {
  isal_zstream z{};
  // Level 1's hash tables and token buffer; ISA-L's suggested size for it.
  std::vector<std::uint8_t> level_buf = std::vector<std::uint8_t>(ISAL_DEF_LVL1_DEFAULT);
  Sink next;
  std::vector<std::uint8_t> out = std::vector<std::uint8_t>(1 << 18);
  // igzip's output depends on how its input is cut into calls, and the export's pieces are cut
  // where its threads happened to hand them over: the text goes in as blocks of kBlock bytes of
  // the stream instead, the same for the same text, so the same text gives the same file.
  // Whole blocks are taken from the caller's bytes; a block cut by a piece's edge is completed
  // here (at most kBlock bytes copied per piece).
  static constexpr std::size_t kBlock = std::size_t{256} << 10;
  std::vector<std::uint8_t> stage = std::vector<std::uint8_t>(kBlock);
  std::size_t staged = 0;
  bool finished = false;

  void deflate(const std::uint8_t* bytes, std::size_t n, bool end) {
    z.next_in = const_cast<std::uint8_t*>(bytes);
    z.avail_in = static_cast<std::uint32_t>(n);
    pump(end);
  }

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
  State& s = *state_;
  if (s.finished) throw Error("gzip: write after finish");
  const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data());
  std::size_t n = bytes.size();
  if (s.staged > 0) {  // complete the block the previous piece began
    const std::size_t take = std::min(n, State::kBlock - s.staged);
    std::memcpy(s.stage.data() + s.staged, p, take);
    s.staged += take;
    p += take;
    n -= take;
    if (s.staged < State::kBlock) return;
    s.deflate(s.stage.data(), State::kBlock, false);
    s.staged = 0;
  }
  for (; n >= State::kBlock; p += State::kBlock, n -= State::kBlock)
    s.deflate(p, State::kBlock, false);
  if (n > 0) {  // an empty piece may hold a null pointer, which memcpy must not get
    std::memcpy(s.stage.data(), p, n);
    s.staged = n;
  }
}

void GzipSink::finish() {
  State& s = *state_;
  if (s.finished) return;
  s.deflate(s.stage.data(), s.staged, true);
  s.staged = 0;
  s.finished = true;
}

}  // namespace candle_graph::exporting
