# The package as imported (python/src/module.cpp and python/dtrain/__init__.py): every name the
# package exports exists, and importing it imports neither torch nor numpy.
import subprocess
import sys

import dtrain


def test_every_exported_name_exists():
    missing = [name for name in dtrain.__all__ if not hasattr(dtrain, name)]
    assert missing == []
    assert "libdtrain" in dtrain._dtrain.__doc__


def test_import_needs_neither_torch_nor_numpy():
    out = subprocess.run(
        [sys.executable, "-c",
         "import sys, dtrain; print('torch' in sys.modules, 'numpy' in sys.modules)"],
        check=True, capture_output=True, text=True).stdout.split()
    assert out == ["False", "False"]
