// Whether this test binary was built with the sanitizers (the ASan + UBSan pass of CI). Tests that
// run the CLI many times, or time it, run in the Release pass only: each CLI run is several times
// slower under ASan.
#pragma once

// GCC defines __SANITIZE_ADDRESS__; clang 14, which builds the sanitizer pass, only answers
// __has_feature. CG_TEST_SANITIZED is for #if, kSanitized for code.
#if defined(__SANITIZE_ADDRESS__)
#define CG_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CG_TEST_SANITIZED 1
#endif
#endif
#ifndef CG_TEST_SANITIZED
#define CG_TEST_SANITIZED 0
#endif

namespace cgtest {

inline constexpr bool kSanitized = CG_TEST_SANITIZED != 0;

}  // namespace cgtest
