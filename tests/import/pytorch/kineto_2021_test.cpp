// The 2021 Kineto layout (PyTorch ~1.9, pytorch.md §1.4b): categories Operator /
// Runtime / Kernel / Memcpy, flow cat "async", string tids ("stream 7"), computeProperties,
// displayTimeUnit "ns" while ts is µs, and ROCm's HIP memory (Device Type 6). Hand-built; the
// expected values follow from the events below.
#include <algorithm>

#include "support/convert_helpers.hpp"

namespace cgimport {
namespace {

// Step 3 is 1000..1500 µs. Kernel (corr 55) launched at 1030 by a Runtime call and run at 1600,
// after the step: kept, in the step. Memcpy (corr 56) has no Runtime record, only an async flow
// start at 1100: launched in the step, kept. early_kernel (corr 54) was launched at 880: dropped.
// HIP memory on device 1: one alloc/free pair -> cuda:1.
constexpr const char* kTrace2021 =
    R"json({"schemaVersion":1,"computeProperties":[{"id":0,"name":"Tesla V100"}],"displayTimeUnit":"ns","traceEvents":[
{"ph":"X","cat":"Operator","name":"ProfilerStep#3","pid":100,"tid":"thread 1 (python)","ts":1000,"dur":500},
{"ph":"X","cat":"Operator","name":"aten::linear","pid":100,"tid":"thread 1 (python)","ts":1010,"dur":100},
{"ph":"X","cat":"Operator","name":"aten::addmm","pid":100,"tid":"thread 1 (python)","ts":1020,"dur":80},
{"ph":"X","cat":"Runtime","name":"cudaLaunchKernel","pid":100,"tid":"thread 1 (python)","ts":1030,"dur":10,"args":{"correlation":55,"external id":2}},
{"ph":"s","cat":"async","id":55,"pid":100,"tid":"thread 1 (python)","ts":1030,"name":"launch"},
{"ph":"X","cat":"Kernel","name":"volta_sgemm_128x64_nn","pid":0,"tid":"stream 7","ts":1600,"dur":50,"args":{"correlation":55,"device":0,"stream":7}},
{"ph":"f","cat":"async","id":55,"pid":0,"tid":"stream 7","ts":1600,"name":"launch","bp":"e"},
{"ph":"X","cat":"Memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":"stream 7","ts":1200,"dur":5,"args":{"correlation":56,"device":0,"bytes":4096}},
{"ph":"s","cat":"async","id":56,"pid":100,"tid":"thread 1 (python)","ts":1100,"name":"launch"},
{"ph":"X","cat":"Kernel","name":"early_kernel","pid":0,"tid":"stream 7","ts":900,"dur":5,"args":{"correlation":54,"device":0}},
{"ph":"X","cat":"Runtime","name":"cudaLaunchKernel","pid":100,"tid":"thread 1 (python)","ts":880,"dur":5,"args":{"correlation":54}},
{"ph":"i","s":"t","name":"[memory]","pid":100,"tid":"thread 1 (python)","ts":1050,"args":{"Device Type":6,"Device Id":1,"Addr":64,"Bytes":1024}},
{"ph":"i","s":"t","name":"[memory]","pid":100,"tid":"thread 1 (python)","ts":1060,"args":{"Device Type":6,"Device Id":1,"Addr":64,"Bytes":-1024}}
]})json";

TEST(Kineto2021, OperatorRuntimeKernelMemcpyAsyncLayout) {
  TempDir dir;
  const Converted c = convert_and_read(dir.write("k2021.json", kTrace2021), dir / "t.jsonl");
  EXPECT_TRUE(c.health.trusted) << error_codes(c.health);
  EXPECT_EQ(c.result.measured, "ProfilerStep#3");
  // Host: aten::linear, aten::addmm and the cudaLaunchKernel at 1030 (the one at 880 is before
  // the step); device: the kernel and the memcpy.
  ASSERT_EQ(c.doc.ops().size(), 3u);
  EXPECT_EQ(c.device_ops, 2u);
  EXPECT_EQ(c.tag("convert.dropped_device_ops_outside_window"), "1");
  EXPECT_EQ(c.tag("convert.dropped_runtime_calls_outside_window"), "1");
  // aten::linear (10..110) encloses aten::addmm (20..100), which encloses the launch (30..40),
  // all on the string tid "thread 1 (python)": self times 100 - 80, 80 - 10 and 10 µs.
  const auto& ops = c.doc.ops();
  auto named = [&](std::string_view n) {
    return *std::find_if(ops.begin(), ops.end(), [&](const auto& op) { return op.op_name == n; });
  };
  EXPECT_EQ(named("aten::linear").duration_ns, 20000u);
  EXPECT_EQ(named("aten::linear").total_ns, 100000u);
  EXPECT_EQ(named("aten::addmm").duration_ns, 70000u);
  EXPECT_EQ(named("cudaLaunchKernel").op_kind, candle_graph::OpKind::runtime);
  EXPECT_EQ(named("cudaLaunchKernel").correlation, 55u);
  EXPECT_EQ(named("aten::linear").lane, named("cudaLaunchKernel").lane);
  EXPECT_EQ(c.tag("convert.flows_not_mapped"), "3");
  EXPECT_EQ(c.tag("convert.unmatched_flow_starts"), "1");
  const auto& work = c.doc.device_ops();
  const auto kernel = std::find_if(work.begin(), work.end(), [](const auto& op) {
    return op.op_name == "volta_sgemm_128x64_nn";
  });
  ASSERT_NE(kernel, work.end());
  EXPECT_EQ(kernel->timestamp_ns, 600000u);  // 1600 µs - 1000 µs
  EXPECT_EQ(kernel->device, "cuda:0");
  EXPECT_EQ(kernel->op_kind, candle_graph::OpKind::kernel);
  EXPECT_EQ(kernel->total_ns, 50000u);  // its time on the device
  EXPECT_EQ(kernel->duration_ns, 0u);   // and none on the host
  EXPECT_EQ(kernel->lane, 7u);          // args.stream
  const auto memcpy = std::find_if(
      work.begin(), work.end(), [](const auto& op) { return op.op_name.substr(0, 6) == "Memcpy"; });
  ASSERT_NE(memcpy, work.end());
  EXPECT_EQ(memcpy->storage_bytes, 4096u);
  EXPECT_EQ(memcpy->op_kind, candle_graph::OpKind::memcpy);
  ASSERT_EQ(c.doc.memory().size(), 2u);
  EXPECT_EQ(c.doc.memory()[0].device, "cuda:1");
  EXPECT_EQ(c.doc.memory()[0].bytes, 1024u);
}

}  // namespace
}  // namespace cgimport
