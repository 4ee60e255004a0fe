"""`pip install .`: a PEP 517 build backend that drives the project's CMake and writes the wheel.

Why our own backend rather than setuptools: setuptools before 70.1 needs the `wheel` package to
make a wheel, and an interpreter the user built or installed apart from Debian's (pyenv, a
python.org build, a venv without system packages) has neither `wheel` nor a package index in
reach offline. This backend needs nothing beyond the standard library of CPython >= 3.9, so
`pip install .` works offline for any such interpreter, with or without `--no-build-isolation`.
A wheel is a zip with three metadata files (PEP 427, PEP 376's RECORD, the core metadata spec):
written here in a few lines.

CMake builds libdtrain and the package's modules for the interpreter running pip
(DTRAIN_PYTHON), dtrain.torch only where that interpreter imports torch, and installs component
`python` (and `torch`) with libdtrain inside the package (DTRAIN_PYTHON_BUNDLE_RUNTIME), so a virtualenv or
conda environment needs nothing under a system prefix. The targets, install rules and the version
are CMakeLists.txt's (docs/python.md#installing-with-pip).

Environment: CMAKE_ARGS (more -D options: the MPI, DTRAIN_BUILD_TORCH=ON|OFF, pybind11_DIR, ...),
CMAKE_BUILD_PARALLEL_LEVEL (jobs; default: every CPU this process may use), DTRAIN_PIP_BUILD_DIR
(where CMake builds; default build-pip/<interpreter>/ in the checkout, one per interpreter and
environment, kept so that the next install rebuilds only what changed).
"""
import base64
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NAME = "dtrain"
SUMMARY = ("libdtrain for Python: records, checkpoints, shards, preemption, collectives, and the "
           "torch.distributed backend \"dtrain\"")
REQUIRES_PYTHON = (3, 9)


class BuildError(SystemExit):
    """One line for the user, after CMake's own output: pip shows both."""

    def __init__(self, text):
        super().__init__("dtrain: pip install: " + text)


def project_version():
    """The version of CMakeLists.txt's project(): the one place the version is written."""
    text = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(r"^project\(dtrain\s+VERSION\s+([0-9]+(?:\.[0-9]+)*)\b", text, re.M)
    if match is None:
        raise BuildError("CMakeLists.txt: no `project(dtrain VERSION <x.y.z>` line")
    return match.group(1)


def check_interpreter():
    if sys.implementation.name != "cpython":
        raise BuildError(f"expected CPython {REQUIRES_PYTHON[0]}.{REQUIRES_PYTHON[1]} or later, got "
                         f"{sys.implementation.name} {sys.version.split()[0]} ({sys.executable})")
    if sys.version_info[:2] < REQUIRES_PYTHON:
        raise BuildError(f"expected Python {REQUIRES_PYTHON[0]}.{REQUIRES_PYTHON[1]} or later, got "
                         f"{sys.version.split()[0]} ({sys.executable})")


def wheel_tag():
    """cp311-cp311-linux_x86_64: the interpreter's own (the modules are built for it alone)."""
    python = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    abi = python + ("d" if hasattr(sys, "gettotalrefcount") else "")  # a debug build's ABI
    platform = re.sub(r"[-.]", "_", sysconfig.get_platform())
    return f"{python}-{abi}-{platform}"


def build_dir():
    """One CMake tree per interpreter and environment: a venv's torch (or none) decides what is
    built, and a tree configured for one interpreter would rebuild everything for the next."""
    chosen = os.environ.get("DTRAIN_PIP_BUILD_DIR")
    if chosen:
        return Path(chosen).resolve()
    digest = hashlib.sha256(os.fsencode(sys.executable)).hexdigest()[:8]
    return ROOT / "build-pip" / f"{sys.implementation.cache_tag}-{digest}"


