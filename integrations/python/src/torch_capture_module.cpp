// candle_graph._torch_capture: the native half of `candle_graph.torch`. The one unit
// that includes the torch-Python headers (they take about a minute and a GB to compile): it
// binds the LibTorch capture of integrations/torch (the same engine, not a copy) to Python.
// Argument checks, the `with` protocol and the error messages users see live in
// candle_graph/torch.py; this unit turns the C++ errors into the Python exceptions it documents.
//
// torch.Tensor arguments arrive through torch's own pybind11 caster for at::Tensor
// (torch/csrc/utils/pybind.h, implemented in libtorch_python.so). Debian builds python3-torch
// against its pybind11-dev 2.10 (libtorch_python.so carries __pybind11_internals_v4_gcc_
// libstdcpp_cxxabi1017__), the same headers this unit compiles with, so the two modules share
// pybind11's internals.
#include <torch/csrc/utils/pybind.h>
#include <torch/version.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "candle_graph/instrument.hpp"
#include "candle_graph/torch/capture.hpp"

namespace py = pybind11;
namespace cg = candle_graph;
namespace cgl = candle_graph::libtorch;

namespace {

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

[[noreturn]] void raise(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw py::error_already_set();
}

std::optional<cg::ExecutionStep> step_named(const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (name == "forward") return cg::ExecutionStep::forward;
  if (name == "backward") return cg::ExecutionStep::backward;
  if (name == "optimizer") return cg::ExecutionStep::optimizer;
  raise(PyExc_ValueError,
        "span step must be \"forward\", \"backward\" or \"optimizer\", not \"" + name + "\"");
}

// One span of a capture. Safe to keep after its capture ended: CaptureSpan then does not touch
// the capture's state, and ending it raises instead of writing.
class NativeSpan {
 public:
  explicit NativeSpan(cgl::CaptureSpan span) : span_(std::move(span)) {}
  void end() { span_.end(); }

 private:
  cgl::CaptureSpan span_;
};

// One capture, created by `with TorchCapture(...)` and closed at the end of the block. Every call
// must come from the thread that created it (the capture records that thread only).
class NativeCapture {
 public:
  NativeCapture(const std::string& path, const std::string& entrypoint, std::uint64_t step,
                const std::string& phase, const std::string& device, const NamedTensors& parameters,
                const NamedTensors& buffers,
                const std::vector<std::pair<std::string, std::string>>& tags)
      : thread_(std::this_thread::get_id()) {
    if (cgl::TorchCapture::recording_on_this_thread())
      raise(PyExc_RuntimeError,
            "a candle_graph capture is already recording on this thread: captures cannot be "
            "nested; leave the outer `with TorchCapture(...)` block first");
    cg::ProfileRun run = phase == "inference" ? cg::ProfileRun::inference(entrypoint, step, device)
                                              : cg::ProfileRun::training(entrypoint, step, device);
    run.tag("python.capture", "candle_graph.torch");
    for (const auto& [key, value] : tags) run.tag(key, value);
    cgl::ModelTensors model;
    for (const auto& [name, tensor] : parameters) model.add_parameter(name, tensor);
    for (const auto& [name, tensor] : buffers) model.add_buffer(name, tensor);
    try {
      // No backward warm-up: measured with bench/python_capture_bench.py, the unrecorded
      // backward pass before the block made the captured Python update slower (by 0.05-0.09x of
      // an update at batch 8) instead of faster; the warm-up's two ops alone still pay off.
      cgl::CaptureOptions options;
      options.warm_up_backward = false;
      capture_ = std::make_unique<cgl::TorchCapture>(path, std::move(run), std::move(model),
                                                     std::move(options));
    } catch (const cg::InstrumentError& e) {
      // Nesting was refused above and the step is checked in torch.py: what remains is the
      // file. The message names it ("{path}: cannot create the trace file: {reason}").
      raise(PyExc_OSError, e.what());
    }
  }

  NativeCapture(const NativeCapture&) = delete;
  NativeCapture& operator=(const NativeCapture&) = delete;
  // A capture entered but never left (its `with` protocol called by hand) ends here. Only on its
  // own thread: elsewhere (the garbage collector of another thread) removing the thread-local
  // hooks is impossible, so the capture is leaked and keeps recording into its own buffers
  // rather than leaving its thread with hooks that point at freed memory.
  ~NativeCapture() {
    if (capture_ && std::this_thread::get_id() != thread_) (void)capture_.release();
  }

