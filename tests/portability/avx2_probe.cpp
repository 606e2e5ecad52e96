// Known-bad input for check_isa_symbols.sh: built with -mavx2, it emits `probe_inline` as a weak
// (COMDAT) function whose loop GCC vectorises with ymm instructions, so the check must report it.
#include <cstddef>

inline void probe_inline(float* out, const float* a, const float* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = a[i] * b[i] + out[i];
}

void (*probe_entry())(float*, const float*, const float*, std::size_t) {
  return &probe_inline;
}
