// An independent reading of a Kineto trace with nlohmann, for tests that check what our importer
// and exporters make of its device work: no candle-graph code is involved. The rule is the
// documented one (pytorch.md, "Measured region"): a device event (cat kernel, gpu_memcpy,
// gpu_memset, cuda_sync) is kept when the runtime call with the same `args.correlation` (else the
// `ac2g` flow start of that id, else the event itself) starts inside the last `ProfilerStep#N`,
// or anywhere when the trace has none.
#pragma once

#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "support/files.hpp"

namespace cgtest {

namespace fs = std::filesystem;
using nlohmann::json;

inline fs::path kineto(std::string_view name) {
  return fs::path(CG_SHARED_FIXTURE_DIR) / "pytorch-chrome-trace" / name;
}

inline std::string inflate_gzip(const std::string& gz) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
  std::string out;
  char buf[1 << 16];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
  }
  EXPECT_EQ(rc, Z_STREAM_END);
  inflateEnd(&z);
  return out;
}

inline json read_json(const fs::path& p) {
  const std::string bytes = candle_graph::testing::read_file(p);
  return json::parse(p.extension() == ".gz" ? inflate_gzip(bytes) : bytes);
}

// Kineto writes `ts` as integer or fractional µs: integer ns, rounded.
inline long long ns_of(const json& v) {
  return std::llround(v.get<double>() * 1000.0);
}

struct DeviceWork {
  std::string cat;  // kernel, gpu_memcpy, gpu_memset, cuda_sync
  long long stream = -1;
  long long dur_ns = 0;
};

inline bool is_device_cat(const std::string& cat) {
  return cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" || cat == "cuda_sync";
}

// The last ProfilerStep's [start, end] in ns, and the launch time of every correlation id.
inline std::optional<std::pair<long long, long long>> last_step(const json& events) {
  std::optional<std::pair<long long, long long>> region;
  for (const json& e : events) {
    if (e.value("ph", "") != "X" || e.value("cat", "") == "gpu_user_annotation") continue;
    if (e.value("name", "").rfind("ProfilerStep#", 0) != 0) continue;
    const long long ts = ns_of(e.at("ts")), end = ts + ns_of(e.at("dur"));
    if (!region || ts > region->first) region = {{ts, end}};
  }
  return region;
}

inline std::map<long long, long long> launch_times(const json& events) {
  std::map<long long, long long> launch;
  for (const json& e : events) {
    const std::string cat = e.value("cat", "");
    if (e.value("ph", "") == "X" && (cat == "cuda_runtime" || cat == "cuda_driver") &&
        e.contains("args") && e["args"].contains("correlation"))
      launch.emplace(e["args"]["correlation"].get<long long>(), ns_of(e.at("ts")));
  }
  for (const json& e : events)
    if (e.value("ph", "") == "s" && e.value("cat", "") == "ac2g" && e.at("id").is_number())
      launch.emplace(e["id"].get<long long>(), ns_of(e.at("ts")));
  return launch;
}

inline std::vector<DeviceWork> device_work_in_region(const json& trace) {
  const json& events = trace.at("traceEvents");
  const auto region = last_step(events);
  const auto launch = launch_times(events);
  std::vector<DeviceWork> out;
  for (const json& e : events) {
    const std::string cat = e.value("cat", "");
    if (e.value("ph", "") != "X" || !is_device_cat(cat)) continue;
    const json& args = e.at("args");
    long long t = ns_of(e.at("ts"));
    if (args.contains("correlation")) {
      const auto it = launch.find(args["correlation"].get<long long>());
      if (it != launch.end()) t = it->second;
    }
    if (region && (t < region->first || t > region->second)) continue;
    out.push_back({cat, args.value("stream", -1LL), ns_of(e.at("dur"))});
  }
  return out;
}

}  // namespace cgtest
