#include "output_path.hpp"

#include <array>

#include "common/errors.hpp"
#include "records/rank_files.hpp"
#include "records/run_dir_layout.hpp"

namespace dtrain::cli {
namespace {

// What a flag accepts, as messages say it.
std::string expected(const OutputRequest& request) {
  if (request.default_name.empty()) return "expected a regular file or a new path";
  return "expected a regular file, a new path or a directory (for " + request.default_name +
         " in it)";
}

// `dir`/`name`, keeping the user's spelling of `dir`.
std::string in_directory(const std::string& dir, const std::string& name) {
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

// What a refused path is, as "got ..." says it.
std::string refused_kind(const PathFacts& facts) {
  switch (facts.kind) {
    case PathFacts::Kind::kDirectory:
      return "a directory";
    case PathFacts::Kind::kSpecial:
      return facts.special;
    case PathFacts::Kind::kDanglingSymlink:
      return "a symbolic link to nothing (" + facts.link_target + ")";
    case PathFacts::Kind::kSymlinkLoop:
      return "a symbolic link loop (" + facts.error + ")";
    case PathFacts::Kind::kUnreadable:
      return "a path that cannot be looked at (" + facts.error + ")";
    case PathFacts::Kind::kNew:
    case PathFacts::Kind::kRegular:
      break;
  }
  return "a path of no known kind";
}

}  // namespace

OutputTarget choose_output(const OutputRequest& request,
                           const std::function<PathFacts(const std::string&)>& look) {
  const std::string prefix = "dtrain: " + request.command + ": ";
  if (request.given && request.given->empty()) {
    throw UsageError(prefix + request.flag + ": expected a file path, got an empty value" +
                     (request.default_path.empty()
                          ? ""
                          : " (leave " + request.flag + " out for " + request.default_path + ")"));
  }
  OutputTarget target;
  if (request.given && *request.given == "-" && request.standard_output_allowed) {
    target.standard_output = true;
    target.shown = "standard output";
    target.subject = prefix + "standard output";
    return target;
  }
  target.shown = request.given ? *request.given : request.default_path;
  target.subject = prefix + (request.given ? request.flag + " " + *request.given : target.shown);
  PathFacts facts = look(target.shown);
  if (facts.kind == PathFacts::Kind::kDirectory && !request.default_name.empty()) {
    target.shown = in_directory(target.shown, request.default_name);
    target.subject += ": " + target.shown;
    facts = look(target.shown);
  }
  if (facts.kind == PathFacts::Kind::kNew) {
    target.file = target.shown;
    return target;
  }
  if (facts.kind == PathFacts::Kind::kRegular) {
    if (!facts.run_record.empty()) {
      throw UsageError(target.subject +
                       ": expected a path that is none of the run's records, got " +
                       facts.run_record + ", a record of the run directory " + facts.record_of);
    }
    target.file = facts.resolved.empty() ? target.shown : facts.resolved;
    target.replaces_file = true;
    return target;
  }
  std::string got = refused_kind(facts);
  if (facts.kind == PathFacts::Kind::kSpecial && request.standard_output_allowed) {
    got += "; for standard output give " + request.flag + " -";
  }
  throw UsageError(target.subject + ": " + expected(request) + ", got " + got);
}

bool is_run_record_name(std::string_view name) {
  static constexpr std::array kRecords{records::kSpecFile,        records::kScriptFile,
                                       records::kManifestFile,    records::kPlanFile,
                                       records::kExitStatusFile,  records::kAttemptsFile,
                                       records::kCheckpointsFile, records::kJobEndFile};
  for (const auto record : kRecords) {
    if (name == record) return true;
  }
  if (records::parse_rank_file_name(name, records::kLogExtension) ||
      records::parse_rank_file_name(name, records::kMetricsExtension)) {
    return true;
  }
  const auto& out = records::kBatchOutputExtension;
  return name.size() > out.size() && name.substr(name.size() - out.size()) == out;
}

}  // namespace dtrain::cli
