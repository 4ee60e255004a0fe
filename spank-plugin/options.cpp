#include "options.hpp"

#include "affinity/policy.hpp"
#include "common/words.hpp"
#include "errors.hpp"
#include "launch/framework_env.hpp"
#include "records/rank_files.hpp"
#include "step_policy.hpp"

namespace dtrain::spank {

namespace {

// "a|b|c": an option's words as `srun --help` shows them, from the library that parses them.
template <typename Word>
std::string usage_words(const std::vector<Word>& words) {
  return join_alternatives(words, "|", "|");
}

}  // namespace

const std::vector<OptionSpec>& option_specs() {
  // The argument words are spelled out in arginfo so that `srun --help` shows them; the specs keep
  // views of them, so they live as long.
  static const std::string gpu = usage_words(affinity::gpu_policy_names());
  static const std::string visibility = usage_words(affinity::gpu_visibility_names());
  static const std::string cpu = usage_words(affinity::cpu_policy_names());
  static const std::string nic = usage_words(affinity::nic_policy_names());
  static const std::string framework = usage_words(launch::framework_names());
  static const std::string run_dir_usage = "[dtrain] Also log each task's output to DIR/" +
                                           records::rank_file_pattern(records::kLogExtension) +
                                           "; exports DTRAIN_RUN_DIR";
  static const std::vector<OptionSpec> specs = {
      {OptionId::kDtrain, "dtrain", "POLICY",
       "[dtrain] Bind each task to its GPUs, cores and NICs (POLICY: closest, identity, "
       "own-first, off, default; add ,best-effort to run unbound tasks instead of failing)",
       ArgKind::kOptional, "DTRAIN_BIND"},
      {OptionId::kGpu, "dtrain-gpu", gpu,
       "[dtrain] GPUs per task: in CPU-locality order, local rank r -> GPU r, or untouched",
       ArgKind::kRequired, "DTRAIN_GPU"},
      {OptionId::kGpuVisibility, "dtrain-gpu-visibility", visibility,
       "[dtrain] CUDA_VISIBLE_DEVICES: the task's own GPUs, or all with its own first",
       ArgKind::kRequired, "DTRAIN_GPU_VISIBILITY"},
      {OptionId::kCpu, "dtrain-cpu", cpu,
       "[dtrain] Cores per task: an even share of its GPU's NUMA domain, or no CPU binding",
       ArgKind::kRequired, "DTRAIN_CPU"},
      {OptionId::kNic, "dtrain-nic", nic,
       "[dtrain] NICs per task (NCCL_IB_HCA, UCX_NET_DEVICES, NCCL_SOCKET_IFNAME)",
       ArgKind::kRequired, "DTRAIN_NIC"},
      {OptionId::kFramework, "dtrain-framework", framework,
       "[dtrain] Export this framework's rendezvous variables to each task", ArgKind::kRequired,
       "DTRAIN_FRAMEWORK"},
      {OptionId::kRunDir, "dtrain-run-dir", "DIR", run_dir_usage, ArgKind::kRequired,
       "DTRAIN_LOG_DIR"},
      {OptionId::kVerbose, "dtrain-verbose", "",
       "[dtrain] Print each task's GPUs, cores and NICs on its stderr", ArgKind::kNone,
       "DTRAIN_VERBOSE"},
  };
  return specs;
}

const OptionSpec& option_spec(OptionId id) {
  for (const auto& s : option_specs()) {
    if (s.id == id) return s;
  }
  throw std::logic_error("dtrain: spank: no option with id " +
                         std::to_string(static_cast<int>(id)));
}

bool RequestedOptions::any_setting() const {
  return gpu || gpu_visibility || cpu || nic || framework || run_dir || verbose;
}

void validate_option_value(OptionId id, std::string_view value, std::string_view what) {
  // The affinity parsers' messages already name `what`, the value and the accepted words.
  switch (id) {
    case OptionId::kDtrain:
      (void)parse_step_policy(value, what, StepPolicy{});
      return;
    case OptionId::kGpu:
      (void)affinity::parse_gpu_policy(value, what);
      return;
    case OptionId::kGpuVisibility:
      (void)affinity::parse_gpu_visibility(value, what);
      return;
    case OptionId::kCpu:
      (void)affinity::parse_cpu_policy(value, what);
      return;
    case OptionId::kNic:
      (void)affinity::parse_nic_policy(value, what);
      return;
    case OptionId::kFramework:
      (void)launch::parse_framework(value, what);
      return;
    case OptionId::kRunDir:
      if (value.empty()) {
        throw OptionError("dtrain: " + std::string(what) +
                          ": expected a directory for the rank logs, got \"\"");
      }
      return;
    case OptionId::kVerbose:
      return;
  }
}

void record_option(RequestedOptions& options, OptionId id, const char* value) {
  const OptionSpec& spec = option_spec(id);
  const std::string what = "--" + std::string(spec.name);
  if (spec.arg == ArgKind::kNone) {
    options.verbose = true;
    return;
  }
  // A bare --dtrain given to sbatch reaches the srun steps inside the job through the variable
  // SLURM_SPANK__SLURM_SPANK_OPTION_dtrain_dtrain, which Slurm fills with printf's "(null)"; a
  // bare srun --dtrain reaches slurmstepd as "" (seen in slurmd.log with 22.05).
  const bool no_value = value == nullptr || *value == '\0' || std::string_view(value) == "(null)";
  if (no_value && spec.arg == ArgKind::kOptional) {
    options.dtrain = "";
    return;
  }
  const std::string_view text = value == nullptr ? std::string_view() : std::string_view(value);
  try {
    validate_option_value(id, text, what);
  } catch (const OptionError&) {
    throw;
  } catch (const std::exception& e) {
    // The affinity parsers throw their own error types; the plugin reports them all alike.
    throw OptionError(e.what());
  }
  std::optional<std::string>* slot = nullptr;
  switch (id) {
    case OptionId::kDtrain:
      slot = &options.dtrain;
      break;
    case OptionId::kGpu:
      slot = &options.gpu;
      break;
    case OptionId::kGpuVisibility:
      slot = &options.gpu_visibility;
      break;
    case OptionId::kCpu:
      slot = &options.cpu;
      break;
    case OptionId::kNic:
      slot = &options.nic;
      break;
    case OptionId::kFramework:
      slot = &options.framework;
      break;
    case OptionId::kRunDir:
      slot = &options.run_dir;
      break;
    case OptionId::kVerbose:
      return;
  }
  *slot = std::string(text);
}

}  // namespace dtrain::spank
