// `view --payload FILE`: a payload that is not one is an error naming the file, exit 1, and no
// page: bad JSON, a number beyond a double, a schema that is not a string, and nesting deep
// enough to overflow the stack when the payload is written out again (a segmentation fault
// before). A real payload, taken from a page `view` wrote, renders.
#include <gmock/gmock.h>

#include "cli_test_support.hpp"

namespace {

using namespace cgcli;
using ::testing::HasSubstr;

std::string nested(std::size_t depth) {
  return R"({"schema":"candle-graph/viewer/4","x":)" + std::string(depth, '[') +
         std::string(depth, ']') + "}";
}

TEST(ViewPayload, APayloadThatIsNotOneIsAnErrorNamingTheFile) {
  TempDir dir;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"empty", ""},
      {"not JSON", "{\"schema\":"},
      {"a number beyond a double", R"({"schema":"candle-graph/viewer/4","x":1e999999})"},
      {"a schema that is a number", R"({"schema":5})"},
      {"another schema", R"({"schema":"candle-graph/viewer/3"})"},
      {"an array", "[]"},
      {"a million levels", nested(1'000'000)},
      {"513 levels", nested(512)},  // the object is one level, the arrays the rest
  };
  for (const auto& [what, text] : cases) {
    SCOPED_TRACE(what);
    const fs::path payload = dir.write("payload.json", text);
    const fs::path page = dir / "page.html";
    const RunResult r = run_cli({"view", "--payload", payload.string(), "-o", page.string()});
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_THAT(r.err, HasSubstr("error: " + payload.string() + ": "));
    EXPECT_FALSE(fs::exists(page));
  }
  // 512 levels in all is allowed.
  const fs::path payload = dir.write("payload.json", nested(511));
  const RunResult r =
      run_cli({"view", "--payload", payload.string(), "-o", (dir / "page.html").string()});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
}

}  // namespace