def torch_prefix(env):
    """Where the interpreter's torch keeps TorchConfig.cmake (a pip or conda torch), else None.

    Debian's python3-torch has none there (libtorch-dev's is on CMake's default path). Asked of
    the interpreter as CMake will run it (`env`), not of this process's sys.path.
    """
    probe = ("import pathlib, torch.utils; p = pathlib.Path(torch.utils.cmake_prefix_path); "
             "print(p if (p / 'Torch' / 'TorchConfig.cmake').is_file() else '')")
    found = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    return (found.stdout.strip() or None) if found.returncode == 0 else None


def cmake_environment():
    """This process's environment without pip's build isolation: pip hides the environment's
    site-packages from the backend (PYTHONPATH to its overlay, PYTHONNOUSERSITE), and CMake asks
    the interpreter whether it imports torch: it must see what the user's programs will see."""
    env = dict(os.environ)
    overlay = env.get("PYTHONPATH", "")
    if "pip-build-env-" in overlay:
        env.pop("PYTHONPATH")
        env.pop("PYTHONNOUSERSITE", None)
    return env


class Progress:
    """Where the build stands, on the terminal: pip shows a backend's output only with -v (or
    after a failure), and a first build takes minutes. Every line also goes to stdout, which
    pip keeps for -v and for a failure's report."""

    def __init__(self, steps):
        self.steps = steps
        self.step = 0
        self.began = time.monotonic()
        try:
            self.tty = open("/dev/tty", "w")
        except OSError:
            self.tty = None

    def say(self, text, step=True):
        if step:
            self.step += 1
        line = f"dtrain: [{self.step}/{self.steps}, {time.monotonic() - self.began:.0f} s] {text}"
        print(line, flush=True)
        if self.tty is not None and not sys.stdout.isatty():
            self.tty.write("\r" + line + "\n")  # after pip's spinner, on a line of its own
            self.tty.flush()


def run(command, env, progress=None):
    """Runs `command`; with `progress`, CMake's build lines are passed on and each new tenth of
    its percentage is also said on the terminal."""
    print("dtrain: " + shlex.join(str(a) for a in command), flush=True)
    try:
        child = subprocess.Popen([str(a) for a in command], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True, errors="replace")
    except FileNotFoundError:
        raise BuildError(f"{command[0]}: not found; expected CMake 3.25 or later on PATH (Debian: "
                         "apt-get install cmake)") from None
    said = -1
    for line in child.stdout:
        sys.stdout.write(line)
        match = re.match(r"\[\s*(\d+)%\]", line)
        if progress is not None and match and int(match.group(1)) // 10 > said:
            said = int(match.group(1)) // 10
            progress.say(f"compiling: {match.group(1)} %", step=False)
    sys.stdout.flush()
    if child.wait() != 0:
        raise BuildError(f"`{shlex.join(str(a) for a in command)}` failed with exit status "
                         f"{child.returncode} (its output is above)")


def build_into(stage):
    """Configures, builds and installs the package into `stage` (stage/dtrain/...)."""
    check_interpreter()
    build = build_dir()
    env = cmake_environment()
    progress = Progress(steps=3)
    progress.say(f"configuring for {sys.executable} in {build}")
    configure = [
        "cmake", "-S", ROOT, "-B", build / "cmake",
        f"-DDTRAIN_PYTHON={sys.executable}",
        "-DDTRAIN_PYTHON_BUNDLE_RUNTIME=ON",
        "-DDTRAIN_PYTHON_INSTALL_DIR=.",
        "-DDTRAIN_BUILD_TESTS=OFF", "-DDTRAIN_BUILD_BENCH=OFF", "-DDTRAIN_BUILD_SPANK=OFF",
        "-DCMAKE_BUILD_TYPE=Release",
        *shlex.split(env.get("CMAKE_ARGS", "")),  # last: the user's -D win
    ]
    prefix = torch_prefix(env)
    if prefix is not None:
        env["CMAKE_PREFIX_PATH"] = os.pathsep.join(
            p for p in (env.get("CMAKE_PREFIX_PATH"), prefix) if p)
    run(configure, env)
    # CMake's default is one job for the Makefile generator: a whole libdtrain on one core.
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(len(os.sched_getaffinity(0))))
    progress.say("building libdtrain and the modules (target dtrain_python_package)")
    run(["cmake", "--build", build / "cmake", "--target", "dtrain_python_package"], env, progress)
    progress.say("installing into the wheel")
    # dtrain.torch is a component of its own (a .deb of its own); none is installed without torch.
    for component in ("python", "torch"):
        run(["cmake", "--install", build / "cmake", "--component", component, "--prefix", stage],
            env)


