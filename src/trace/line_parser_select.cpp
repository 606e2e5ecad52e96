// Picks the fastest compiled variant of the line parser that this CPU can run.
#include "trace/line_parser.hpp"

namespace candle_graph {
namespace {
bool use_haswell() {
#if defined(CG_HAVE_HASWELL_PARSER)
  // Every feature the haswell variant is compiled for (line_parser.cpp's target pragma).
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
                         __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("pclmul") &&
                         __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("lzcnt");
  return ok;
#else
  return false;
#endif
}
}  // namespace

#if !defined(CG_HAVE_HASWELL_PARSER)
std::unique_ptr<LineParserBackend> make_line_parser_haswell() { return make_line_parser_fallback(); }
#endif

LineParser::LineParser()
    : backend_(use_haswell() ? make_line_parser_haswell() : make_line_parser_fallback()) {}
LineParser::~LineParser() = default;

std::string_view LineParser::variant() { return use_haswell() ? "haswell" : "fallback"; }

}  // namespace candle_graph
