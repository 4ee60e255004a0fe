"""Checks what affinity_probe printed under a launcher (init_affinity_test.sh runs the launches).

    init_affinity_check.py MODE OUTPUT_FILE [ARGS...]

Each rank prints one tab-separated line (affinity_probe.cpp); a check failure exits non-zero with a
sentence naming the rank, the field, what was expected and what was found.
"""

import re
import sys


def fail(message):
    sys.exit("init_affinity_test: FAIL: " + message)


def cpus(text):
    """The list form (0-3,8) as a set of CPU numbers."""
    out = set()
    for part in filter(None, text.split(",")):
        first, _, last = part.partition("-")
        out.update(range(int(first), int(last or first) + 1))
    return out


def rank_lines(output):
    ranks = []
    for line in output.splitlines():
        if not line.startswith("affinity_probe\t"):
            continue
        fields = dict(f.split("=", 1) for f in line.split("\t")[1:])
        for key in ("rank", "local_rank", "local_size"):
            fields[key] = int(fields[key])
        ranks.append(fields)
    if not ranks:
        fail("no rank printed its line (see the output above)")
    return sorted(ranks, key=lambda f: f["rank"])


def expect(rank, what, got, want):
    if got != want:
        fail(f"rank {rank['rank']}: {what}: expected {want!r}, got {got!r}")


def expect_summary(rank, cpuset, state):
    """WorldInfo.affinity of a rank without GPUs on this machine; its NICs vary by machine."""
    pattern = "init: gpus - cpus " + re.escape(cpuset) + r"( nics \S+)? " + re.escape(state)
    if not re.fullmatch(pattern, rank["affinity"]):
        fail(f"rank {rank['rank']}: WorldInfo.affinity: expected /{pattern}/, "
             f"got {rank['affinity']!r}")


def gpus_of(tsv, name):
    """The GPUs of one export as hwloc-calc saw them (expected-locality.tsv): PCI bus id -> the PUs
    near it. One GPU may have several rows (one per OS device)."""
    lines = [line.split("\t") for line in open(tsv, encoding="utf-8").read().splitlines()]
    header, rows = lines[0], lines[1:]
    gpus = {}
    for row in rows:
        r = dict(zip(header, row))
        if r["file"] == name and r["pci_class"].startswith("03"):
            gpus[r["pci_busid"]] = cpus(r["pus_P"])
    if not gpus:
        fail(f"{tsv} lists no GPU of {name}")
    return gpus


def check_topology(ranks, n, tsv, topo):
    name = topo.rsplit("/", 1)[-1]
    if len(ranks) != n:
        fail(f"expected {n} rank lines, got {len(ranks)}")
    gpus = gpus_of(tsv, name)
    # CUDA numbers GPUs in PCI order (CUDA_DEVICE_ORDER=PCI_BUS_ID, exported with them).
    pci_order = sorted(gpus)
    # Policy "closest" (docs/affinity.md): ranks take the GPUs in the order of the cores nearest
    # them (core order follows PU numbers in this export), PCI order breaking ties; with fewer
    # ranks than GPUs each rank takes an equal run of that order.
    taking = sorted(range(len(pci_order)), key=lambda i: (min(gpus[pci_order[i]]), i))
    if len(taking) % n:
        fail(f"{n} ranks do not divide the {len(taking)} GPUs of {name}; pick another count")
    per = len(taking) // n
    for r in ranks:
        lr = r["local_rank"]
        mine = sorted(taking[lr * per:(lr + 1) * per])
        want_gpus = ",".join(map(str, mine))
        expect(r, "CUDA_VISIBLE_DEVICES", r["CUDA_VISIBLE_DEVICES"], want_gpus)
        expect(r, "DTRAIN_GPUS", r["DTRAIN_GPUS"], want_gpus)
        # Each NUMA domain of this node is exactly the PUs near its two GPUs (one L3 slice each),
        # so a rank alone in its GPUs' domains gets exactly those PUs.
        want_cpus = set().union(*(gpus[pci_order[i]] for i in mine))
        expect(r, "DTRAIN_CPUSET (as a set)", cpus(r["DTRAIN_CPUSET"]), want_cpus)
        head = f"init: gpus {want_gpus} cpus {r['DTRAIN_CPUSET']} nics "
        tail = f" not bound (topology {topo} is not this machine)"
        if not (r["affinity"].startswith(head) and r["affinity"].endswith(tail)):
            fail(f"rank {r['rank']}: WorldInfo.affinity: expected [{head}...{tail}], "
                 f"got [{r['affinity']}]")
        expect(r, "CPUs of its threads (an XML topology never binds)", r["threads"], r["before"])
    print(f"ok: {n} ranks on {name}: GPUs and CPUs as the locality table predicts, "
          "this machine's CPUs untouched")


