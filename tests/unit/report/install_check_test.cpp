// `dtrain doctor`'s installation checks on a login node: the CLI and libdtrain where compute nodes
// see them, the MPI launcher of the MPI libdtrain was built with, a Python that imports the module
// and the torch backend.
#include "report/install_check.hpp"

#include <gtest/gtest.h>

namespace dtrain::report {
namespace {

InstallFacts good() {
  InstallFacts f;
  f.cli_path = "/home/ada/dtrain/bin/dtrain";
  f.cli_on_path = f.cli_path;
  f.libdtrain_path = "/home/ada/dtrain/lib/libdtrain.so.0.9.0";
  f.built_mpi_family = "mpich";
  f.launcher = "/usr/bin/mpiexec.mpich";
  f.launcher_version = "HYDRA build details:";
  f.python = InstallFacts::PythonProbe{"/soft/conda/bin/python3",
                                       InstallFacts::PythonProbe::Outcome::kImports,
                                       "/home/ada/dtrain/python/dtrain/__init__.py"};
  return f;
}

std::vector<std::string> failures(const InstallFacts& f) {
  std::vector<std::string> out;
  for (const auto& c : install_checks(f)) {
    if (!c.ok) out.push_back(c.text);
  }
  return out;
}

TEST(InstallChecks, AGoodInstallationPassesEveryCheckAndSaysWhatItFound) {
  const auto checks = install_checks(good());
  for (const auto& c : checks) EXPECT_TRUE(c.ok) << c.text;
  ASSERT_EQ(checks.size(), 4u);
  EXPECT_EQ(checks[0].text,
            "the dtrain CLI (the job scripts call it by this path): /home/ada/dtrain/bin/dtrain");
  EXPECT_EQ(checks[1].text, "libdtrain: /home/ada/dtrain/lib/libdtrain.so.0.9.0");
  EXPECT_EQ(checks[2].text,
            "MPI launcher /usr/bin/mpiexec.mpich: MPICH (Hydra, Cray MPICH, Intel MPI), the MPI "
            "libdtrain was built against");
  EXPECT_EQ(checks[3].text,
            "/soft/conda/bin/python3 imports dtrain and dtrain.torch "
            "(/home/ada/dtrain/python/dtrain/__init__.py)");
}

TEST(InstallChecks, ACliOrLibraryOnANodeLocalFileSystemIsNamed) {
  auto f = good();
  f.cli_path = "/tmp/build/bin/dtrain";
  f.cli_on_path = "";
  f.libdtrain_path = "/local/scratch/lib/libdtrain.so.0";
  const auto bad = failures(f);
  ASSERT_EQ(bad.size(), 2u);
  EXPECT_EQ(bad[0],
            "the dtrain CLI (the job scripts call it by this path) is /tmp/build/bin/dtrain, on a "
            "file system local to this node: the compute nodes do not see it; install dtrain "
            "under a shared file system (your home or project directory) and render the job with "
            "that dtrain");
  EXPECT_NE(bad[1].find("libdtrain is /local/scratch/lib/libdtrain.so.0, on a file system local"),
            std::string::npos);
}

TEST(InstallChecks, AnotherDtrainFirstOnPathIsNamed) {
  auto f = good();
  f.cli_on_path = "/usr/bin/dtrain";
  const auto bad = failures(f);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0],
            "the dtrain on PATH is /usr/bin/dtrain, not this one (/home/ada/dtrain/bin/dtrain): "
            "`dtrain submit` would render scripts calling the other; put one of them first on "
            "PATH (module load, or PATH in ~/.bashrc)");
}

TEST(InstallChecks, ALauncherOfAnotherMpiIsNamedWithWhatHappensThen) {
  auto f = good();
  f.launcher = "/usr/bin/mpiexec";
  f.launcher_version = "mpiexec (OpenRTE) 4.1.4";
  const auto bad = failures(f);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0],
            "MPI launcher /usr/bin/mpiexec is Open MPI's, but libdtrain was built against MPICH "
            "(Hydra, Cray MPICH, Intel MPI): each rank would start alone, as rank 0 of 1; load the "
            "MPI libdtrain was built with, or rebuild dtrain against this one");
}

TEST(InstallChecks, ALauncherThatNamesNoKnownMpiIsNotCompared) {
  auto f = good();
  f.launcher_version = "PALS mpiexec 1.3.2";
  EXPECT_TRUE(failures(f).empty());
  EXPECT_EQ(launcher_mpi_family("mpirun (Open MPI) 4.1.4"), "openmpi");
  EXPECT_EQ(launcher_mpi_family("HYDRA build details:"), "mpich");
  EXPECT_EQ(launcher_mpi_family("Intel(R) MPI Library for Linux* OS, Version 2021.10"), "mpich");
  EXPECT_EQ(launcher_mpi_family("not found"), "");
}

TEST(InstallChecks, APythonThatCannotImportTheBackendIsNamedWithTheRemedy) {
  auto f = good();
  f.python->outcome = InstallFacts::PythonProbe::Outcome::kFails;
  f.python->line = "ImportError: libdtrain.so.0: cannot open shared object file";
  const auto bad = failures(f);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0],
            "/soft/conda/bin/python3 cannot import dtrain or dtrain.torch: ImportError: "
            "libdtrain.so.0: cannot open shared object file (a build for another Python or torch, "
            "or a libdtrain it cannot load: docs/install.md)");
}

TEST(InstallChecks, APythonWithoutTheModuleOrTorchOrNoPythonIsNoFailure) {
  auto f = good();
  f.python->outcome = InstallFacts::PythonProbe::Outcome::kNoModule;
  EXPECT_TRUE(failures(f).empty());
  EXPECT_EQ(install_checks(f).back().text,
            "/soft/conda/bin/python3 has no module dtrain (for Python codes only: "
            "PYTHONPATH=<build>/python, or `python3 -m pip install .` into it)");
  f.python->outcome = InstallFacts::PythonProbe::Outcome::kNoTorch;
  EXPECT_TRUE(failures(f).empty());
  f.python.reset();
  f.launcher.clear();
  EXPECT_TRUE(failures(f).empty());
  EXPECT_TRUE(node_local_path("/dev/shm/x"));
  EXPECT_FALSE(node_local_path("/home/ada/tmp/dtrain"));
  EXPECT_FALSE(node_local_path("/lus/eagle/projects/x/bin/dtrain"));
}

}  // namespace
}  // namespace dtrain::report
