#include "viewer_test_helpers.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "synth/synthetic_trace.hpp"

namespace cg_viewer_test {

std::string synth_text(std::uint64_t layers, std::uint64_t ops_per_span, std::uint64_t seed) {
  std::string text;
  candle_graph::synth::generate({layers, ops_per_span, seed},
                                [&](std::string_view piece) { text += piece; });
  return text;
}

std::string read_fixture(const std::string& name) {
  std::ifstream in(std::string(CG_FIXTURE_DIR) + "/" + name, std::ios::binary);
  if (!in) throw std::runtime_error("missing fixture " + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t count(std::string_view text, std::string_view needle) {
  std::size_t n = 0;
  for (std::size_t p = text.find(needle); p != std::string_view::npos;
       p = text.find(needle, p + needle.size()))
    ++n;
  return n;
}

std::size_t count_ci(std::string_view text, std::string_view needle) {
  std::string a(text), b(needle);
  const auto lower = [](unsigned char c) { return static_cast<char>(std::tolower(c)); };
  std::transform(a.begin(), a.end(), a.begin(), lower);
  std::transform(b.begin(), b.end(), b.begin(), lower);
  return count(a, b);
}

std::string_view between(std::string_view text, std::string_view open, std::string_view close,
                         std::size_t from) {
  const std::size_t a = text.find(open, from);
  if (a == std::string_view::npos) throw std::runtime_error("no " + std::string(open));
  const std::size_t b = text.find(close, a + open.size());
  if (b == std::string_view::npos) throw std::runtime_error("no " + std::string(close));
  return text.substr(a + open.size(), b - a - open.size());
}

}  // namespace cg_viewer_test
