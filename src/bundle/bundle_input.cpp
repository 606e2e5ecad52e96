#include "bundle/bundle_input.hpp"

#include <sys/stat.h>

#include "bundle/bundle_verify.hpp"
#include "candle_graph/error.hpp"

namespace candle_graph::bundle {

bool is_bundle_dir(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  const std::filesystem::path manifest = path / kManifestName;
  return ::lstat(manifest.c_str(), &st) == 0;
}

BundleInput open_verified_bundle(const std::filesystem::path& dir) {
  const VerificationResult r = verify_bundle(dir, {});
  if (!r.verified)
    throw Error(dir.string(), 0,
                "the bundle does not verify, so it is not used: " + summarize_findings(r.findings) +
                    " (`candle-graph verify " + dir.string() + "` lists every finding)");
  BundleInput in;
  in.trace = dir / kTraceName;
  if (r.manifest->nsight_dir) in.nsight_dir = dir / kNsightDirName;
  return in;
}

}  // namespace candle_graph::bundle
