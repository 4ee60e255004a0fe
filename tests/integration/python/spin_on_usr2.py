"""Runs a Python program unchanged (runpy, as `python3 PROGRAM ARGS...` would) and answers SIGUSR2
with a busy loop in Python that never ends: a rank spinning outside any collective, for the hang
watch's benchmark (tests/integration/cli/hang_watch_runs.sh). Python runs the handler in the main
thread between two bytecodes, so the loop begins outside the program's C++ calls (collectives).

    python3 spin_on_usr2.py PROGRAM [ARGS...]
"""
import runpy
import signal
import sys


def spin_forever(signum, frame):
    print("spin_on_usr2: spinning from here", flush=True)
    while True:
        pass


signal.signal(signal.SIGUSR2, spin_forever)
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
