// An environment variable set for the scope of a test: the commands the test runs inherit it, and
// it is removed again when the scope ends.
#pragma once

#include <cstdlib>

namespace cgtest {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

}  // namespace cgtest