  NativeSpan begin_span(const std::string& name, const std::string& step) {
    check();
    const std::optional<cg::ExecutionStep> s = step_named(step);
    return NativeSpan(s ? capture_->begin_step_span(name, *s) : capture_->begin_span(name));
  }

  void record_input(const std::string& name, const at::Tensor& tensor) {
    check();
    if (!tensor.defined()) raise(PyExc_ValueError, "record_input: the tensor is undefined");
    capture_->record_input(name, tensor);
  }

  // A zero-length span `{measurement}/exception: {what}` in the measured region: the trace says
  // that the block was left by an exception, and which one.
  void mark_exception(const std::string& what) {
    check();
    cgl::CaptureSpan span = capture_->begin_span("exception: " + what);
    span.end();
  }

  py::dict finish() {
    check();
    const cgl::CaptureSummary s = capture_->finish();
    py::dict d;
    d["trace"] = s.trace.string();
    d["ops"] = s.ops;
    d["memory_events"] = s.memory_events;
    d["allocs"] = s.allocs;
    d["frees"] = s.frees;
    d["live_at_end"] = s.live_at_end;
    d["live_bytes_at_end"] = s.live_bytes_at_end;
    d["peak_bytes"] = s.peak_bytes;
    d["pre_capture_frees"] = s.pre_capture_frees;
    d["pre_capture_free_bytes"] = s.pre_capture_free_bytes;
    d["memory_captured"] = s.memory_captured;
    d["memory_note"] = s.memory_note;
    d["gradients"] = s.gradients;
    d["non_finite_gradients"] = s.non_finite_gradients;
    d["missing_gradients"] = s.missing_gradients;
    d["measured_ns"] = s.measured_ns;
    d["overhead_per_op_ns"] = s.overhead_per_op_ns;
    d["overhead_per_memory_event_ns"] = s.overhead_per_memory_event_ns;
    d["overhead_estimate_ns"] = s.overhead_estimate_ns;
    return d;
  }

  // Stops recording for good and gives the thread's capture state back (the destructor of the
  // C++ capture; finish() was called or raised before).
  void close() {
    if (!capture_) return;
    check();
    capture_.reset();
  }

 private:
  void check() const {
    if (!capture_) raise(PyExc_RuntimeError, "this capture has ended");
    if (std::this_thread::get_id() != thread_)
      raise(PyExc_RuntimeError,
            "a TorchCapture records the thread that entered its `with` block; it cannot be used "
            "from another thread");
  }

  std::thread::id thread_;
  std::unique_ptr<cgl::TorchCapture> capture_;
};

}  // namespace

PYBIND11_MODULE(_torch_capture, m) {
  m.doc() = "Native part of candle_graph.torch (use candle_graph.torch.TorchCapture)";
  // Misuse the checks in torch.py cannot see (a span ended out of order, a finished session)
  // surfaces as InstrumentError: RuntimeError with the library's message. Local: only for this
  // module's calls, never for the analysis module's errors.
  // pybind11 takes a plain function pointer of exactly this signature.
  // NOLINTNEXTLINE(performance-unnecessary-value-param)
  py::register_local_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const cg::Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
  py::class_<NativeSpan>(m, "Span").def("end", &NativeSpan::end);
  py::class_<NativeCapture>(m, "Capture")
      .def(py::init<const std::string&, const std::string&, std::uint64_t, const std::string&,
                    const std::string&, const NamedTensors&, const NamedTensors&,
                    const std::vector<std::pair<std::string, std::string>>&>(),
           py::arg("path"), py::arg("entrypoint"), py::arg("step"), py::arg("phase"),
           py::arg("device"), py::arg("parameters"), py::arg("buffers"), py::arg("tags"))
      .def("begin_span", &NativeCapture::begin_span, py::arg("name"), py::arg("step"))
      .def("record_input", &NativeCapture::record_input, py::arg("name"), py::arg("tensor"))
      .def("mark_exception", &NativeCapture::mark_exception, py::arg("what"))
      .def("finish", &NativeCapture::finish)
      .def("close", &NativeCapture::close);
  m.def("recording_on_this_thread", &cgl::TorchCapture::recording_on_this_thread);
  // What candle_graph.torch's engine="auto" compares with the running torch: an extension built
  // for another release or C++ ABI must not be used (the profiler engine records instead).
  m.attr("torch_version") = TORCH_VERSION;
  m.attr("cxx11_abi") = static_cast<bool>(_GLIBCXX_USE_CXX11_ABI);
}
