// `dtrain doctor`'s installation checks, for a login node before the first job (Polaris: the
// generated script calls the CLI by its absolute path on every compute node — bind, run-rank,
// supervise, note-lost-rank — and the ranks load libdtrain and, for torch codes, dtrain.torch from
// the conda environment). What it checks is what broke first jobs: a CLI or library on a file
// system the compute nodes do not mount, a launcher of another MPI than the one libdtrain was
// built against (each rank comes up alone, as rank 0 of 1), a `dtrain` on PATH other than the one
// rendering the scripts, a Python that cannot import the module or the torch backend. Pure: the
// command gathers the facts (paths, version lines, the probe's output) and hands them here.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dtrain::report {

struct InstallFacts {
  std::string cli_path;          // this CLI (/proc/self/exe)
  std::string cli_on_path;       // the `dtrain` PATH finds; "" when none
  std::string libdtrain_path;    // the libdtrain the CLI loaded; "" when unknown
  std::string built_mpi_family;  // what libdtrain was built with: openmpi, mpich or other
  std::string launcher;          // the launcher PATH finds (mpiexec, else mpirun); "" when none
  std::string launcher_version;  // the first line of its --version; "" when it printed none
  // What python3 on PATH made of `import dtrain`, `import torch`, `import dtrain.torch`: nullopt
  // when PATH has no python3.
  struct PythonProbe {
    enum class Outcome {
      kImports,   // dtrain and dtrain.torch import; `line` is the module's path
      kNoModule,  // no module named dtrain: this Python was not set up for dtrain
      kNoTorch,   // dtrain imports, torch does not: dtrain.torch is not for this Python
      kFails,     // an import failed otherwise; `line` is the exception
    };
    std::string python;  // its path
    Outcome outcome = Outcome::kImports;
    std::string line;
  };
  std::optional<PythonProbe> python;
};

struct InstallCheck {
  bool ok = true;
  std::string text;  // one sentence; for a failed check, what is wrong and what to do
};

// The MPI family a launcher's `--version` line names: "openmpi" (Open MPI's mpirun/mpiexec,
// "mpirun (Open MPI) 4.1.4"), "mpich" (Hydra: "HYDRA build details", MPICH, Intel MPI), or "" when
// it names neither (Cray PALS prints its own banner: not compared).
std::string launcher_mpi_family(const std::string& version_line);

// A path on a file system that is each node's own (/tmp, /var/tmp, /dev/shm, /run, /local...):
// what is installed there on a login node is not on the compute nodes.
bool node_local_path(const std::string& path);

std::vector<InstallCheck> install_checks(const InstallFacts& facts);

}  // namespace dtrain::report
