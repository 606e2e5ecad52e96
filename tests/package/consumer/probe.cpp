// Records one small training update with the probe alone (no analysis library linked).
#include "candle_graph/instrument.hpp"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  using namespace candle_graph;
  TraceSession session(argv[1], ProfileRun::training("consumer::update", 1, "cpu"));
  {
    auto region = session.begin_measurement("consumer/update-1");
    { auto f = session.begin_step_span("consumer/update-1/forward", ExecutionStep::forward); }
    { auto b = session.begin_step_span("consumer/update-1/backward", ExecutionStep::backward); }
    { auto o = session.begin_step_span("consumer/update-1/optimizer", ExecutionStep::optimizer); }
  }
  session.finish();
  return 0;
}
