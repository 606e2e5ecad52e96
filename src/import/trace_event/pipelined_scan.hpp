// The scan of a Chrome Trace Event file on two threads: a worker runs EventScanner (finding the
// event objects, byte by byte) and hands its calls, in batches, to the calling thread, which runs
// the handler (the decoder: simdjson and the reduction to the model) on them in the same order.
// The handler sees exactly the calls, and the errors, of a scan on one thread.
#pragma once

#include <filesystem>

#include "import/trace_event/event_scanner.hpp"

namespace candle_graph::import::trace_event {

// EventScanner::scan with the scanning on a worker thread. `progress` is called on the calling
// thread, between the handler's calls, as the scan reports it.
EventScanner::Result scan_on_worker(const std::filesystem::path& path,
                                    EventScanner::Handler& handler,
                                    const ProgressCallback& progress);

}  // namespace candle_graph::import::trace_event
