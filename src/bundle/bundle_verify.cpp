#include "bundle/bundle_verify.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <set>

#include "bundle/sha256.hpp"
#include "candle_graph/error.hpp"
#include "evidence/evidence_json.hpp"
#include "evidence/packet_builder.hpp"
#include "evidence/report_digest.hpp"
#include "output/json_stream.hpp"
#include "viewer/viewer_page.hpp"

namespace candle_graph::bundle {
namespace {

constexpr std::size_t kHashChunk = std::size_t{1} << 20;  // bytes per read while hashing a file

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  void reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }
  int get() const { return fd_; }
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_;
};

std::string errno_text(int err) {
  return std::strerror(err);
}

// A regular file opened relative to `dirfd`, never through a symlink and never blocking (a FIFO
// planted in a bundle must not hang verification). Returns -1 with errno set.
int open_regular(int dirfd, const char* name) {
  return ::openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
}

std::string proc_path(int fd) {
  return "/proc/self/fd/" + std::to_string(fd);
}

class Verifier {
 public:
  Verifier(const std::filesystem::path& dir, const VerifyOptions& options) : options_(options) {
    r_.bundle = dir.string();
    r_.semantic = options.semantic;
  }

  VerificationResult run(const std::filesystem::path& dir) {
    dirfd_.reset(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dirfd_.ok()) {
      const int err = errno;
      struct stat st {};
      if (err == ELOOP || (::lstat(dir.c_str(), &st) == 0 && S_ISLNK(st.st_mode)))
        add("symlink", "", "the bundle directory is a symlink (verification never follows one)");
      else if (err == ENOTDIR)
        add("not_a_bundle", "", "not a directory");
      else
        add("unreadable", "", "cannot open the bundle directory: " + errno_text(err));
      return finish();
    }
    if (!read_manifest()) return finish();
    if (!check_declared_names()) return finish();
    for (const auto& f : r_.manifest->files) declared_[f.path] = &f;
    // The rebuild runs beside the hashing, on a Verifier of its own so that its findings stay
    // apart: they count only when every file matched the manifest, as when it runs after it.
    // Not with an Nsight directory: its reports are read by name, which is safe only once the
    // walk has found no symlink or FIFO among them.
    std::future<std::vector<Finding>> rebuilt;
    const bool beside = options_.semantic && !r_.manifest->nsight_dir;
    if (beside) rebuilt = std::async(std::launch::async, rebuild_task());
    walk(dirfd_.get(), "", 0);
    for (const auto& [path, file] : declared_)
      if (!seen_.count(path))
        add("missing", path, "declared in the manifest but not in the bundle");
    if (r_.findings.empty()) check_run_id();
    if (rebuilt.valid()) {
      std::vector<Finding> found = rebuilt.get();
      if (r_.findings.empty()) r_.findings = std::move(found);
    } else if (r_.findings.empty() && options_.semantic) {
      semantic_check();
    }
    return finish();
  }

 private:
  void add(std::string code, std::string path, std::string message) {
    r_.findings.push_back({std::move(code), std::move(path), std::move(message)});
  }

  VerificationResult finish() {
    std::stable_sort(r_.findings.begin(), r_.findings.end(),
                     [](const Finding& a, const Finding& b) {
                       return std::tie(a.path, a.code) < std::tie(b.path, b.code);
                     });
    r_.verified = r_.findings.empty();
    return std::move(r_);
  }

