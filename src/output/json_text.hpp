// JSON text primitives shared by every writer: string escaping and number formatting that match
// serde_json (the original's serializer), so our bytes equal the original's where it matters.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace candle_graph::output {

// Appends `s` as a quoted JSON string: `"` and `\` escaped, \b \f \n \r \t short forms, other
// control characters as \u00XX (lowercase hex). Invalid UTF-8 is replaced by U+FFFD so the
// output is always valid JSON text.
void append_json_string(std::string& out, std::string_view s);

// The same escaping into a raw buffer with room for at least 6 × s.size() + 2 bytes (the worst
// case: every byte a control character); returns the end of what was written.
char* write_json_string(char* out, std::string_view s) noexcept;

void append_u64(std::string& out, std::uint64_t v);
void append_i64(std::string& out, std::int64_t v);

// Shortest round-trip form laid out like ryu/serde_json: `13.0`, `0.1`, `1e21`, `1.5e-7`.
// Non-finite values are written as `null` (what serde_json does).
void append_f64(std::string& out, double v);

// True when every byte sequence of `s` is well-formed UTF-8.
bool is_valid_utf8(std::string_view s) noexcept;

}  // namespace candle_graph::output
