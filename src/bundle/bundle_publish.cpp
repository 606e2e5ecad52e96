#include "bundle/bundle_publish.hpp"

#include "candle_graph/import.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bundle/bundle_staging.hpp"
#include "bundle/bundle_verify.hpp"
#include "bundle/sha256.hpp"
#include "compare/comparison_parts.hpp"
#include "evidence/evidence_json.hpp"
#include "evidence/packet_builder.hpp"
#include "evidence/report_digest.hpp"
#include "output/created_parents.hpp"
#include "output/json_stream.hpp"
#include "output/write_guard.hpp"
#include "viewer/viewer_page.hpp"
#include "viewer/viewer_payload.hpp"

namespace candle_graph::bundle {
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kCopyChunk = std::size_t{1} << 20;  // bytes per read while copying a file in

std::string errno_text() {
  return std::strerror(errno);
}

// Test hooks: CG_BUNDLE_FAIL_AT=STEP fails publication at STEP (see kPublishSteps);
// CG_BUNDLE_KILL_AT=STEP kills the process there with SIGKILL, which no clean-up can catch.
void step(const char* name, const fs::path& destination) {
  const char* kill_at = std::getenv("CG_BUNDLE_KILL_AT");
  if (kill_at != nullptr && std::strcmp(kill_at, name) == 0) ::raise(SIGKILL);
  const char* fail = std::getenv("CG_BUNDLE_FAIL_AT");
  if (fail != nullptr && std::strcmp(fail, name) == 0)
    throw Error(destination.string(), 0,
                std::string("publication failed at step \"") + name +
                    "\" (injected by CG_BUNDLE_FAIL_AT); no bundle was written");
}

void fsync_path(const fs::path& p, int flags) {
  const int fd = ::open(p.c_str(), flags | O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    const std::string why = errno_text();
    if (fd >= 0) ::close(fd);
    throw Error(p.string(), 0, "cannot fsync: " + why);
  }
  ::close(fd);
}

// One file of the staging directory: written once, hashed while written, fsynced on close.
class StagedFile {
 public:
  StagedFile(const fs::path& stage, std::string rel) : rel_(std::move(rel)), path_(stage / rel_) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error(path_.string(), 0, "cannot create staged file: " + errno_text());
  }
  ~StagedFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;

  void write(std::string_view bytes) {
    hash_.update(bytes);
    size_ += bytes.size();
    while (!bytes.empty()) {
      const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        throw Error(path_.string(), 0, "cannot write staged file: " + errno_text());
      }
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }

  ManifestFile close() {
    if (::fsync(fd_) != 0) throw Error(path_.string(), 0, "cannot fsync: " + errno_text());
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) throw Error(path_.string(), 0, "cannot close: " + errno_text());
    return {rel_, size_, hash_.hex_digest()};
  }

  const fs::path& path() const { return path_; }

 private:
  std::string rel_;
  fs::path path_;
  int fd_ = -1;
  Sha256 hash_;
  std::uint64_t size_ = 0;
};

