"""`pip install .`: setuptools drives the project's CMake; the targets, install rules and version
are CMakeLists.txt's (docs/python.md#installing-with-pip).

CMake builds libdtrain and the package's modules for the interpreter running pip (DTRAIN_PYTHON),
dtrain.torch where that interpreter's torch is found, and installs component `python` into the
wheel with libdtrain inside the package (DTRAIN_PYTHON_BUNDLE_RUNTIME), so a virtualenv or conda
environment needs nothing under a system prefix.

Environment: CMAKE_ARGS (more -D options: the MPI, DTRAIN_BUILD_TORCH=ON|OFF, pybind11_DIR, ...),
CMAKE_BUILD_PARALLEL_LEVEL (jobs; default: every CPU this process may use), DTRAIN_PIP_BUILD_DIR (where setuptools and CMake build; default
build-pip/ here, kept so that the next install rebuilds only what changed).
"""
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
BUILD_BASE = Path(os.environ.get("DTRAIN_PIP_BUILD_DIR") or ROOT / "build-pip").resolve()
BUILD_BASE.mkdir(parents=True, exist_ok=True)  # egg_info writes into it before any build


def project_version():
    """The version of CMakeLists.txt's project(): the one place the version is written."""
    text = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(r"^project\(dtrain\s+VERSION\s+([0-9]+(?:\.[0-9]+)*)\b", text, re.M)
    if match is None:
        sys.exit("dtrain: setup.py: CMakeLists.txt: no `project(dtrain VERSION <x.y.z>` line")
    return match.group(1)


def torch_prefix():
    """Where the interpreter's torch keeps TorchConfig.cmake (a pip or conda torch), else None.

    Debian's python3-torch has none there (libtorch-dev's is on CMake's default path).
    """
    try:
        import torch.utils
    except ImportError:
        return None
    prefix = Path(torch.utils.cmake_prefix_path)
    return str(prefix) if (prefix / "Torch" / "TorchConfig.cmake").is_file() else None


def run(command, env=None):
    print("dtrain: " + shlex.join(str(a) for a in command), flush=True)
    try:
        subprocess.run([str(a) for a in command], check=True, env=env)
    except FileNotFoundError:
        sys.exit(f"dtrain: setup.py: {command[0]}: not found; expected CMake 3.25 or later on "
                 "PATH (Debian: apt-get install cmake)")
    except subprocess.CalledProcessError as e:
        sys.exit(f"dtrain: setup.py: `{shlex.join(str(a) for a in command)}` failed with exit "
                 f"status {e.returncode} (its output is above)")


class CMakePackage(Extension):
    """The whole package, built and installed by CMake (one entry: setuptools needs one to make
    a platform wheel and to run build_ext)."""

    def __init__(self):
        super().__init__("dtrain._dtrain", sources=[])


class BuildWithCMake(build_ext):
    def build_extension(self, ext):
        if self.inplace or getattr(self, "editable_mode", False):  # setuptools >= 64: PEP 660
            sys.exit("dtrain: setup.py: editable installs (pip install -e) are not supported; "
                     "expected `pip install .`, or PYTHONPATH=<cmake build dir>/python")
        build = BUILD_BASE / "cmake"
        configure = [
            "cmake", "-S", ROOT, "-B", build,
            f"-DDTRAIN_PYTHON={sys.executable}",
            "-DDTRAIN_PYTHON_BUNDLE_RUNTIME=ON",
            "-DDTRAIN_PYTHON_INSTALL_DIR=.",
            "-DDTRAIN_BUILD_TESTS=OFF", "-DDTRAIN_BUILD_BENCH=OFF", "-DDTRAIN_BUILD_SPANK=OFF",
            "-DCMAKE_BUILD_TYPE=Release",
            *shlex.split(os.environ.get("CMAKE_ARGS", "")),  # last: the user's -D win
        ]
        env = dict(os.environ)
        prefix = torch_prefix()
        if prefix is not None:
            env["CMAKE_PREFIX_PATH"] = os.pathsep.join(
                p for p in (env.get("CMAKE_PREFIX_PATH"), prefix) if p)
        run(configure, env)
        # CMake's default is one job for the Makefile generator: a whole libdtrain on one core.
        env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(len(os.sched_getaffinity(0))))
        run(["cmake", "--build", build, "--target", "dtrain_python_package"], env)
        run(["cmake", "--install", build, "--component", "python",
             "--prefix", Path(self.build_lib).resolve()], env)


setup(
    version=project_version(),
    ext_modules=[CMakePackage()],
    cmdclass={"build_ext": BuildWithCMake},
    options={"build": {"build_base": str(BUILD_BASE)},
             "egg_info": {"egg_base": str(BUILD_BASE)}},
)
