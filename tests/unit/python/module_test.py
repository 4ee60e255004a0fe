# The package as imported (python/src/module.cpp and python/dtrain/__init__.py): every name the
# package exports exists, importing it imports neither torch nor numpy, and init() notes the
# sys.exit() status that decides whether the rank leaves the job at exit.
import os
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


def test_init_notes_the_exit_status_and_sys_exit_still_exits():
    # In a child: the wrapper stays for the rest of the process. One rank has nobody to tell, so
    # nothing is aborted at exit; the status is Python's own.
    script = ("import sys, dtrain\n"
              "ctx = dtrain.init()\n"
              "try:\n"
              "    sys.exit(3)\n"
              "except SystemExit as e:\n"
              "    print(e.code, dtrain._exit_status)\n"
              "ctx.abort('a test')\n"
              "sys.exit(4)\n")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env={**os.environ, "DTRAIN_BOOTSTRAP": "single"})
    assert run.stdout.split() == ["3", "3"]
    assert run.returncode == 4
    assert "leaving the job: a test" in run.stderr