  bool read_manifest() {
    const std::string name(kManifestName);
    struct stat st {};
    if (::fstatat(dirfd_.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      const int err = errno;
      if (err == ENOENT)
        add("manifest_missing", name, "no bundle.json: not a bundle, or the manifest was removed");
      else
        add("unreadable", name, "cannot stat the manifest: " + errno_text(err));
      return false;
    }
    if (S_ISLNK(st.st_mode)) {
      add("symlink", name, "the manifest is a symlink (never followed)");
      return false;
    }
    if (!S_ISREG(st.st_mode)) {
      add("not_regular", name, "the manifest is not a regular file");
      return false;
    }
    if (static_cast<std::uint64_t>(st.st_size) > kMaxManifestBytes) {
      add("size_limit", name,
          "the manifest is " + std::to_string(st.st_size) + " bytes (limit " +
              std::to_string(kMaxManifestBytes) + ")");
      return false;
    }
    Fd fd(open_regular(dirfd_.get(), name.c_str()));
    if (!fd.ok()) {
      add("unreadable", name, "cannot open the manifest: " + errno_text(errno));
      return false;
    }
    std::string text;
    if (!read_bounded(fd.get(), kMaxManifestBytes, text)) {
      add("size_limit", name, "the manifest grew beyond the limit while being read");
      return false;
    }
    r_.manifest_sha256 = sha256_hex(text);
    if (options_.manifest_sha256 && *options_.manifest_sha256 != *r_.manifest_sha256)
      add("hash_mismatch", name,
          "SHA-256 " + *r_.manifest_sha256 + " differs from the expected " +
              *options_.manifest_sha256);
    r_.manifest = parse_manifest(text, r_.findings);
    return r_.manifest.has_value();
  }

  // Reads the whole file, at most `max` bytes; false when there is more.
  bool read_bounded(int fd, std::uint64_t max, std::string& out) {
    char buf[65536];
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw Error(r_.bundle, 0, "read error: " + errno_text(errno));
      }
      if (n == 0) return true;
      if (out.size() + static_cast<std::size_t>(n) > max) return false;
      out.append(buf, static_cast<std::size_t>(n));
    }
  }

  // A manifest may only declare the files a bundle consists of.
  bool check_declared_names() {
    const BundleManifest& m = *r_.manifest;
    std::set<std::string> paths;
    for (const auto& f : m.files) paths.insert(f.path);
    const std::size_t before = r_.findings.size();
    for (const auto& f : m.files) {
      const bool known =
          f.path == kTraceName || f.path == kEvidenceName || f.path == kReportName ||
          f.path == kViewerName || (m.baseline && f.path == kBaselineName) ||
          (m.nsight_dir && f.path.size() > kNsightDirName.size() + 1 &&
           f.path.compare(0, kNsightDirName.size() + 1, std::string(kNsightDirName) + "/") == 0);
      if (!known) add("manifest_invalid", f.path, "a bundle holds no file of this name");
    }
    std::vector<std::string> required = {std::string(kTraceName), std::string(kEvidenceName),
                                         std::string(kReportName), std::string(kViewerName)};
    if (m.baseline) required.emplace_back(kBaselineName);
    for (const auto& name : required)
      if (!paths.count(name))
        add("manifest_invalid", name, "the manifest does not declare this required file");
    return r_.findings.size() == before;
  }

  // Classifies every entry of the bundle (never following a symlink) and checks declared files.
  void walk(int dirfd, const std::string& prefix, int depth) {
    const int dup = ::dup(dirfd);
    if (dup < 0) throw Error(r_.bundle, 0, "cannot list the bundle: " + errno_text(errno));
    std::unique_ptr<DIR, int (*)(DIR*)> dir(::fdopendir(dup), &::closedir);
    if (!dir) {
      ::close(dup);
      add("unreadable", prefix, "cannot list the directory: " + errno_text(errno));
      return;
    }
    ::rewinddir(dir.get());
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(dir.get())) {
      const std::string_view n = e->d_name;
      if (n == "." || n == "..") continue;
      if (names.size() > kMaxFiles) {
        add("size_limit", prefix, "more than " + std::to_string(kMaxFiles) + " entries");
        return;
      }
      names.emplace_back(n);
    }
    std::sort(names.begin(), names.end());
    for (const auto& name : names) {
      const std::string rel = prefix.empty() ? name : prefix + "/" + name;
      struct stat st {};
      if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        add("unreadable", rel, "cannot stat: " + errno_text(errno));
        continue;
      }
      const bool declared = declared_.count(rel) != 0;
      if (depth == 0 && rel == kManifestName) continue;
      if (S_ISLNK(st.st_mode)) {
        seen_.insert(rel);
        add("symlink", rel,
            declared ? "a declared file is a symlink (never followed)"
                     : "a symlink that the manifest does not declare (never followed)");
        continue;
      }
      if (S_ISDIR(st.st_mode)) {
        if (depth == 0 && r_.manifest->nsight_dir && rel == kNsightDirName) {
          Fd sub(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
          if (!sub.ok())
            add("unreadable", rel, "cannot open the directory: " + errno_text(errno));
          else
            walk(sub.get(), rel, depth + 1);
        } else {
          add("extra_directory", rel, "a directory that is not part of the bundle");
        }
        continue;
      }
      if (!S_ISREG(st.st_mode)) {
        seen_.insert(rel);
        add("not_regular", rel, "not a regular file (device, FIFO or socket)");
        continue;
      }
      if (!declared) {
        add("extra_file", rel, "a file that the manifest does not declare");
        continue;
      }
      seen_.insert(rel);
      check_file(dirfd, name, rel, *declared_.at(rel));
    }
  }

  void check_file(int dirfd, const std::string& name, const std::string& rel,
                  const ManifestFile& f) {
    ++r_.files_checked;
    Fd fd(open_regular(dirfd, name.c_str()));
    if (!fd.ok()) {
      const int err = errno;
      add(err == ELOOP ? "symlink" : "unreadable", rel, "cannot open: " + errno_text(err));
      return;
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
      add("not_regular", rel, "not a regular file");
      return;
    }
    const auto actual = static_cast<std::uint64_t>(st.st_size);
    if (actual > kMaxFileBytes) {
      add("size_limit", rel,
          "the file is " + std::to_string(actual) + " bytes, larger than any trace could be");
      return;
    }
    if (actual != f.size) {
      add("size_mismatch", rel,
          "declared size " + std::to_string(f.size) + " bytes, actual " + std::to_string(actual) +
              " bytes");
      return;
    }
#ifdef POSIX_FADV_SEQUENTIAL
    ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    Sha256 hash;
    std::vector<char> buf(kHashChunk);
    std::uint64_t total = 0;
    for (;;) {
      const ssize_t n = ::read(fd.get(), buf.data(), buf.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        add("unreadable", rel, "read error: " + errno_text(errno));
        return;
      }
      if (n == 0) break;
      total += static_cast<std::uint64_t>(n);
      if (total > f.size) break;
      hash.update(std::string_view(buf.data(), static_cast<std::size_t>(n)));
    }
    r_.bytes_hashed += std::min(total, f.size);
    if (total != f.size) {
      add("size_mismatch", rel, "the file changed size while being read");
      return;
    }
    const std::string digest = hash.hex_digest();
    if (digest != f.sha256)
      add("hash_mismatch", rel, "SHA-256 " + digest + " differs from the declared " + f.sha256);
  }

  // The manifest's run id must be the one of the (verified) trace's meta line, its first line.
  void check_run_id() {
    const std::string name(kTraceName);
    Fd fd(open_regular(dirfd_.get(), name.c_str()));
    if (!fd.ok()) {
      add("unreadable", name, "cannot open: " + errno_text(errno));
      return;
    }
    // The first non-blank line (the reader requires the meta there), within the first MiB.
    std::string head;
    char buf[65536];
    std::size_t start = std::string::npos, end = std::string::npos;
    while (head.size() < (std::size_t{1} << 20)) {
      const ssize_t n = ::read(fd.get(), buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      head.append(buf, static_cast<std::size_t>(n));
      start = head.find_first_not_of(" \t\r\n\f\v");
      if (start != std::string::npos && (end = head.find('\n', start)) != std::string::npos) break;
    }
    if (start == std::string::npos) start = head.size();
    head = head.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (head.size() >= 3 && head.compare(0, 3, "\xEF\xBB\xBF") == 0) head.erase(0, 3);
    try {
      Arena arena;
      const TraceEvent e = parse_event_line(head, arena, name, 1);
      if (const auto* meta = std::get_if<MetaEvent>(&e)) {
        if (meta->run.run_id != r_.manifest->run_id)
          add("run_id_mismatch", std::string(kManifestName),
              "run_id \"" + r_.manifest->run_id + "\" is not the trace's \"" +
                  std::string(meta->run.run_id) + "\"");
        return;
      }
    } catch (const Error&) {
    }
    add("semantic_error", name, "the first record is not the trace's meta event");
  }

  // Compares streamed pieces with the bytes of an open file; remembers the first difference.
  class StreamComparer {
   public:
    explicit StreamComparer(int fd) : fd_(fd) {}
    void feed(std::string_view piece) {
      while (!piece.empty() && !differs_) {
        if (pos_ == have_) {
          const ssize_t n = ::read(fd_, buf_.data(), buf_.size());
          if (n < 0 && errno == EINTR) continue;
          if (n <= 0) {  // the file ended before the rebuilt text
            differs_ = true;
            return;
          }
          have_ = static_cast<std::size_t>(n);
          pos_ = 0;
        }
        const std::size_t k = std::min(piece.size(), have_ - pos_);
        const char* mine = buf_.data() + pos_;
        if (std::memcmp(piece.data(), mine, k) != 0) {
          offset_ += static_cast<std::size_t>(
              std::mismatch(piece.data(), piece.data() + k, mine).first - piece.data());
          differs_ = true;
          return;
        }
        offset_ += k;
        pos_ += k;
        piece.remove_prefix(k);
      }
    }
    // True when the whole file matched the whole text.
    bool finish() {
      if (differs_) return false;
      if (pos_ < have_) return differs_ = true, false;
      char c;
      for (;;) {
        const ssize_t n = ::read(fd_, &c, 1);
        if (n < 0 && errno == EINTR) continue;
        if (n != 0) differs_ = true;
        return !differs_;
      }
    }
    std::uint64_t offset() const { return offset_; }
    // The 1-based line of the first difference. Counted in the file, whose bytes before it equal
    // the text's, and only once a difference was found: matching text costs a memcmp alone.
    std::uint64_t line() const {
      std::uint64_t lines = 0, at = 0;
      std::vector<char> buf(kHashChunk);
      while (at < offset_) {
        const ssize_t n =
            ::pread(fd_, buf.data(), std::min<std::uint64_t>(buf.size(), offset_ - at),
                    static_cast<off_t>(at));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        lines += static_cast<std::uint64_t>(std::count(buf.data(), buf.data() + n, '\n'));
        at += static_cast<std::uint64_t>(n);
      }
      return lines + 1;
    }

   private:
    int fd_;
    std::vector<char> buf_ = std::vector<char>(kHashChunk);
    std::size_t have_ = 0, pos_ = 0;
    std::uint64_t offset_ = 0;
    bool differs_ = false;
  };

  void mismatch(const std::string& rel, const StreamComparer& c, const char* what) {
    add("semantic_mismatch", rel,
        std::string("differs from the ") + what + " rebuilt from the retained inputs at byte " +
            std::to_string(c.offset()) + " (line " + std::to_string(c.line()) + ")");
  }

  // The semantic check on a copy of this Verifier's manifest and bundle directory, set up here
  // and run by whoever calls the task.
  std::function<std::vector<Finding>()> rebuild_task() {
    auto rebuild = std::make_shared<Verifier>(std::filesystem::path(r_.bundle), options_);
    rebuild->r_.manifest = r_.manifest;
    rebuild->dirfd_.reset(::fcntl(dirfd_.get(), F_DUPFD_CLOEXEC, 0));
    return [rebuild] {
      if (!rebuild->dirfd_.ok())
        rebuild->add("unreadable", "", "cannot open the bundle directory: " + errno_text(errno));
      else
        rebuild->semantic_check();
      return std::move(rebuild->r_.findings);
    };
  }

  void semantic_check() {
    const BundleManifest& m = *r_.manifest;
    std::optional<TraceDocument> doc, baseline;
    auto parse = [&](std::string_view name) -> std::optional<TraceDocument> {
      const std::string n(name);
      Fd fd(open_regular(dirfd_.get(), n.c_str()));
      if (!fd.ok()) {
        add("unreadable", n, "cannot open: " + errno_text(errno));
        return std::nullopt;
      }
      // The hashing beside the rebuild has not yet classified the file: reopening a FIFO
      // through /proc would wait for a writer.
      struct stat st {};
      if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        add("not_regular", n, "not a regular file");
        return std::nullopt;
      }
      try {
        // The descriptor's /proc link reopens exactly the inode opened here, never a path.
        ReadOptions read;
        read.threads = options_.threads;
        return parse_trace(proc_path(fd.get()), read);
      } catch (const Error& e) {
        add("semantic_error", n,
            (e.line() ? "line " + std::to_string(e.line()) + ": " : std::string()) + e.message());
        return std::nullopt;
      }
    };
    doc = parse(kTraceName);
    if (m.baseline) baseline = parse(kBaselineName);
    if (!doc || (m.baseline && !baseline)) return;
    Fd nsight;
    std::optional<std::filesystem::path> nsight_dir;
    if (m.nsight_dir) {
      nsight.reset(::openat(dirfd_.get(), std::string(kNsightDirName).c_str(),
                            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!nsight.ok()) {
        add("missing", std::string(kNsightDirName),
            "the manifest names an Nsight directory the bundle lacks");
        return;
      }
      nsight_dir = proc_path(nsight.get());
    }
    std::optional<evidence::EvidencePacket> packet;
    GraphOptions analyses;
    analyses.threads = options_.threads;
    try {
      packet.emplace(evidence::build_packet(*doc, baseline ? &*baseline : nullptr, nsight_dir,
                                            std::string(kNsightDirName), analyses));
    } catch (const Error& e) {
      add("semantic_error", std::string(kTraceName), e.message());
      return;
    }
    compare_file(kEvidenceName, "evidence", [&](const output::JsonStream::Sink& sink) {
      output::JsonStream w(sink);
      w.set_format_threads(options_.threads);
      evidence::write_evidence_packet(w, *packet);
      w.finish();
    });
    compare_file(kReportName, "Markdown report", [&](const output::JsonStream::Sink& sink) {
      sink(evidence::render_report(*packet));
    });
    // viewer.html is not rebuilt: projecting and rendering the viewer costs as much again as
    // the evidence (docs/performance.md, Evidence bundles); its hash covers it.
  }

  template <typename Produce>
  void compare_file(std::string_view name, const char* what, Produce produce) {
    const std::string n(name);
    Fd fd(open_regular(dirfd_.get(), n.c_str()));
    if (!fd.ok()) {
      add("unreadable", n, "cannot open: " + errno_text(errno));
      return;
    }
    StreamComparer c(fd.get());
    produce([&](std::string_view piece) { c.feed(piece); });
    if (!c.finish()) mismatch(n, c, what);
  }

  VerifyOptions options_;
  VerificationResult r_;
  Fd dirfd_;
  std::map<std::string, const ManifestFile*> declared_;
  std::set<std::string> seen_;
};

}  // namespace

