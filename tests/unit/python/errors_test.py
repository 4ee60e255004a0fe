# dtrain.Error and its subclasses: one per dtrain::Error::Code, each with `code`, deriving from
# the builtin class that fits.
import pytest

import dtrain


@pytest.mark.parametrize("cls,code,builtin", [
    (dtrain.InvalidError, "invalid", ValueError),
    (dtrain.CommError, "comm", RuntimeError),
    (dtrain.SysError, "system", OSError),
    (dtrain.InternalError, "internal", RuntimeError),
    (dtrain.TimeoutError, "timeout", TimeoutError),
])
def test_classes_carry_their_code(cls, code, builtin):
    assert issubclass(cls, dtrain.Error) and issubclass(cls, builtin)
    assert issubclass(dtrain.Error, RuntimeError)
    assert cls.code == code and cls("x").code == code
    assert cls.__module__ == "dtrain"


def test_libdtrain_errors_arrive_with_their_message_and_code():
    with pytest.raises(dtrain.Error) as e:
        dtrain.Shard(1, rank=0, world=0)
    assert type(e.value) is dtrain.InvalidError and e.value.code == "invalid"
    assert str(e.value).startswith("dtrain: shard: ")
