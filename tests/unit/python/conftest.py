# One Context per test process, as in a training script: libdtrain's MPI cannot start twice.
import pytest

import dtrain


@pytest.fixture(scope="session")
def ctx():
    return dtrain.init()