VerificationResult verify_bundle(const std::filesystem::path& dir, const VerifyOptions& options) {
  Verifier v(dir, options);
  return v.run(dir);
}

std::string verification_to_json(const VerificationResult& r) {
  output::JsonStream w;
  auto string_or_null = [&](const std::string* s) {
    if (s)
      w.string(*s);
    else
      w.null();
  };
  w.begin_object();
  w.schema_key("schema").string(kVerificationSchema);
  w.schema_key("bundle").string(r.bundle);
  w.schema_key("verified").boolean(r.verified);
  w.schema_key("semantic").boolean(r.semantic);
  w.schema_key("run_id");
  string_or_null(r.manifest ? &r.manifest->run_id : nullptr);
  w.schema_key("tool_version");
  string_or_null(r.manifest ? &r.manifest->tool_version : nullptr);
  w.schema_key("manifest_sha256");
  string_or_null(r.manifest_sha256 ? &*r.manifest_sha256 : nullptr);
  w.schema_key("files_checked").u64(r.files_checked);
  w.schema_key("bytes_hashed").u64(r.bytes_hashed);
  w.schema_key("findings").begin_array();
  for (const auto& f : r.findings) {
    w.begin_object();
    w.schema_key("code").string(f.code);
    w.schema_key("path").string(f.path);
    w.schema_key("message").string(f.message);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  w.finish();  // the trailing newline
  return w.take();
}

std::string summarize_findings(const std::vector<Finding>& findings, std::size_t max) {
  std::string out;
  for (std::size_t i = 0; i < findings.size() && i < max; ++i) {
    if (!out.empty()) out += "; ";
    const auto& f = findings[i];
    out += (f.path.empty() ? std::string("(bundle)") : f.path) + ": " + f.code + " (" + f.message +
           ")";
  }
  if (findings.size() > max) out += "; and " + std::to_string(findings.size() - max) + " more";
  return out;
}

}  // namespace candle_graph::bundle