def check_untouched(ranks, affinity, cpuset):
    for r in ranks:
        expect(r, "WorldInfo.affinity", r["affinity"], affinity)
        expect(r, "CUDA_VISIBLE_DEVICES", r["CUDA_VISIBLE_DEVICES"], "<unset>")
        expect(r, "DTRAIN_GPUS", r["DTRAIN_GPUS"], "<unset>")
        expect(r, "DTRAIN_CPUSET", r["DTRAIN_CPUSET"], cpuset)
        expect(r, "CPUs of its threads", r["threads"], r["before"])
    print(f"ok: {len(ranks)} ranks: affinity {affinity!r}, nothing exported or bound")


def check_live_unbound(ranks, core_lines):
    # Whole cores as the kernel groups PUs (lscpu), independent of hwloc.
    cores = [cpus(line) for line in core_lines.splitlines() if line]
    if len(ranks) < 2 or len(cores) < len(ranks):
        fail(f"expected at least 2 ranks and a core for each, got {len(ranks)} on {len(cores)}")
    seen = set()
    for r in ranks:
        mine = cpus(r["DTRAIN_CPUSET"])
        expect(r, "CPUs of its threads", r["threads"], r["DTRAIN_CPUSET"])
        if not mine or mine >= cpus(r["before"]):
            fail(f"rank {r['rank']}: expected a cpuset narrower than the unbound "
                 f"{r['before']}, got {r['DTRAIN_CPUSET']}")
        if any(mine & core and not core <= mine for core in cores):
            fail(f"rank {r['rank']}: {r['DTRAIN_CPUSET']} splits a core; cores: {cores}")
        if mine & seen:
            fail(f"rank {r['rank']}: {r['DTRAIN_CPUSET']} overlaps another rank's")
        seen |= mine
        expect_summary(r, r["DTRAIN_CPUSET"], "bound")
    print(f"ok: {len(ranks)} ranks, every thread bound to the rank's own cores: "
          + " ".join(r["DTRAIN_CPUSET"] for r in ranks))


def check_live_bound(ranks):
    with open("/sys/devices/system/cpu/online", encoding="utf-8") as f:
        online = cpus(f.read().strip())
    for r in ranks:
        if cpus(r["before"]) >= online:
            fail(f"rank {r['rank']}: the launcher did not bind it ({r['before']}); this check "
                 "needs its default binding")
        expect(r, "CPUs of its threads", r["threads"], r["before"])
        expect(r, "DTRAIN_CPUSET", r["DTRAIN_CPUSET"], r["before"])
        expect_summary(r, r["before"], "not bound (bound by the launcher)")
    print(f"ok: {len(ranks)} ranks keep the launcher's binding: "
          + " ".join(r["before"] for r in ranks))


def check_single_on(ranks):
    """DTRAIN_AFFINITY=on applies the entry to a single process: one rank, the node's cores."""
    if len(ranks) != 1:
        fail(f"expected one process, got {len(ranks)}")
    r = ranks[0]
    expect(r, "CPUs of its threads", r["threads"], r["DTRAIN_CPUSET"])
    if not r["affinity"].startswith("init: gpus "):
        fail(f"rank 0: WorldInfo.affinity: expected init: ..., got {r['affinity']!r}")
    print(f"ok: DTRAIN_AFFINITY=on applied the entry to a single process: {r['affinity']}")


def main():
    mode, output_file, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    with open(output_file, encoding="utf-8") as f:
        ranks = rank_lines(f.read())
    if mode == "topology":
        check_topology(ranks, int(args[0]), args[1], args[2])
    elif mode == "preset":
        check_untouched(ranks, "launcher", "0")
    elif mode == "off":
        check_untouched(ranks, "off", "<unset>")
    elif mode == "single":
        check_untouched(ranks, "off: single process without a launcher", "<unset>")
    elif mode == "on":
        check_single_on(ranks)
    elif mode == "live-unbound":
        check_live_unbound(ranks, args[0])
    elif mode == "live-bound":
        check_live_bound(ranks)
    else:
        fail(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
