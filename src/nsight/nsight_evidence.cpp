// NsightEvidence construction: `unavailable` and `load_optional` (spec §10.1–§10.2).
#include "nsight/nsight_evidence.hpp"

namespace candle_graph::nsight {

NsightEvidence unavailable(std::string reason) {
  NsightEvidence e;
  e.status = GpuEvidenceStatus::unavailable;
  e.reason = std::move(reason);
  return e;
}

NsightEvidence load_optional(const std::optional<std::filesystem::path>& dir,
                             const std::vector<std::string>& /*expected_keys*/) {
  if (!dir) return unavailable("Nsight capture was not requested");  // §10.2
  // Directory loading lands in the next commit (issue 7); until then report it honestly.
  NsightEvidence e = unavailable("Nsight CSV loading is not implemented yet");
  e.status = GpuEvidenceStatus::failed;
  return e;
}

}  // namespace candle_graph::nsight
