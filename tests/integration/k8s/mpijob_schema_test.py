#!/usr/bin/env python3
"""The MPIJobs `dtrain plan` renders for site k8s, checked the way a cluster would check them.

Usage: mpijob_schema_test.py DTRAIN CRD EXAMPLE_SPEC

Each spec below is planned with `dtrain plan --json`; its manifest (script_text) must be an
MPIJob of kubeflow.org/v2beta1 that
  1. validates against the openAPIV3Schema of that version in the MPI operator's CRD (CRD, a
     verbatim copy: tests/fixtures/k8s/README.md), made strict about unknown fields as
     `kubectl create --validate=strict` is: every object schema that lists its properties and
     neither allows additional ones nor preserves unknown fields gets additionalProperties: false;
  2. passes the operator's admission rules, which the schema does not express
     (kubeflow/mpi-operator pkg/apis/kubeflow/validation/validation.go): replica specs with
     replicas and restartPolicy Never or OnFailure, one launcher, workers >= 1, a container each,
     slotsPerWorker, cleanPodPolicy, sshAuthMountPath, mpiImplementation, and a name whose longest
     worker pod name "<name>-worker-<n-1>" is a DNS-1035 label.
Broken copies of a good manifest must fail, so the checks themselves are shown to bite.
The manifests are read with PyYAML (YAML 1.1, like kubectl's reader), so a string written plain
that reads back as a number or boolean fails the schema's type checks.
"""
import copy
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import jsonschema
import yaml

DNS1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
DNS1123 = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
LABEL_NAME = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)")


def strict(schema):
    """Forbid unknown fields wherever the schema enumerates an object's fields."""
    if isinstance(schema, dict):
        for value in schema.values():
            strict(value)
        if ("properties" in schema and "additionalProperties" not in schema
                and not schema.get("x-kubernetes-preserve-unknown-fields")):
            schema["additionalProperties"] = False
    elif isinstance(schema, list):
        for item in schema:
            strict(item)
    return schema


def load_validator(crd_path):
    crd = yaml.safe_load(Path(crd_path).read_text())
    assert crd["kind"] == "CustomResourceDefinition", crd["kind"]
    assert crd["spec"]["group"] == "kubeflow.org" and crd["spec"]["names"]["kind"] == "MPIJob"
    versions = {v["name"]: v for v in crd["spec"]["versions"]}
    schema = strict(copy.deepcopy(versions["v2beta1"]["schema"]["openAPIV3Schema"]))
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def operator_rules(m):
    """The operator's validation.go, plus the object metadata the API server checks."""
    problems = []
    if m.get("apiVersion") != "kubeflow.org/v2beta1":
        problems.append(f"apiVersion: expected kubeflow.org/v2beta1, got {m.get('apiVersion')!r}")
    if m.get("kind") != "MPIJob":
        problems.append(f"kind: expected MPIJob, got {m.get('kind')!r}")
    meta = m.get("metadata") or {}
    spec = m.get("spec") or {}
    specs = spec.get("mpiReplicaSpecs") or {}
    worker = specs.get("Worker") or {}
    replicas = worker.get("replicas") if isinstance(worker.get("replicas"), int) else 1
    name = meta.get("name", "")
    longest = f"{name}-worker-{max(replicas, 1) - 1}"
    if not isinstance(name, str) or not DNS1035.fullmatch(longest) or len(longest) > 63:
        problems.append(f"metadata.name: {longest!r} is not a DNS-1035 label")
    ns = meta.get("namespace")
    if ns is not None and (not isinstance(ns, str) or not DNS1123.fullmatch(ns) or len(ns) > 63):
        problems.append(f"metadata.namespace: {ns!r} is not a DNS-1123 label")
    for key, value in (meta.get("labels") or {}).items():
        prefix, _, label = key.rpartition("/")
        if not LABEL_NAME.fullmatch(label) or len(label) > 63 or len(prefix) > 253:
            problems.append(f"metadata.labels: bad key {key!r}")
        if not isinstance(value, str) or not LABEL_VALUE.fullmatch(value) or len(value) > 63:
            problems.append(f"metadata.labels.{key}: bad value {value!r}")
    if set(specs) - {"Launcher", "Worker"}:
        problems.append(f"mpiReplicaSpecs: unknown replica types {sorted(set(specs) - {'Launcher', 'Worker'})}")
    for role in ("Launcher", "Worker"):
        rs = specs.get(role)
        if rs is None:
            if role == "Launcher":
                problems.append("mpiReplicaSpecs.Launcher: required")
            continue
        if "replicas" not in rs:
            problems.append(f"mpiReplicaSpecs.{role}.replicas: required")
        if rs.get("restartPolicy") not in ("Never", "OnFailure"):
            problems.append(f"mpiReplicaSpecs.{role}.restartPolicy: {rs.get('restartPolicy')!r}")
        containers = (((rs.get("template") or {}).get("spec") or {}).get("containers")) or []
        if not containers:
            problems.append(f"mpiReplicaSpecs.{role}.template.spec.containers: required")
    if (specs.get("Launcher") or {}).get("replicas", 1) != 1:
        problems.append("mpiReplicaSpecs.Launcher.replicas: must be 1")
    if worker and not (isinstance(worker.get("replicas"), int) and worker["replicas"] >= 1):
        problems.append("mpiReplicaSpecs.Worker.replicas: must be >= 1")
    if not isinstance(spec.get("slotsPerWorker"), int) or spec["slotsPerWorker"] < 0:
        problems.append("slotsPerWorker: required, >= 0")
    run_policy = spec.get("runPolicy") or {}
    if run_policy.get("cleanPodPolicy") not in ("None", "Running", "All"):
        problems.append("runPolicy.cleanPodPolicy: required: None, Running or All")
    for field in ("ttlSecondsAfterFinished", "activeDeadlineSeconds", "backoffLimit"):
        value = run_policy.get(field, 0)
        if isinstance(value, int) and value < 0:
            problems.append(f"runPolicy.{field}: must be >= 0, got {value}")
    if not spec.get("sshAuthMountPath"):
        problems.append("sshAuthMountPath: required")
    if spec.get("mpiImplementation") not in ("OpenMPI", "Intel", "MPICH"):
        problems.append("mpiImplementation: OpenMPI, Intel or MPICH")
    return problems


