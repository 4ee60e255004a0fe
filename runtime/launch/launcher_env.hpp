// Who am I? A process started by mpirun, srun, mpiexec (Hydra/PALS) or a PMIx launcher learns its
// rank and its place on the node from variables that each launcher spells differently. This turns
// them into one value, parsed strictly: a malformed value is an error, never a silent 0. The job's
// host list, as Slurm and the job scripts write it, is read here too.
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/errors.hpp"

namespace dtrain::launch {

using Environment = std::map<std::string, std::string, std::less<>>;

struct LauncherInfo {
  std::string launcher;  // "openmpi", "pals", "pmi", "slurm"
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
  // True when the launcher told this process its place on the node (a local rank variable, and a
  // local size or Slurm's tasks-per-node). False means local_rank/local_size are guesses (0, and
  // the world size) that only hold on one node: per-node decisions such as binding must refuse
  // them.
  bool local_known = false;
};

// A launcher's variables are present but malformed or inconsistent: bad input (the environment).
class LauncherEnvError : public InputError {
 public:
  using InputError::InputError;
};

// Names of the variables consulted, in the order they are tried, for error messages and docs.
const std::vector<std::string>& launcher_variables();
// The local-rank variable of each launcher, same order ("OMPI_COMM_WORLD_LOCAL_RANK", ...).
const std::vector<std::string>& local_rank_variables();

// A launcher variable's count (a rank, a size, a node id): decimal digits only, no sign or space
// (common/number_text.hpp), from `min` to INT_MAX. Throws LauncherEnvError naming the variable:
// "dtrain: launcher environment: SLURM_NODEID: expected an integer >= 0, got \" 1\"".
int parse_launcher_count(std::string_view name, std::string_view value, int min);

// Returns nullopt when no launcher variables are present (a bare process); throws
// LauncherEnvError when a launcher's variables are present but malformed or inconsistent.
std::optional<LauncherInfo> detect_launcher(const Environment& env);

// Expands a Slurm-style host list ("nid[001-003,007],login1") into host names in order. Throws
// LauncherEnvError naming `what` on malformed input.
std::vector<std::string> expand_hostlist(std::string_view text, std::string_view what);

// The process environment as a value, for the adapters that feed the pure functions above.
Environment current_environment();

// This machine's host name (gethostname), "localhost" if it has none.
std::string this_hostname();

}  // namespace dtrain::launch
