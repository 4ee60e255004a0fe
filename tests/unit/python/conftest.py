# One Context per test process, as in a training script: libdtrain's MPI cannot start twice.
import os
import subprocess
import sys

import pytest

import dtrain


@pytest.fixture(scope="session")
def ctx():
    return dtrain.init()


def run_fresh(script, **env):
    """Runs `script` in a new Python process with `env` added and returns its stdout: libdtrain
    reads its DTRAIN_* variables once, at init()."""
    return subprocess.run([sys.executable, "-c", script], env=dict(os.environ, **env), check=True,
                          capture_output=True, text=True).stdout.strip()
