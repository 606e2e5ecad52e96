// Whether this test binary was built with the sanitizers (the ASan + UBSan pass of CI). Tests that
// run the CLI many times, or time it, run in the Release pass only: each CLI run is several times
// slower under ASan.
#pragma once

namespace cgtest {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace cgtest