// Copies a regular input file (symlinks to one are followed: inputs are the user's choice).
ManifestFile copy_in(const fs::path& from, const fs::path& stage, const std::string& rel) {
  const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (in < 0) throw Error(from.string(), 0, "cannot open: " + errno_text());
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{in};
  struct stat st {};
  if (::fstat(in, &st) != 0 || !S_ISREG(st.st_mode))
    throw Error(from.string(), 0, "not a regular file");
  if (static_cast<std::uint64_t>(st.st_size) > kMaxFileBytes)
    throw Error(from.string(), 0, "larger than a bundle may hold");
#ifdef POSIX_FADV_SEQUENTIAL
  ::posix_fadvise(in, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  StagedFile out(stage, rel);
  std::vector<char> buf(kCopyChunk);
  for (;;) {
    const ssize_t n = ::read(in, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(from.string(), 0, "cannot read: " + errno_text());
    }
    if (n == 0) break;
    out.write(std::string_view(buf.data(), static_cast<std::size_t>(n)));
  }
  return out.close();
}

ManifestFile write_text(const fs::path& stage, const std::string& rel, std::string_view text) {
  StagedFile out(stage, rel);
  out.write(text);
  return out.close();
}

// The trace of a bundle: a trace/6 input byte for byte; any other format the registry reads (a
// PyTorch trace) as the trace/6 it imports to, so the bundle is readable by every trace/6 reader.
ManifestFile stage_trace(const fs::path& input, const fs::path& stage, const std::string& rel,
                         const ImportOptions& options) {
  std::string head_bytes;
  const InputHead head = read_input_head(input, head_bytes);
  const Importer* importer = find_importer(head);
  if (importer == nullptr || importer == &trace6_importer()) return copy_in(input, stage, rel);
  const ImportedTrace t = importer->read(input, options);
  return write_text(stage, rel, write_jsonl_string(t.document));
}

// The trace parsed from its staged copy, errors naming the user's file.
TraceDocument parse_staged(const fs::path& staged, const fs::path& original,
                           const ReadOptions& read) {
  try {
    return parse_trace(staged, read);
  } catch (const Error& e) {
    throw Error(original.string(), e.line(), e.message());
  }
}

// The path an error about a staged file should name: the same file in the bundle being
// published (DEST/trace.jsonl), not in the hidden staging directory the user never named;
// nullopt for an error about another path.
std::optional<std::string> path_in_bundle(const std::string& path, const fs::path& dest) {
  const fs::path parent = dest.parent_path().empty() ? fs::path(".") : dest.parent_path();
  const std::string staging = (parent / staging_prefix(dest)).string();
  if (path.rfind(staging, 0) != 0) return std::nullopt;
  const std::size_t slash = path.find('/', staging.size());
  return dest.string() + (slash == std::string::npos ? std::string() : path.substr(slash));
}

BundleManifest publish_through_staging(const PublishRequest& req);

}  // namespace

BundleManifest publish_bundle(const PublishRequest& req) {
  try {
    return publish_through_staging(req);
  } catch (const output::RefusedDestination&) {
    throw;
  } catch (const Error& e) {
    const auto shown = path_in_bundle(e.path(), req.destination);
    if (!shown) throw;
    throw Error(e.kind(), *shown, e.line(), e.message());
  }
}

