"""torch 1.13's own distributed test suite on one backend and one world size (issue 43).

Run by run_torch_suite.py, once per backend and world size, as torch's
test/distributed/test_distributed_spawn.py runs it: BACKEND, WORLD_SIZE, TEMP_DIR and
INIT_METHOD in the environment, DistributedTest._DistTestBase mixed into TestDistBackend, every
test in fresh processes started with multiprocessing's spawn (MultiProcessTestCase).

The spawned ranks import this file again (as __mp_main__ or by name): everything at module level
below runs in them too, before torch's suite is imported, which is what makes the gates below
apply there as well.

    torch_suite.py --results FILE [--pattern REGEX]... [--list]

prints one line per test (PASS, FAIL, SKIP and why) and writes the outcomes to FILE as JSON.
"""

import json
import os
import re
import sys
import time
import unittest

if "BACKEND" not in os.environ or "WORLD_SIZE" not in os.environ or "TEMP_DIR" not in os.environ:
    raise SystemExit("torch_suite.py: BACKEND, WORLD_SIZE and TEMP_DIR must be set "
                     "(run_torch_suite.py sets them)")
BACKEND = os.environ["BACKEND"]

try:
    import expecttest  # noqa: F401  torch's test helpers need it
except ImportError:
    sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "stand_ins"))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402,F401

if BACKEND == "dtrain":
    import dtrain.torch  # noqa: E402,F401  registers "dtrain" (Backend.register_backend)

from selection import FAMILIES, GLOO_OWN, family_of, widened  # noqa: E402,F401

# --- torch's backend-name gates, widened to "dtrain" (selection.py says which) -------------------
# torch's suite decides at import which tests a backend runs: sandcastle_skip_if(cond, reason) and
# require_backend({...}) (through sandcastle_skip) mark the function skipped. The two decorators
# are replaced, before torch's suite is imported, by ones that record every gate that holds and
# mark the test skipped only for gates that are not widened (one is enough to skip, in any order).


def _gate(reason):
    def decorate(func):
        gates = getattr(func, "_torch_suite_gates", [])
        gates.append(reason)
        try:
            func._torch_suite_gates = gates
        except AttributeError:
            pass
        wide = widened(reason, BACKEND)
        if not wide or func.__name__ in GLOO_OWN:
            func.__unittest_skip__ = True
            func.__unittest_skip_why__ = (f"gloo's own: {GLOO_OWN[func.__name__]}" if wide
                                          else reason)
        return func
    return decorate


def _skip_if(condition, reason):
    return _gate(reason) if condition else (lambda func: func)


# common_utils parses sys.argv when imported (its own options, abbreviations accepted): it sees
# none of ours.
_argv, sys.argv = sys.argv, sys.argv[:1]
import torch.testing._internal.common_utils as common_utils  # noqa: E402

sys.argv = _argv

common_utils.sandcastle_skip_if = _skip_if
common_utils.sandcastle_skip = _gate

from torch.testing._internal.common_distributed import DistTestCases  # noqa: E402

# How torch's suite knows an out-of-tree backend (require_backends_available, the group-override
# helper): the name in DistTestCases.backend_feature["plugin"].
if BACKEND == "dtrain":
    DistTestCases.backend_feature["plugin"].add("dtrain")

from torch.testing._internal.distributed.distributed_test import (  # noqa: E402
    DistributedTest,
    TestDistBackend,
)

torch.backends.cuda.matmul.allow_tf32 = False

# torch's allowlists of the backends whose profiler events the tests check (event names, counts,
# input shapes): checked at run time, so not widened unless asked (DTRAIN_TORCH_SUITE_PROFILING=1;
# docs/torch.md says what fails then). Any other backend runs the same tests without those checks.
if BACKEND == "dtrain" and os.environ.get("DTRAIN_TORCH_SUITE_PROFILING") == "1":
    import torch.testing._internal.distributed.distributed_test as _suite

    for _allowlist in (_suite.PROFILING_SUPPORTED_BACKENDS,
                       _suite.CUDA_PROFILING_SUPPORTED_BACKENDS,
                       _suite.SEND_RECV_PROFILING_SUPPORTED_BACKENDS):
        _allowlist.append("dtrain")


