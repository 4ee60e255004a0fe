"""init_process_group(backend="dtrain") -> all_reduce -> destroy_process_group(), ITERATIONS times
in a row (issue 45 item 1: destroy_process_group deadlocked, the group's teardown joining its
completion thread while holding the GIL, which that thread needed to drop the last reference to a
tensor or to run a Python callback; before the fix every run of this test hung: sync after 1 to 80
loops, async at the first). Launched torchrun-style (env://, tcp_launch.sh) on N ranks.
  sync   a blocking all_reduce of a tensor local to a function (its last reference then lies with
         the group's threads), then destroy_process_group().
  async  destroy_process_group() with async work outstanding: an all_reduce whose Work is kept
         (with a Python callback on its future) and one whose Work and tensor are dropped at once.
         After destroy the kept Work is complete, its tensor and the callback's value exact.
Each rank runs the loop in a child process and watches it: no progress for STALL seconds is a
hang, reported as `rank R: HUNG: ... at iteration I of N, in STAGE` after the child's Python
stacks (faulthandler), and the rank exits 1 instead of leaving ctest to its TIMEOUT.
Between iterations the ranks meet in a FileStore once every one has destroyed its group: env://
reuses MASTER_PORT, and a rank that ran ahead would otherwise reach the previous iteration's
TCPStore (rank 0's, closed by its destroy_process_group) instead of the next one. Then the ranks
other than 0 wait until rank 0's new TCPStore listens: torch's client retries a refused connection
only after a second (measured: 0.6 s per loop on average, 0.03 s with the wait; 200 loops on 2 or 3
ranks take 4 to 7 s on the 2-core VM, up to 20 s under a load of 15).
    torch_destroy_loop.py ITERATIONS sync|async [STALL_S]"""
import ctypes
import os
import selectors
import signal
import socket
import subprocess
import sys
import time

STARTUP_S = 120  # importing torch on a loaded 2-core machine, before the first progress line


def watch(iterations, mode, stall):
    """The rank's process: runs the loop in a child, relays its output, fails a stalled child."""
    rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    # One launch's ranks share the launcher (their parent) and MASTER_PORT; concurrent launches
    # have different ones.
    store = f"/tmp/dtrain-torch-destroy-loop-{os.environ['MASTER_PORT']}-{os.getppid()}"
    child = subprocess.Popen([sys.executable, __file__, "--loop", str(iterations), mode, store],
                             stdout=subprocess.PIPE, text=True, bufsize=1,
                             preexec_fn=die_with_parent)
    where = "starting (importing torch)"
    bound = STARTUP_S
    deadline = time.monotonic() + bound
    with selectors.DefaultSelector() as sel:
        sel.register(child.stdout, selectors.EVENT_READ)
        while True:
            if not sel.select(timeout=max(0.0, deadline - time.monotonic())):
                # Python's stacks of every thread of the child (faulthandler, registered there on
                # SIGUSR1, writes them without the GIL), then the verdict.
                child.send_signal(signal.SIGUSR1)
                time.sleep(2)
                child.kill()
                child.wait()
                print(f"rank {rank}: HUNG: no progress for {bound} s at {where} "
                      f"({mode}, {size} ranks)", flush=True)
                cleanup(store)
                return 1
            line = child.stdout.readline()
            if not line:
                break
            if line.startswith("@ "):
                where = line[2:].strip()
                bound = stall
                deadline = time.monotonic() + bound
            else:
                print(line, end="", flush=True)
    status = child.wait()
    cleanup(store)
    if status != 0:
        print(f"rank {rank}: the loop exited with status {status} at {where}", flush=True)
        return 1
    return 0


def die_with_parent():
    # In the child, before exec: SIGKILL when this rank's process dies (tcp_launch.sh kills the
    # others 10 s after a rank failed), so that a hung loop does not outlive the test.
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def cleanup(store):
    try:
        os.unlink(store)  # FileStore leaves it when a rank was killed
    except FileNotFoundError:
        pass


def loop(iterations, mode, store_path):
    """The child: the loop itself, reporting each stage on stdout for watch()."""
    import faulthandler
    from datetime import timedelta

    import torch
    import torch.distributed as dist

    import dtrain.torch  # noqa: F401

    faulthandler.register(signal.SIGUSR1, all_threads=True)
    rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    meet = dist.FileStore(store_path, size)
    want = float(sum(range(1, size + 1)))  # every rank contributes rank + 1

    def stage(i, what):
        print(f"@ iteration {i + 1} of {iterations}, in {what}", flush=True)

    def reduced_sum():
        # The tensor is this function's: once it returns, the group's threads may hold the last
        # reference to it (as a training step's gradients).
        t = torch.full((1 << 12,), float(rank + 1))
        dist.all_reduce(t)
        return t[0].item(), t[-1].item()

    def outstanding(seen):
        kept = torch.full((1 << 12,), float(rank + 1))
        work = dist.all_reduce(kept, async_op=True)
        work.get_future().then(lambda f: seen.append(f.value()[0][0].item()))
        dropped = torch.full((1 << 16,), float(rank + 1))
        dist.all_reduce(dropped, async_op=True)  # Work and tensor dropped at once
        return work

    def until_rank0_listens():
        address = (os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]))
        while True:
            try:
                socket.create_connection(address, timeout=1).close()
                return
            except OSError:
                time.sleep(0.005)

    start = time.monotonic()
    for i in range(iterations):
        stage(i, "init_process_group")
        if rank > 0:
            until_rank0_listens()
        dist.init_process_group(backend="dtrain", timeout=timedelta(seconds=60))
        stage(i, "all_reduce")
        seen = []
        if mode == "sync":
            got = reduced_sum()
            assert got == (want, want), f"iteration {i + 1}: all_reduce gave {got}; expected {want}"
            work = None
        else:
            work = outstanding(seen)
        stage(i, "destroy_process_group")
        dist.destroy_process_group()
        if work is not None:
            # destroy_process_group waited for the outstanding collectives: done and exact.
            assert work.is_completed(), f"iteration {i + 1}: Work not completed after destroy"
            got = work.result()[0]
            assert torch.equal(got, torch.full((1 << 12,), want)), \
                f"iteration {i + 1}: kept all_reduce gave {got[:4]}; expected {want}"
            assert seen == [want], f"iteration {i + 1}: future callback saw {seen}; expected {want}"
        stage(i, "the meeting after destroy_process_group")
        if meet.add(f"destroyed/{i}", 1) == size:
            meet.set(f"go/{i}", "1")
        meet.wait([f"go/{i}"], timedelta(seconds=60))
    took = time.monotonic() - start
    print(f"rank {rank}: {iterations} loops of init_process_group, all_reduce, "
          f"destroy_process_group ({mode}, {size} ranks) in {took:.1f} s: every all_reduce "
          f"exact, every destroy_process_group returned", flush=True)
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "--loop":
        sys.exit(loop(int(sys.argv[2]), sys.argv[3], sys.argv[4]))
    sys.exit(watch(int(sys.argv[1]), sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 30))
