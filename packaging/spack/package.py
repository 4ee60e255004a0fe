# Spack recipe for dtrain. Copy this directory into a Spack repository
# (`spack repo create myrepo && cp -r packaging/spack myrepo/packages/dtrain`) and
# `spack install dtrain +spank ~cuda`.
from spack.package import *


class Dtrain(CMakePackage):
    """Data-parallel deep-learning training from one GPU to many nodes on Slurm and PBS
    clusters: a job-spec CLI (`dtrain submit`), libdtrain (PMIx/MPI bootstrap, collectives,
    checkpoints), and a Slurm SPANK plugin that binds every task to its GPU, cores and NIC."""

    homepage = "https://github.com/dtrain/dtrain"
    git = "https://github.com/dtrain/dtrain.git"

    maintainers("dtrain")
    license("BSD-3-Clause")

    version("main", branch="main")

    variant("cuda", default=False, description="Build the NCCL backend (CUDA and NCCL)")
    variant("spank", default=True, description="Build the Slurm SPANK plugin")

    depends_on("cmake@3.25:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("mpi")
    depends_on("pmix@4:")
    depends_on("hwloc@2:")
    depends_on("yaml-cpp@0.7:")
    depends_on("cli11@2:")
    depends_on("nlohmann-json@3:")
    depends_on("slurm", when="+spank")
    depends_on("cuda", when="+cuda")
    depends_on("nccl", when="+cuda")

    def cmake_args(self):
        return [
            self.define("DTRAIN_BUILD_TESTS", False),
            self.define("DTRAIN_BUILD_BENCH", False),
            self.define_from_variant("DTRAIN_BUILD_SPANK", "spank"),
            self.define_from_variant("DTRAIN_WITH_NCCL", "cuda"),
        ]
