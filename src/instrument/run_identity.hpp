// trace6.md §4.2 producer formats of the run identity written into the meta line.
#pragma once

#include <chrono>
#include <string>

namespace candle_graph::detail {

// `run-{pid}-{unix_nanos}`.
std::string make_run_id(std::chrono::system_clock::time_point now);
// `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC, milliseconds truncated).
std::string format_utc_timestamp(std::chrono::system_clock::time_point now);

}  // namespace candle_graph::detail