namespace {

BundleManifest publish_through_staging(const PublishRequest& req) {
  const fs::path& dest = req.destination;
  if (dest.empty() || dest.filename().empty() || dest.filename() == "." || dest.filename() == "..")
    throw output::RefusedDestination(dest.string(), 0, "not a usable bundle directory name");
  output::refuse_inside_bundle(dest);
  struct stat st {};
  if (::lstat(dest.c_str(), &st) == 0)
    throw output::RefusedDestination(
        dest.string(), 0, "already exists; a bundle is never replaced (choose a new directory)");
  const fs::path parent = dest.parent_path().empty() ? fs::path(".") : dest.parent_path();
  // Parent directories created here are removed again (when still empty) if publication fails.
  output::CreatedParents created;
  created.create(parent, dest.string());

  remove_stale_staging(dest, req.removed_stale_staging);
  Staging staging(dest);
  const fs::path& stage = staging.path();
  step("stage", dest);

  BundleManifest m;
  m.tool_version = CG_VERSION;
  m.schemas = expected_schemas();

  m.files.push_back(stage_trace(req.trace, stage, std::string(kTraceName), req.import));
  step("trace", dest);
  if (req.baseline) {
    m.baseline = std::string(kBaselineName);
    m.files.push_back(stage_trace(*req.baseline, stage, std::string(kBaselineName), {}));
  }
  step("baseline", dest);
  std::optional<fs::path> staged_nsight;
  if (req.nsight_dir) {
    std::error_code ec;
    if (!fs::is_directory(*req.nsight_dir, ec))
      throw Error(req.nsight_dir->string(), 0, "the Nsight report directory does not exist");
    staged_nsight = stage / kNsightDirName;
    if (::mkdir(staged_nsight->c_str(), 0755) != 0)
      throw Error(staged_nsight->string(), 0, "cannot create: " + errno_text());
    m.nsight_dir = std::string(kNsightDirName);
    std::vector<fs::path> inputs;
    for (fs::directory_iterator it(*req.nsight_dir, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code type_ec;
      if (it->is_regular_file(type_ec)) inputs.push_back(it->path());
    }
    if (ec) throw Error(req.nsight_dir->string(), 0, "cannot list: " + ec.message());
    std::sort(inputs.begin(), inputs.end());
    for (const auto& in : inputs) {
      const std::string rel = std::string(kNsightDirName) + "/" + in.filename().string();
      if (path_problem(rel))
        throw Error(in.string(), 0, "a file name a bundle cannot hold: " + *path_problem(rel));
      m.files.push_back(copy_in(in, stage, rel));
    }
    fsync_path(*staged_nsight, O_DIRECTORY);
  }
  step("nsight", dest);

  // The same threads as the command's own read, analyses and writes (`-j`): the bundle's files
  // do not depend on them.
  ReadOptions read;
  read.progress = req.import.progress;
  read.threads = req.import.threads;
  const TraceDocument doc = parse_staged(stage / kTraceName, req.trace, read);
  std::optional<TraceDocument> baseline;
  if (req.baseline) {
    ReadOptions baseline_read;
    baseline_read.threads = req.import.threads;
    baseline = parse_staged(stage / kBaselineName, *req.baseline, baseline_read);
    evidence::check_span_keys_fit(*baseline, req.baseline->string());
    evidence::check_span_keys_fit(doc, req.trace.string());
  }
  m.run_id = std::string(doc.run().run_id);
  std::optional<evidence::EvidencePacket> built;
  GraphOptions analyses;
  analyses.threads = req.import.threads;
  try {
    built.emplace(evidence::build_packet(doc, baseline ? &*baseline : nullptr, staged_nsight,
                                         std::string(kNsightDirName), analyses));
  } catch (const Error& e) {  // an untrusted trace: name the user's file
    if (!e.path().empty()) throw;
    throw Error(req.trace.string(), 0, e.message());
  }
  const evidence::EvidencePacket& packet = *built;
  {
    StagedFile out(stage, std::string(kEvidenceName));
    output::JsonStream w([&](std::string_view piece) { out.write(piece); });
    w.set_format_threads(req.import.threads);
    evidence::write_evidence_packet(w, packet);
    w.finish();
    m.files.push_back(out.close());
  }
  step("evidence", dest);
  m.files.push_back(write_text(stage, std::string(kReportName), evidence::render_report(packet)));
  step("report", dest);
  m.files.push_back(write_text(stage, std::string(kViewerName), viewer::render_viewer(packet)));
  step("viewer", dest);

  std::sort(m.files.begin(), m.files.end(),
            [](const ManifestFile& a, const ManifestFile& b) { return a.path < b.path; });
  write_text(stage, std::string(kManifestName), manifest_to_json(m));
  step("manifest", dest);

  const VerificationResult check = verify_bundle(stage, {});
  if (!check.verified)
    throw Error(dest.string(), 0,
                "the staged bundle failed verification: " + summarize_findings(check.findings));
  step("verify", dest);

  // mkdtemp made the staging directory private (0700); the bundle gets the usual mode.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::chmod(stage.c_str(), 0777 & ~mask) != 0)
    throw Error(stage.string(), 0, "cannot set the bundle's permissions: " + errno_text());
  fsync_path(stage, O_DIRECTORY);
  step("fsync", dest);

  step("rename", dest);
  if (::renameat2(AT_FDCWD, stage.c_str(), AT_FDCWD, dest.c_str(), RENAME_NOREPLACE) != 0) {
    const int err = errno;
    if (err == EEXIST)
      throw output::RefusedDestination(dest.string(), 0,
                                       "appeared while the bundle was being staged; not replaced");
    if (err != EINVAL && err != ENOSYS)
      throw Error(dest.string(), 0,
                  std::string("cannot publish the bundle: ") + std::strerror(err));
    // A file system without RENAME_NOREPLACE: rename(2) would replace an empty directory that
    // appeared meanwhile, so check once more just before.
    if (::lstat(dest.c_str(), &st) == 0)
      throw output::RefusedDestination(dest.string(), 0,
                                       "appeared while the bundle was being staged; not replaced");
    if (::rename(stage.c_str(), dest.c_str()) != 0)
      throw Error(dest.string(), 0, "cannot publish the bundle: " + errno_text());
  }
  staging.release();
  created.keep();
  fsync_path(parent, O_DIRECTORY);
  return m;
}

}  // namespace

}  // namespace candle_graph::bundle