def record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def metadata_files(version, tag):
    """dist-info's files, by name: the core metadata, the wheel's own and the licence."""
    metadata = "\n".join([
        "Metadata-Version: 2.1", f"Name: {NAME}", f"Version: {version}", f"Summary: {SUMMARY}",
        "License: BSD-3-Clause", f"Requires-Python: >={REQUIRES_PYTHON[0]}.{REQUIRES_PYTHON[1]}",
        "Description-Content-Type: text/markdown", "", (ROOT / "README.md").read_text(),
    ])
    wheel = "\n".join(["Wheel-Version: 1.0", f"Generator: dtrain_build_backend {version}",
                       "Root-Is-Purelib: false", f"Tag: {tag}", ""])
    return {"METADATA": metadata.encode(), "WHEEL": wheel.encode(),
            "LICENSE": (ROOT / "LICENSE").read_bytes()}


def write_wheel(stage, wheel_directory, version, tag):
    name = f"{NAME}-{version}-{tag}.whl"
    dist_info = f"{NAME}-{version}.dist-info"
    records = []
    target = Path(wheel_directory) / name
    # A zip holds no symbolic links: CMake's libdtrain.so.0 -> libdtrain.so.0.1.0 would be two
    # copies of the library. The link's name is the one the modules load (the SONAME), so the
    # file goes in under it, once.
    files = sorted(p for p in Path(stage).rglob("*") if p.is_file())
    linked = {p.resolve() for p in files if p.is_symlink()}
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as wheel:
        for path in files:
            if not path.is_symlink() and path.resolve() in linked:
                continue
            arcname = path.relative_to(stage).as_posix()
            data = path.read_bytes()
            info = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (path.stat().st_mode & 0o777 | 0o100000) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data)
            records.append(record_line(arcname, data))
        for file_name, data in metadata_files(version, tag).items():
            arcname = f"{dist_info}/{file_name}"
            wheel.writestr(arcname, data)
            records.append(record_line(arcname, data))
        records.append(f"{dist_info}/RECORD,,")
        wheel.writestr(f"{dist_info}/RECORD", "\n".join(records) + "\n")
    return name


# PEP 517's hooks.

def get_requires_for_build_wheel(config_settings=None):
    return []  # the standard library only: nothing for pip to fetch


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = project_version()
    stage = Path(tempfile.mkdtemp(prefix="dtrain-wheel-"))
    try:
        build_into(stage)
        return write_wheel(stage, wheel_directory, version, wheel_tag())
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    """The metadata without the build: pip asks for it before it builds."""
    version = project_version()
    dist_info = Path(metadata_directory) / f"{NAME}-{version}.dist-info"
    dist_info.mkdir(parents=True, exist_ok=True)
    for file_name, data in metadata_files(version, wheel_tag()).items():
        (dist_info / file_name).write_bytes(data)
    return dist_info.name


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    raise BuildError("editable installs (pip install -e) are not supported; expected `pip install "
                     ".`, or PYTHONPATH=<cmake build dir>/python")


def build_sdist(sdist_directory, config_settings=None):
    raise BuildError("source distributions are not built; expected `pip install .` from a "
                     "checkout (the .deb: packaging/deb/build-deb.sh)")