def problems_of(validator, manifest):
    found = [f"{'.'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
             for e in validator.iter_errors(manifest)]
    return found + operator_rules(manifest)


def plan(dtrain, spec_path, workdir):
    out = subprocess.run([dtrain, "plan", "--json", str(spec_path)], cwd=workdir,
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise AssertionError(f"dtrain plan {spec_path} exited {out.returncode}:\n{out.stderr}")
    return json.loads(out.stdout)


SPECS = {
    # One CPU-only worker: the smallest job.
    "cpu-1node": """
name: cpu-job
site: k8s
image: registry.example.com/team/pi:1.0
command: [/usr/local/bin/pi, --samples, "1000000"]
""",
    # Two workers x 4 GPUs, everything a spec can say that site k8s uses, and hostile strings.
    "gpu-2x4": r"""
name: megatron
site: k8s
image: nvcr.io/nvidia/pytorch:24.05-py3
namespace: ml-team
queue: gpu-queue
nodes: 2
ranks_per_node: 4
gpus_per_rank: 1
cpus_per_rank: 8
walltime: "01:30:00"
framework: torch
affinity: {gpu: none}
modules: [cuda/12]
setup: ["source /opt/conda/bin/activate train", "export X=\"$(date)\""]
env:
  NCCL_DEBUG: WARN
  "ON": "yes"
  QUOTES: "it's \"fine\""
  NEWLINE: "a\nb"
  NUMBER: "007"
  EMPTY: ""
command: [python3, pretrain_gpt.py, --tp, "2", "$(rm -rf /)", "--flag=yes", "~", "1e3"]
""",
    # Characters YAML 1.1 reads as line breaks (U+2028, U+2029, NEL) or refuses (a BOM) in
    # setup lines, an env value and a command word (issue 22, item 31).
    "yaml11-breaks": """
name: breaks
site: k8s
image: registry.example.com/team/pi:1.0
setup: ["echo 'a\u2028b'", "echo 'c\u2029\u0085\ufeffd'"]
env: {NOTE: "x\u2028y"}
command: [/usr/local/bin/pi, "w\u2029z"]
""",
    # A command line (bash -c) and a user run directory, 16 workers.
    "shell-16": """
name: sweep
site: k8s
image: ghcr.io/me/train@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
nodes: 16
ranks_per_node: 2
run_dir: /data/runs/sweep
command: "python3 train.py --lr 0.1 | tee train.log"
""",
}


def mutations(good):
    """(what, broken copy) pairs; each must fail the validation."""
    def mutate(fn):
        m = copy.deepcopy(good)
        fn(m)
        return m

    launcher = lambda m: m["spec"]["mpiReplicaSpecs"]["Launcher"]  # noqa: E731
    worker = lambda m: m["spec"]["mpiReplicaSpecs"]["Worker"]  # noqa: E731
    return [
        ("slotsPerWorker as a string", mutate(lambda m: m["spec"].update(slotsPerWorker="4"))),
        ("replicas as a string", mutate(lambda m: worker(m).update(replicas="2"))),
        ("a command word as a number",
         mutate(lambda m: launcher(m)["template"]["spec"]["containers"][0]["command"].append(2))),
        ("an env value as a boolean",
         mutate(lambda m: launcher(m)["template"]["spec"]["containers"][0]["env"].append(
             {"name": "X", "value": True}))),
        ("an unknown container field",
         mutate(lambda m: worker(m)["template"]["spec"]["containers"][0].update(imag="x"))),
        ("an unknown spec field", mutate(lambda m: m["spec"].update(slotPerWorker=1))),
        ("an invalid GPU quantity",
         mutate(lambda m: worker(m)["template"]["spec"]["containers"][0].update(
             resources={"limits": {"nvidia.com/gpu": "four"}}))),
        ("an unknown mpiImplementation", mutate(lambda m: m["spec"].update(mpiImplementation="LAM"))),
        ("activeDeadlineSeconds as a string",
         mutate(lambda m: m["spec"]["runPolicy"].update(activeDeadlineSeconds="5400"))),
        ("a negative backoffLimit", mutate(lambda m: m["spec"]["runPolicy"].update(backoffLimit=-1))),
        ("no Launcher", mutate(lambda m: m["spec"]["mpiReplicaSpecs"].pop("Launcher"))),
        ("two launchers", mutate(lambda m: launcher(m).update(replicas=2))),
        ("restartPolicy Always", mutate(lambda m: worker(m).update(restartPolicy="Always"))),
        ("no cleanPodPolicy", mutate(lambda m: m["spec"]["runPolicy"].pop("cleanPodPolicy"))),
        ("an upper-case name", mutate(lambda m: m["metadata"].update(name="Megatron"))),
        ("a name too long for its workers",
         mutate(lambda m: m["metadata"].update(name="a" * 56))),
        ("another apiVersion", mutate(lambda m: m.update(apiVersion="kubeflow.org/v1"))),
        ("another kind", mutate(lambda m: m.update(kind="TFJob"))),
    ]


def main():
    dtrain, crd_path, example = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    validator = load_validator(crd_path)
    failures = []
    manifests = {}
    with tempfile.TemporaryDirectory(prefix="dtrain-k8s-test.") as tmp:
        specs = {name: Path(tmp, name + ".yaml") for name in SPECS}
        for name, text in SPECS.items():
            specs[name].write_text(text)
        specs["example " + example.name] = example.resolve()
        for name, path in specs.items():
            out = plan(dtrain, path, tmp)
            manifest = yaml.safe_load(out["script_text"])
            manifests[name] = manifest
            problems = problems_of(validator, manifest)
            status = "ok" if not problems else "INVALID"
            print(f"== {name}: {status} ({len(out['script_text'])} bytes)")
            for p in problems:
                print(f"   {p}")
            if problems:
                failures.append(name)
    # What a user sees in the pods, beyond the schema.
    gpu = manifests["gpu-2x4"]
    worker = gpu["spec"]["mpiReplicaSpecs"]["Worker"]
    launcher = gpu["spec"]["mpiReplicaSpecs"]["Launcher"]
    wc = worker["template"]["spec"]["containers"][0]
    lc = launcher["template"]["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in lc["env"]}
    checks = [
        (gpu["spec"]["slotsPerWorker"] == 4, "slotsPerWorker 4"),
        (worker["replicas"] == 2, "2 workers"),
        (wc["resources"]["limits"] == {"nvidia.com/gpu": 4, "cpu": 32}, "worker limits"),
        ("resources" not in lc, "the launcher asks for no GPU"),
        (gpu["spec"]["runPolicy"]["activeDeadlineSeconds"] == 5400, "walltime 1:30:00"),
        (env.get("ON") == "yes" and env.get("NUMBER") == "007" and env.get("EMPTY") == "",
         "env values stay strings"),
        (env.get("QUOTES") == "it's \"fine\"" and env.get("NEWLINE") == "a\nb", "quotes, newline"),
        (lc["command"][:2] == ["bash", "-c"] and "exec mpirun --allow-run-as-root -n 8 -npernode 4"
         in lc["command"][2] and "'$(rm -rf /)' --flag=yes '~' 1e3" in lc["command"][2],
         "setup then mpirun, user words shell-quoted"),
        (env.get("DTRAIN_HOSTS") == "megatron-worker-[0-1]", "DTRAIN_HOSTS"),
    ]
    cpu = manifests["cpu-1node"]
    cpu_cmd = cpu["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["command"]
    checks.append((cpu_cmd[:6] == ["mpirun", "--allow-run-as-root", "-n", "1", "-npernode", "1"]
                   and cpu_cmd[-3:] == ["/usr/local/bin/pi", "--samples", "1000000"],
                   "CPU job: mpirun words as a list"))
    checks.append(("resources" not in cpu["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
                   ["containers"][0], "CPU job: no limits"))
    breaks = manifests["yaml11-breaks"]["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"][
        "containers"][0]
    checks.append(("echo 'a\u2028b'\necho 'c\u2029\u0085\ufeffd'\n" in breaks["command"][2]
                   and "'w\u2029z'" in breaks["command"][2]
                   and {e["name"]: e["value"] for e in breaks["env"]}.get("NOTE") == "x\u2028y",
                   "U+2028/U+2029/NEL/BOM read back by a YAML 1.1 reader"))
    for ok, what in checks:
        print(f"== check {what}: {'ok' if ok else 'FAILED'}")
        if not ok:
            failures.append(what)
    for what, broken in mutations(gpu):
        problems = problems_of(validator, broken)
        print(f"== broken copy ({what}): {'rejected' if problems else 'ACCEPTED'}"
              + (f": {problems[0]}" if problems else ""))
        if not problems:
            failures.append("broken copy accepted: " + what)
    if failures:
        print("FAIL: " + "; ".join(failures))
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
