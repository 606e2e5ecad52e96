// Picks the fastest compiled variant of the line parser that this CPU can run.
#include "trace/line_parser.hpp"

#if defined(CG_HAVE_HASWELL_PARSER)
#include <cpuid.h>  // x86 only, like the haswell variant
#endif

namespace candle_graph {
namespace {
#if defined(CG_HAVE_HASWELL_PARSER)
// LZCNT (CPUID 0x80000001, ECX bit 5, "ABM"), read directly: clang 14's __builtin_cpu_supports
// does not know "lzcnt" (GCC's does), and the fuzz build uses clang.
bool has_lzcnt() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(0x80000001u, &eax, &ebx, &ecx, &edx) != 0 && (ecx & (1u << 5)) != 0;
}
#endif

bool use_haswell() {
#if defined(CG_HAVE_HASWELL_PARSER)
  // Every feature the haswell variant is compiled for (line_parser.cpp's target pragma).
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
                         __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("pclmul") &&
                         __builtin_cpu_supports("popcnt") && has_lzcnt();
  return ok;
#else
  return false;
#endif
}
}  // namespace

#if !defined(CG_HAVE_HASWELL_PARSER)
std::unique_ptr<LineParserBackend> make_line_parser_haswell() {
  return make_line_parser_fallback();
}
#endif

LineParser::LineParser()
    : backend_(use_haswell() ? make_line_parser_haswell() : make_line_parser_fallback()) {}
LineParser::~LineParser() = default;

std::string_view LineParser::variant() {
  return use_haswell() ? "haswell" : "fallback";
}

}  // namespace candle_graph
