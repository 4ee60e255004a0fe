#include "report/install_check.hpp"

#include <array>
#include <string_view>

namespace dtrain::report {
namespace {

bool contains(std::string_view text, std::string_view word) {
  return text.find(word) != std::string_view::npos;
}

std::string family_title(const std::string& family) {
  if (family == "openmpi") return "Open MPI";
  if (family == "mpich") return "MPICH (Hydra, Cray MPICH, Intel MPI)";
  return family;
}

InstallCheck where_it_runs(const std::string& what, const std::string& path) {
  if (path.empty()) return {true, what + ": location unknown, not checked"};
  if (node_local_path(path)) {
    return {false, what + " is " + path +
                       ", on a file system local to this node: the compute nodes do not see it; "
                       "install dtrain under a shared file system (your home or project "
                       "directory) and render the job with that dtrain"};
  }
  return {true, what + ": " + path};
}

}  // namespace

std::string launcher_mpi_family(const std::string& version_line) {
  if (contains(version_line, "Open MPI") || contains(version_line, "OpenRTE")) return "openmpi";
  if (contains(version_line, "HYDRA") || contains(version_line, "MPICH") ||
      contains(version_line, "Intel(R) MPI")) {
    return "mpich";
  }
  return "";
}

bool node_local_path(const std::string& path) {
  static constexpr std::array<std::string_view, 6> kLocal = {
      "/tmp/", "/var/tmp/", "/dev/shm/", "/run/", "/local/", "/scratch/local/"};
  for (const auto prefix : kLocal) {
    if (path.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

std::vector<InstallCheck> install_checks(const InstallFacts& f) {
  std::vector<InstallCheck> out;
  out.push_back(where_it_runs("the dtrain CLI (the job scripts call it by this path)", f.cli_path));
  if (f.cli_on_path.empty()) {
    out.push_back({true, "no dtrain on PATH: scripts rendered by " + f.cli_path +
                             " call it by its path, which is enough"});
  } else if (f.cli_on_path != f.cli_path) {
    out.push_back({false, "the dtrain on PATH is " + f.cli_on_path + ", not this one (" +
                              f.cli_path +
                              "): `dtrain submit` would render scripts calling the other; put one "
                              "of them first on PATH (module load, or PATH in ~/.bashrc)"});
  }
  out.push_back(where_it_runs("libdtrain", f.libdtrain_path));
  if (f.launcher.empty()) {
    out.push_back({true,
                   "no mpiexec or mpirun on PATH: the MPI launcher is not compared with "
                   "libdtrain's " +
                       family_title(f.built_mpi_family) + " (load the MPI module first)"});
  } else {
    const std::string family = launcher_mpi_family(f.launcher_version);
    if (family.empty() || f.built_mpi_family == "other") {
      out.push_back(
          {true, "MPI launcher " + f.launcher + " (\"" + f.launcher_version +
                     "\"): its MPI is not known to dtrain, not compared with libdtrain's " +
                     family_title(f.built_mpi_family)});
    } else if (family != f.built_mpi_family) {
      out.push_back({false, "MPI launcher " + f.launcher + " is " + family_title(family) +
                                "'s, but libdtrain was built against " +
                                family_title(f.built_mpi_family) +
                                ": each rank would start alone, as rank 0 of 1; load the MPI "
                                "libdtrain was built with, or rebuild dtrain against this one"});
    } else {
      out.push_back({true, "MPI launcher " + f.launcher + ": " + family_title(family) +
                               ", the MPI libdtrain was built against"});
    }
  }
  using Outcome = InstallFacts::PythonProbe::Outcome;
  if (!f.python) {
    out.push_back({true, "no python3 on PATH: the Python module is not checked"});
  } else if (f.python->outcome == Outcome::kImports) {
    out.push_back(
        {true, f.python->python + " imports dtrain and dtrain.torch (" + f.python->line + ")"});
  } else if (f.python->outcome == Outcome::kNoModule) {
    out.push_back({true, f.python->python +
                             " has no module dtrain (for Python codes only: "
                             "PYTHONPATH=<build>/python, or `python3 -m pip install .` into it)"});
  } else if (f.python->outcome == Outcome::kNoTorch) {
    out.push_back({true, f.python->python +
                             " imports dtrain; it has no torch, so dtrain.torch is not checked "
                             "(activate the conda environment of your training first)"});
  } else {
    out.push_back({false, f.python->python +
                              " cannot import dtrain or dtrain.torch: " + f.python->line +
                              " (a build for another Python or torch, or a libdtrain it cannot "
                              "load: docs/install.md)"});
  }
  return out;
}

}  // namespace dtrain::report
