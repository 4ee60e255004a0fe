# Spack recipe for dtrain. Copy this directory into a Spack repository
# (`spack repo create myrepo && cp -r packaging/spack myrepo/packages/dtrain`) and
# `spack install dtrain +spank ~cuda`; `spack install --test=root dtrain` also runs the unit tests.
from spack.package import *


class Dtrain(CMakePackage, CudaPackage):
    """Data-parallel deep-learning training from one GPU to many nodes on Slurm and PBS
    clusters: a job-spec CLI (`dtrain submit`), libdtrain (PMIx/MPI bootstrap, collectives,
    checkpoints), and a Slurm SPANK plugin that binds every task to its GPU, cores and NIC."""

    homepage = "https://github.com/dtrain/dtrain"
    git = "https://github.com/dtrain/dtrain.git"

    maintainers("dtrain")
    license("BSD-3-Clause")

    version("main", branch="main")
    # dtrain publishes no release tarball: a release is the git tag v<VERSION> of project() in
    # CMakeLists.txt, so there is no archive to take a sha256 of.
    version("0.1.0", tag="v0.1.0")

    # `cuda` and `cuda_arch` come from CudaPackage; +cuda also compiles the NCCL backend.
    variant("spank", default=True, description="Build the Slurm SPANK plugin")

    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("cmake@3.25:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("cli11@2:", type="build")
    depends_on("nlohmann-json@3:", type="build")
    depends_on("googletest", type="test")
    depends_on("mpi")
    depends_on("pmix@4:")
    depends_on("hwloc@2:")
    depends_on("yaml-cpp@0.7:")
    # libdtrain's checkpoint files carry zlib's CRC-32.
    depends_on("zlib-api")
    depends_on("slurm", when="+spank")
    depends_on("nccl", when="+cuda")

    def cmake_args(self):
        return [
            self.define("DTRAIN_BUILD_TESTS", self.run_tests),
            self.define("DTRAIN_BUILD_BENCH", False),
            self.define_from_variant("DTRAIN_BUILD_SPANK", "spank"),
            self.define_from_variant("DTRAIN_WITH_NCCL", "cuda"),
        ]

    def check(self):
        """`spack install --test`: the unit tests (no scheduler, no second node needed)."""
        with working_dir(self.build_directory):
            ctest = Executable(self.spec["cmake"].prefix.bin.ctest)
            ctest("-L", "unit", "--output-on-failure")