class TestDistBackendWithSpawn(TestDistBackend, DistributedTest._DistTestBase):
    def setUp(self):
        super().setUp()
        self._spawn_processes()
        torch.backends.cudnn.flags(enabled=True, allow_tf32=False).__enter__()


def selected_names(patterns):
    names = sorted(n for n in dir(DistributedTest._DistTestBase)
                   if n.startswith("test_") and family_of(n) is not None)
    if patterns:
        names = [n for n in names if any(re.search(p, n) for p in patterns)]
    return names


def failure_summary(detail, lines=4):
    """The last lines of the first rank's Python traceback in a failure's text: the ranks'
    tracebacks arrive in MultiProcessTestCase's RuntimeError, each followed by the C++ stack
    (TORCH_SHOW_CPP_STACKTRACES), which says nothing more."""
    ranks = [r.split("\nException raised from ")[0] for r in
             re.split(r"Process \d+ exited with error code \d+ and exception:", detail)[1:]]
    # A rank outside a subgroup fails in the suite's file barrier, waiting for the members that
    # failed: theirs is the cause.
    causes = [r for r in ranks if "barrier timeout" not in r] or ranks
    text = causes[0] if causes else detail.split("\nException raised from ")[0]
    kept = [l.rstrip() for l in text.splitlines()
            if l.strip() and not l.lstrip().startswith(("^", "frame #"))]
    return kept[-lines:]


class _Result(unittest.TextTestResult):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.outcomes = {}
        self._started = 0.0

    def startTest(self, test):
        self._started = time.time()
        super().startTest(test)

    def _record(self, test, outcome, detail=""):
        name = test.id().split(".")[-1]
        seconds = time.time() - self._started
        self.outcomes[name] = {"outcome": outcome, "detail": detail, "seconds": round(seconds, 1),
                               "family": family_of(name)}
        line = f"[{BACKEND} x{os.environ['WORLD_SIZE']}] {outcome:4} {name} ({seconds:.1f} s)"
        if outcome == "SKIP":
            line += f": {detail}"
        print(line, flush=True)
        if outcome == "FAIL":
            for l in failure_summary(detail):
                print(f"    > {l}", flush=True)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._record(test, "PASS")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._record(test, "FAIL", self._exc_info_to_string(err, test))

    def addError(self, test, err):
        super().addError(test, err)
        self._record(test, "FAIL", self._exc_info_to_string(err, test))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._record(test, "SKIP", reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._record(test, "FAIL", "expected failure")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._record(test, "PASS")


def main(argv):
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", help="where to write the outcomes (JSON)")
    parser.add_argument("--pattern", action="append", default=[],
                        help="run only the selected tests whose name matches (regex, repeatable)")
    parser.add_argument("--list", action="store_true", help="list the selected tests and exit")
    args = parser.parse_args(argv)

    names = selected_names(args.pattern)
    if args.list:
        for n in names:
            func = getattr(DistributedTest._DistTestBase, n)
            gates = [g for g in getattr(func, "_torch_suite_gates", []) if widened(g, BACKEND)]
            skip = getattr(func, "__unittest_skip_why__", None)
            print(f"{family_of(n):22} {n}" + (f"  [skipped: {skip}]" if skip else "")
                  + "".join(f"  [widened: {g}]" for g in gates))
        return 0
    suite = unittest.TestSuite(TestDistBackendWithSpawn(n) for n in names)
    with open(os.devnull, "w") as devnull:
        runner = unittest.TextTestRunner(stream=devnull, resultclass=_Result, verbosity=0)
        result = runner.run(suite)
    counts = {k: sum(1 for o in result.outcomes.values() if o["outcome"] == k)
              for k in ("PASS", "FAIL", "SKIP")}
    print(f"[{BACKEND} x{os.environ['WORLD_SIZE']}] {counts['PASS']} passed, "
          f"{counts['FAIL']} failed, {counts['SKIP']} skipped", flush=True)
    if args.results:
        with open(args.results, "w") as f:
            json.dump({"backend": BACKEND, "world_size": int(os.environ["WORLD_SIZE"]),
                       "outcomes": result.outcomes}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
