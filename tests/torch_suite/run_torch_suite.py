"""torch 1.13's own distributed tests on backend "dtrain" against gloo (issue 43's acceptance).

For each world size, runs torch_suite.py (torch's DistributedTest._DistTestBase, spawned as
torch's test_distributed_spawn.py does) once with BACKEND=gloo and once with BACKEND=dtrain, one
after the other, over the collective and point-to-point families; prints each test's outcome and
`N passed, N failed, N skipped` per backend and world size; exits 1 when a test that passes on
gloo does not pass on dtrain, listing them (tests torch_suite.GLOO_OWN names are gloo's own and
listed apart), 2 when a run could not be made.

    run_torch_suite.py [--world-sizes 2,3] [--backends gloo,dtrain] [--out DIR] [--reuse gloo]
                       [--pattern RE]... [--profiling]

The ranks' own output (torch's logging, tracebacks) goes to DIR/<backend>_<n>.log.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SUITE = os.path.join(HERE, "torch_suite.py")
# The lines of torch_suite.py's own (outcomes, summaries, failures' last lines) among the ranks'.
OURS = re.compile(r"^(\[[a-z]+ x\d+\] |    > )")


def run_one(backend, world_size, out_dir, patterns):
    log_path = os.path.join(out_dir, f"{backend}_{world_size}.log")
    results = os.path.join(out_dir, f"{backend}_{world_size}.json")
    if os.path.exists(results):
        os.unlink(results)
    with tempfile.TemporaryDirectory(prefix=f"torch-suite-{backend}-") as temp_dir:
        env = dict(os.environ)
        env.update({
            "BACKEND": backend,
            "WORLD_SIZE": str(world_size),
            "TEMP_DIR": temp_dir,
            "INIT_METHOD": "file://" + os.path.join(temp_dir, "shared_init_file"),
            # A test that hangs fails after this (torch's default: 300 s).
            "DISTRIBUTED_TESTS_DEFAULT_TIMEOUT": env.get("DISTRIBUTED_TESTS_DEFAULT_TIMEOUT",
                                                         "150"),
            "OMP_NUM_THREADS": env.get("OMP_NUM_THREADS", "1"),
        })
        cmd = [sys.executable, SUITE, "--results", results]
        for p in patterns:
            cmd += ["--pattern", p]
        print(f"== {backend}, {world_size} ranks: {' '.join(cmd)} (log {log_path})", flush=True)
        started = time.time()
        with open(log_path, "w") as log:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                                    text=True, errors="replace", cwd=temp_dir)
            for line in proc.stdout:
                log.write(line)
                if OURS.match(line):
                    sys.stdout.write(line)
                    sys.stdout.flush()
            status = proc.wait()
    if status != 0 or not os.path.exists(results):
        print(f"== {backend}, {world_size} ranks: torch_suite.py exited {status} without its "
              f"results; see {log_path}", flush=True)
        return None
    with open(results) as f:
        data = json.load(f)
    print(f"== {backend}, {world_size} ranks: {time.time() - started:.0f} s", flush=True)
    return data["outcomes"]


def counts(outcomes):
    c = {k: sum(1 for o in outcomes.values() if o["outcome"] == k)
         for k in ("PASS", "FAIL", "SKIP")}
    return f"{c['PASS']} passed, {c['FAIL']} failed, {c['SKIP']} skipped"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world-sizes", default="2", help="comma-separated (default 2)")
    parser.add_argument("--backends", default="gloo,dtrain",
                        help="comma-separated; the first is the baseline (default gloo,dtrain)")
    parser.add_argument("--out", help="where the logs and results go (default: a new temp dir)")
    parser.add_argument("--pattern", action="append", default=[],
                        help="only the selected tests whose name matches (regex, repeatable)")
    parser.add_argument("--reuse", default="",
                        help="comma-separated backends whose results already in --out are "
                             "taken instead of run again (e.g. gloo: the baseline of an earlier "
                             "run)")
    parser.add_argument("--profiling", action="store_true",
                        help="also widen torch's profiler allowlists to dtrain (its event checks)")
    args = parser.parse_args()
    if args.profiling:
        os.environ["DTRAIN_TORCH_SUITE_PROFILING"] = "1"
    backends = args.backends.split(",")
    world_sizes = [int(n) for n in args.world_sizes.split(",")]
    out_dir = args.out or tempfile.mkdtemp(prefix="torch-suite-")
    os.makedirs(out_dir, exist_ok=True)

    sys.path.insert(0, HERE)
    from selection import GLOO_OWN as gloo_own

    summary, regressions, exempt, broken = [], [], [], False
    for n in world_sizes:
        runs = {}
        for backend in backends:
            kept = os.path.join(out_dir, f"{backend}_{n}.json")
            if backend in args.reuse.split(",") and os.path.exists(kept):
                with open(kept) as f:
                    runs[backend] = json.load(f)["outcomes"]
                print(f"== {backend}, {n} ranks: the results in {kept} (--reuse)", flush=True)
            else:
                runs[backend] = run_one(backend, n, out_dir, args.pattern)
            if runs[backend] is None:
                broken = True
            else:
                summary.append(f"{backend} x{n}: {counts(runs[backend])}")
        base, others = backends[0], backends[1:]
        if runs.get(base) is None:
            continue
        for other in others:
            if runs.get(other) is None:
                continue
            for name, o in sorted(runs[base].items()):
                if o["outcome"] != "PASS":
                    continue
                mine = runs[other].get(name, {"outcome": "MISSING", "detail": ""})
                if mine["outcome"] == "PASS":
                    continue
                entry = f"{other} x{n}: {name}: {mine['outcome']}"
                if name in gloo_own and mine["outcome"] == "SKIP":
                    exempt.append(f"{entry} ({gloo_own[name]})")
                else:
                    detail = mine["detail"].strip().splitlines()
                    regressions.append(entry + (f": {detail[-1][:200]}" if mine["outcome"] == "SKIP"
                                                and detail else ""))
            better = [name for name, o in sorted(runs[other].items())
                      if o["outcome"] == "PASS"
                      and runs[base].get(name, {}).get("outcome") != "PASS"]
            for name in better:
                summary.append(f"{other} x{n}: {name} passes where {base} does not "
                               f"({runs[base].get(name, {}).get('outcome', 'MISSING')})")

    print("\n== summary (logs and results in %s)" % out_dir)
    for line in summary:
        print(line)
    if exempt:
        print(f"\n{len(exempt)} passing on {backends[0]}, gloo's own (not compared):")
        for line in exempt:
            print("  " + line)
    if regressions:
        print(f"\n{len(regressions)} passing on {backends[0]} but not on "
              f"{', '.join(backends[1:])}:")
        for line in regressions:
            print("  " + line)
        return 1
    if broken:
        return 2
    print(f"\nevery test passing on {backends[0]} passes on {', '.join(backends[1:])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
