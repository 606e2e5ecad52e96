// trace6.md §13.1 ProfileRun: the provenance builder.
#include "candle_graph/instrument.hpp"

namespace candle_graph {

ProfileRun::ProfileRun(std::string_view entrypoint, std::uint64_t capture_step,
                       std::string_view device, ExecutionPhase phase) {
  fields_.entrypoint = std::string(entrypoint);
  fields_.phase = phase;
  fields_.capture_step = capture_step;
  fields_.warmup_steps = capture_step == 0 ? 0 : capture_step - 1;  // saturating
  fields_.device = std::string(device);
  fields_.correlation_id = fields_.entrypoint +
                           (phase == ExecutionPhase::train ? "/update-" : "/inference-") +
                           std::to_string(capture_step);
}

ProfileRun ProfileRun::training(std::string_view entrypoint, std::uint64_t capture_step,
                                std::string_view device) {
  return ProfileRun(entrypoint, capture_step, device, ExecutionPhase::train);
}

ProfileRun ProfileRun::inference(std::string_view entrypoint, std::uint64_t capture_step,
                                 std::string_view device) {
  return ProfileRun(entrypoint, capture_step, device, ExecutionPhase::infer);
}

ProfileRun& ProfileRun::tag(std::string_view key, std::string_view value) & {
  fields_.tags.insert_or_assign(std::string(key), std::string(value));
  return *this;
}
ProfileRun&& ProfileRun::tag(std::string_view key, std::string_view value) && {
  return std::move(tag(key, value));
}

ProfileRun& ProfileRun::final_tag_room(std::size_t bytes) & {
  fields_.final_tag_room = bytes;
  return *this;
}
ProfileRun&& ProfileRun::final_tag_room(std::size_t bytes) && {
  return std::move(final_tag_room(bytes));
}

ProfileRun& ProfileRun::correlation_id(std::string_view value) & {
  fields_.correlation_id = std::string(value);
  return *this;
}
ProfileRun&& ProfileRun::correlation_id(std::string_view value) && {
  return std::move(correlation_id(value));
}

ProfileRun& ProfileRun::device_synchronized() & {
  fields_.timing_mode = TimingMode::device_synchronized;
  fields_.measured_region_device_synchronized = true;  // trace6.md §17.6
  return *this;
}
ProfileRun&& ProfileRun::device_synchronized() && {
  return std::move(device_synchronized());
}

ProfileRun& ProfileRun::measured_region_device_synchronized() & {
  fields_.measured_region_device_synchronized =
      true;  // trace6.md §17.6: timing mode stays as it is
  return *this;
}
ProfileRun&& ProfileRun::measured_region_device_synchronized() && {
  return std::move(measured_region_device_synchronized());
}

}  // namespace candle_graph
