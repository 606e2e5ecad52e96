#include "bundle/bundle_manifest.hpp"

#include <nlohmann/json.hpp>
#include <set>

#include "bundle/sha256.hpp"
#include "candle_graph/trace.hpp"
#include "evidence/evidence_packet.hpp"
#include "output/json_stream.hpp"
#include "viewer/viewer_payload.hpp"

namespace candle_graph::bundle {

std::vector<std::pair<std::string, std::string>> expected_schemas() {
  return {{"trace", std::string(kTraceSchema)},
          {"evidence", std::string(evidence::kEvidenceSchema)},
          {"viewer", std::string(viewer::kViewerSchema)}};
}

std::string manifest_to_json(const BundleManifest& m) {
  output::JsonStream w;
  auto optional = [&](const std::optional<std::string>& s) {
    if (s)
      w.string(*s);
    else
      w.null();
  };
  w.begin_object();
  w.schema_key("schema").string(kBundleSchema);
  w.schema_key("run_id").string(m.run_id);
  w.schema_key("tool_version").string(m.tool_version);
  w.schema_key("schemas").begin_object();
  for (const auto& [role, schema] : m.schemas) w.key(role).string(schema);
  w.end_object();
  w.schema_key("inputs").begin_object();
  w.schema_key("trace").string(kTraceName);
  w.schema_key("baseline");
  optional(m.baseline);
  w.schema_key("nsight_dir");
  optional(m.nsight_dir);
  w.end_object();
  w.schema_key("files").begin_array();
  for (const auto& f : m.files) {
    w.begin_object();
    w.schema_key("path").string(f.path);
    w.schema_key("size").u64(f.size);
    w.schema_key("sha256").string(f.sha256);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  w.finish();  // the trailing newline
  return w.take();
}

std::optional<std::string> path_problem(std::string_view path) {
  if (path.empty()) return "empty path";
  if (path.front() == '/') return "absolute path";
  for (char c : path) {
    if (c == '\\') return "backslash in path";
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return "control character in path";
  }
  std::size_t components = 0;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t slash = path.find('/', start);
    const std::size_t end = slash == std::string_view::npos ? path.size() : slash;
    const std::string_view part = path.substr(start, end - start);
    if (part.empty()) return "empty path component";
    if (part == "..") return "`..` path component";
    if (part == ".") return "`.` path component";
    ++components;
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (components > 2) return "more than two path components (bundles are flat)";
  if (path == kManifestName) return "the manifest cannot list itself";
  return std::nullopt;
}

namespace {

void add(std::vector<Finding>& findings, std::string code, std::string path, std::string message) {
  findings.push_back({std::move(code), std::move(path), std::move(message)});
}

// A required string member, or a finding.
const nlohmann::ordered_json* member(const nlohmann::ordered_json& obj, const char* key,
                                     nlohmann::ordered_json::value_t type,
                                     std::vector<Finding>& findings, const std::string& where) {
  const auto it = obj.find(key);
  const bool ok = it != obj.end() && (it->type() == type ||
                                      (type == nlohmann::ordered_json::value_t::number_unsigned &&
                                       it->is_number_integer() && !it->is_number_float() &&
                                       it->get<std::int64_t>() >= 0));
  if (!ok) {
    add(findings, "manifest_invalid", std::string(kManifestName),
        where + ": missing or mistyped member \"" + key + "\"");
    return nullptr;
  }
  return &*it;
}

std::optional<std::string> optional_string(const nlohmann::ordered_json& obj, const char* key,
                                           std::vector<Finding>& findings, bool& ok) {
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) {
    add(findings, "manifest_invalid", std::string(kManifestName),
        std::string("inputs.") + key + " must be a string or null");
    ok = false;
    return std::nullopt;
  }
  return it->get<std::string>();
}

}  // namespace

std::optional<BundleManifest> parse_manifest(std::string_view text,
                                             std::vector<Finding>& findings) {
  using vt = nlohmann::ordered_json::value_t;
  const std::string manifest(kManifestName);
  // Ordered, so that re-serialising a parsed manifest reproduces the original's key order.
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    add(findings, "manifest_malformed", manifest,
        "not valid JSON at byte " + std::to_string(e.byte) +
            (e.byte >= text.size() ? " (truncated?)" : ""));
    return std::nullopt;
  } catch (const nlohmann::json::exception& e) {
    // A number beyond a double (`1e999`) is an out_of_range error, not a parse_error.
    add(findings, "manifest_malformed", manifest, std::string("not readable JSON: ") + e.what());
    return std::nullopt;
  }
  if (!j.is_object()) {
    add(findings, "manifest_invalid", manifest, "the manifest is not a JSON object");
    return std::nullopt;
  }
  const auto schema = j.find("schema");
  if (schema == j.end() || !schema->is_string() || schema->get<std::string>() != kBundleSchema) {
    add(findings, "manifest_invalid", manifest,
        "schema is not " + std::string(kBundleSchema) + " (unknown or missing)");
    return std::nullopt;
  }
  const std::size_t before = findings.size();
  BundleManifest m;
  if (const auto* v = member(j, "run_id", vt::string, findings, "manifest")) m.run_id = *v;
  if (const auto* v = member(j, "tool_version", vt::string, findings, "manifest"))
    m.tool_version = *v;
  if (const auto* v = member(j, "schemas", vt::object, findings, "manifest")) {
    for (const auto& [role, s] : v->items()) {
      if (!s.is_string()) {
        add(findings, "manifest_invalid", manifest, "schemas." + role + " is not a string");
        continue;
      }
      m.schemas.emplace_back(role, s.get<std::string>());
    }
  }
  if (m.schemas != expected_schemas())
    add(findings, "manifest_invalid", manifest,
        "schemas must be exactly those this tool writes (trace/6, evidence/1, viewer/4)");
  bool inputs_ok = true;
  if (const auto* v = member(j, "inputs", vt::object, findings, "manifest")) {
    const auto trace = v->find("trace");
    if (trace == v->end() || !trace->is_string() || trace->get<std::string>() != kTraceName)
      add(findings, "manifest_invalid", manifest,
          "inputs.trace must be \"" + std::string(kTraceName) + "\"");
    m.baseline = optional_string(*v, "baseline", findings, inputs_ok);
    m.nsight_dir = optional_string(*v, "nsight_dir", findings, inputs_ok);
    if (m.baseline && *m.baseline != kBaselineName)
      add(findings, "manifest_invalid", manifest,
          "inputs.baseline must be \"" + std::string(kBaselineName) + "\" or null");
    if (m.nsight_dir && *m.nsight_dir != kNsightDirName)
      add(findings, "manifest_invalid", manifest,
          "inputs.nsight_dir must be \"" + std::string(kNsightDirName) + "\" or null");
  }
  if (const auto* files = member(j, "files", vt::array, findings, "manifest")) {
    if (files->size() > kMaxFiles) {
      add(findings, "size_limit", manifest,
          "the manifest lists " + std::to_string(files->size()) + " files (limit " +
              std::to_string(kMaxFiles) + ")");
      return std::nullopt;
    }
    std::set<std::string> seen;
    std::size_t index = 0;
    for (const auto& e : *files) {
      const std::string where = "files[" + std::to_string(index++) + "]";
      if (!e.is_object()) {
        add(findings, "manifest_invalid", manifest, where + " is not an object");
        continue;
      }
      const auto* path = member(e, "path", vt::string, findings, where);
      const auto* size = member(e, "size", vt::number_unsigned, findings, where);
      const auto* sha = member(e, "sha256", vt::string, findings, where);
      if (!path || !size || !sha) continue;
      ManifestFile f{path->get<std::string>(), size->get<std::uint64_t>(), sha->get<std::string>()};
      if (auto why = path_problem(f.path)) {
        add(findings, "unsafe_path", f.path, where + ": " + *why);
        continue;
      }
      if (!seen.insert(f.path).second) {
        add(findings, "duplicate_path", f.path, where + ": the path is listed more than once");
        continue;
      }
      if (f.size > kMaxFileBytes) {
        add(findings, "size_limit", f.path,
            where + ": declared size " + std::to_string(f.size) +
                " bytes is larger than any trace could be (limit " + std::to_string(kMaxFileBytes) +
                ")");
        continue;
      }
      if (!is_sha256_hex(f.sha256)) {
        add(findings, "manifest_invalid", f.path,
            where + ": sha256 is not 64 lowercase hex digits");
        continue;
      }
      m.files.push_back(std::move(f));
    }
  }
  if (findings.size() != before) return std::nullopt;
  // Only the form `report --bundle` writes is accepted: an edit that keeps the JSON valid (extra
  // members, reordered keys, other spacing) is tampering all the same.
  if (manifest_to_json(m) != text) {
    add(findings, "manifest_invalid", manifest,
        "not in the canonical form `report --bundle` writes (extra members, other order or "
        "spacing): the manifest was edited");
    return std::nullopt;
  }
  return m;
}

}  // namespace candle_graph::bundle
