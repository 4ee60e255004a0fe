# Every rank runs the same tests in the same order, so their collectives line up; each test
# finishes its collectives before it asserts, so one rank's failure cannot leave the other
# waiting in a collective (DTRAIN_TIMEOUT bounds it anyway).
import pytest

import dtrain


@pytest.fixture(scope="session")
def ctx():
    return dtrain.init()
