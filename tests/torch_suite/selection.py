"""Which of torch 1.13's distributed tests run_torch_suite.py runs, and which of torch's
backend-name gates it widens to "dtrain": tables only, no torch (run_torch_suite.py reads them
without importing torch's suite; torch_suite.py applies them)."""

import ast
import re

# --- the families of issue 43: collectives, point-to-point, coalesced ops, groups ---------------
# Test names (methods of DistributedTest._DistTestBase) by family. CUDA, multi-GPU and NCCL tests
# are left out: CPU only, as the backend's CPU path is what is compared with gloo's.
FAMILIES = [
    ("all_reduce", r"^test_all_reduce_(?!coalesced)"),
    ("all_reduce_coalesced", r"^test_all_reduce_coalesced_"),
    ("sparse all_reduce", r"^test_sparse_all_reduce_"),
    ("broadcast", r"^test_broadcast(_group|_full_group)?$"),
    ("reduce", r"^test_reduce_"),
    ("all_gather", r"^test_all_gather(?!_coalesced|_object)"),
    ("all_gather_coalesced", r"^test_all_gather_coalesced"),
    ("gather", r"^test_gather(?!_object)"),
    ("scatter", r"^test_scatter(?!_object)"),
    ("all_to_all", r"^test_all_to_all"),
    ("barrier", r"^test_barrier"),
    ("monitored_barrier", r"^test_monitored_barrier"),
    ("send/recv", r"^test_send_recv"),
    ("isend/irecv", r"^test_i(send|recv)"),
    ("batch_isend_irecv", r"^test_batch_isend_irecv"),
    ("objects", r"^test_(all_gather_object|gather_object|broadcast_object_list"
                r"|scatter_object_list)"),
    ("groups", r"^test_(get_rank|get_backend|destroy_group|destroy_full_group|get_rank_size_group"
               r"|get_rank_size_full_group)$"),
]
EXCLUDED = re.compile(r"cuda|multigpu|nccl")


def family_of(name):
    if EXCLUDED.search(name):
        return None
    for family, pattern in FAMILIES:
        if re.search(pattern, name):
            return family
    return None


# --- torch's backend-name gates, widened to "dtrain" ---------------------------------------------
# torch's suite decides at import which tests a backend runs: sandcastle_skip_if(BACKEND != "gloo",
# reason) and require_backend({...}) (through sandcastle_skip) mark the function skipped. These
# are name checks, not capability checks, so for "dtrain" the gates that admit gloo are widened:
# the test runs on dtrain as it does on gloo. The two decorators are replaced, before torch's suite
# is imported, by ones that record every gate that holds and mark the test skipped only for gates
# that are not widened (order does not matter: one gate not widened is enough to skip).
WIDENED_REASONS = {
    "Only Gloo backend support sparse all reduce",      # test_sparse_all_reduce_sum
    "GLOO Batch Send Recv CPU",                          # test_batch_isend_irecv_gloo(_tags)
    "Only gloo backend supports timeouts",               # test_barrier_timeout_*
    # Named for MPI, where torch 1.13 has CPU all_to_all; gloo skips them, so they show what
    # dtrain's all_to_all (any splits) does under torch's own checks, with no baseline to compare.
    "Only MPI supports CPU all_to_all_single",           # test_all_to_all_single_*
    "Only MPI supports all_to_all",                      # test_all_to_all, _complex, _group, ...
}
# require_backend(backends) skips with this reason when BACKEND is not in backends: widened when
# gloo is one of them ({"gloo"}: all_reduce_coalesced, scatter_object_list, monitored_barrier;
# DistTestCases.backend_feature["gpu"] = {"nccl", "gloo"}: the object collectives).
REQUIRE_BACKEND = re.compile(r"^Test requires backend to be one of (\{.*\})$")

# Tests whose gate is not widened because what they test is gloo's own, not a name check; each
# stays skipped on dtrain with this reason (docs/torch.md, "torch's own test suite").
# distributed_c10d.monitored_barrier itself refuses every backend but gloo ("monitored_barrier is
# only implemented for GLOO backend"): torch's library checks the name, not the test.
_MONITORED = "torch's monitored_barrier is gloo's only (distributed_c10d.monitored_barrier)"
GLOO_OWN = {
    "test_monitored_barrier_gloo": _MONITORED,
    "test_monitored_barrier_gloo_subgroup": _MONITORED,
    "test_monitored_barrier_gloo_rank_0_timeout": _MONITORED,
    "test_monitored_barrier_failure_order": _MONITORED,
    "test_monitored_barrier_wait_all_ranks": _MONITORED,
}


def widened(reason, backend):
    if backend != "dtrain":
        return False
    if reason in WIDENED_REASONS:
        return True
    m = REQUIRE_BACKEND.match(reason)
    if m:
        try:
            return "gloo" in ast.literal_eval(m.group(1))
        except (ValueError, SyntaxError):
            return False
    return False
