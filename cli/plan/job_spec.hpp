// The job spec: the scheduler-neutral description of a training job that `dtrain submit` and
// `dtrain plan` read from YAML (every field: docs/spec.md). Parsing is pure (text in, value out)
// and strict: unknown fields, wrong types and out-of-range values are all collected and thrown
// together as one SpecError.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// dtrain::kExitRequeue: the status with which a checkpointed job asks to be requeued
// (`checkpoint.requeue`), defined once by the runtime that the training code calls.
#include <dtrain/preemption.hpp>

#include "affinity/policy.hpp"
#include "common/run_settings.hpp"
#include "launch/framework_env.hpp"

namespace dtrain::plan {

struct CheckpointSpec {
  bool enabled = false;         // true when the spec has a checkpoint: section
  std::string signal = "USR1";  // sent by the scheduler before the end, without "SIG"
  int grace_seconds = 120;      // how long before the end the signal comes
  bool requeue = false;         // the job asks to be requeued after saving
};

struct JobSpec {
  std::string name;
  std::string site = "local";  // a built-in site name or a path to a site profile
  int nodes = 1;               // with an elastic range MIN..MAX: MAX, the nodes the job asks for
  int min_nodes = 0;           // the elastic range's MIN; 0 when `nodes` is a plain count
  std::optional<int> ranks_per_node;  // unset: the site's GPUs per node, or 1
  std::optional<int> gpus_per_rank;
  std::optional<int> cpus_per_rank;
  std::optional<long> walltime_seconds;
  std::string account;
  std::string queue;
  std::string partition;
  std::vector<std::string> filesystems;
  std::vector<std::string> modules;
  std::vector<std::string> setup;  // shell lines run before launch, verbatim (they are code)
  std::vector<std::pair<std::string, std::string>> env;  // in file order
  bool site_env = true;  // false: drop the site profile's recommended environment
  // Which rendezvous environment `dtrain bind` exports to each rank, and the affinity solver's
  // policies (docs/affinity.md): the words and their parsers are runtime/affinity's.
  launch::Framework framework = launch::Framework::kNone;
  affinity::Policy affinity;
  std::vector<std::string> command;  // words, each passed verbatim
  bool command_is_shell = false;     // command was a string: one line run by `bash -c`
  std::string run_dir;               // empty: runs/<name>-<job id> under the submit directory
  CheckpointSpec checkpoint;
  // Attempts after the first when the job fails (docs/fault-tolerance.md); > 0 makes the script
  // run its launch under `dtrain supervise`.
  int restarts = 0;
  int restart_backoff_seconds = 10;  // the pause between a failed attempt and the next
  // records:, hang_after:, on_hang: (common/run_settings.hpp); unset: the variable is not
  // exported, so the ranks' defaults (or the site's `env`) hold, as before these fields.
  std::optional<RecordDetail> records;
  std::optional<HangAfter> hang_after;
  std::optional<OnHang> on_hang;
  std::vector<std::string> directives;  // extra scheduler directives, verbatim
  std::string image;                    // container image (site k8s); empty: none
  std::string k8s_namespace;  // Kubernetes namespace (site k8s); empty: kubectl's current one

  int ranks_per_node_or(int fallback) const { return ranks_per_node.value_or(fallback); }
};

// Largest spec accepted; a job spec is a few hundred bytes, so anything near this is a mistake
// (a data file passed by accident) and is refused before the YAML parser sees it.
inline constexpr std::size_t kMaxSpecBytes = 1 << 20;
inline constexpr int kMaxRanksPerNode = 1024;
inline constexpr int kMaxNodes = 100000;
inline constexpr int kMaxRestarts = 1000;
inline constexpr int kMaxRestartBackoff = 3600;

// The built-in sites; any other site must be a path to a profile (.yaml).
const std::vector<std::string>& builtin_sites();

// Fields given on the command line: `--set KEY=VALUE` in order (VALUE is YAML, `--set
// command='[a, b]'`; KEY may be a dotted path, `affinity.gpu=identity`), then `--site NAME`
// (a plain string; "" for none). A bad KEY or VALUE that is not YAML throws UsageError naming the
// argument.
// A field set by a command's own flag (`dtrain run --name NAME`): its value is a plain string,
// never YAML, and a problem with it names the flag ("--name a b: name: expected ...").
struct FlagField {
  std::string key;
  std::string value;
  std::string flag;
};
struct SpecOverrides {
  std::vector<std::string> set;
  std::string site;
  std::vector<FlagField> flags;  // applied after `set`, before `site`
};

// `overrides` are applied to the parsed file, so a value given on the command line is validated
// exactly like one written in the file; problems in the file name its lines, problems in an
// override name the argument (`--set ranks_per_node=lots: ranks_per_node: expected ...`).
JobSpec parse_job_spec(std::string_view text, const std::string& source_name,
                       const SpecOverrides& overrides = {});

// Only `fields` of a spec, each read and checked as parse_job_spec reads it, none required and
// the others not read: what `dtrain stats` and `report` take from a run directory's job.yaml,
// which a person may have written by hand with a few fields. Throws SpecError naming the file,
// line and field of a bad value; an empty document holds no field.
JobSpec parse_spec_fields(std::string_view text, const std::string& source_name,
                          const std::vector<std::string_view>& fields);

// The spec with `overrides` applied, as YAML text: the record of what ran (the run directory's
// job.yaml). Parse the user's text with parse_job_spec(text, name, overrides), not this, so that
// errors point into the user's file.
std::string apply_overrides(std::string_view text, const std::string& source_name,
                            const SpecOverrides& overrides);

// The known field names, in documentation order (the reader table's: spec_fields.hpp).
const std::vector<std::string>& job_spec_fields();

// "1-02:03:04", "02:03:04", "03:04" (MM:SS) or "90" (minutes) -> seconds; nullopt if malformed.
std::optional<long> parse_walltime(std::string_view text);

// The closest candidate within a small edit distance, or "" when none is close.
std::string closest_match(std::string_view given, const std::vector<std::string>& candidates);

// A variable dtrain sets for every rank itself (DTRAIN_RUN_DIR, DTRAIN_RANK, ...); a spec's or a
// profile's `env` may not set one.
bool is_dtrain_variable(std::string_view name);

// Why the job script's bash cannot pass `name` on ("" when it can): bash's read-only variables
// (EUID, UID, PPID, BASHOPTS, SHELLOPTS, BASH_VERSINFO: `export EUID=1` stops the script) and the
// ones whose value bash computes itself, so an assignment is ignored (RANDOM, SECONDS, GROUPS,
// FUNCNAME, BASHPID, ...). Checked against bash 5.2's `readonly -p` and its manual.
std::string_view bash_reserved_variable(std::string_view name);

}  // namespace dtrain::plan
