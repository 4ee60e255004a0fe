"""dtrain for Python: libdtrain's records, checkpoints, shards, preemption and collectives.

    import dtrain
    ctx = dtrain.init()                       # rank, size, local_rank, ... as libdtrain found them
    ctx.allreduce(grads, "avg")               # any buffer: NumPy array, tensor.numpy(), bytearray
    meter = dtrain.Meter(ctx)                 # RUN_DIR/rank-NNNNN.jsonl, as from C++
    with meter.step(batch_size):
        train_one_step()

Everything is a binding over libdtrain (the compiled module dtrain._dtrain); docs/python.md.
"""

import atexit as _atexit
import sys as _sys
import threading as _threading
import operator as _operator
from contextlib import contextmanager as _contextmanager

from ._dtrain import (  # noqa: F401
    EXIT_REQUEUE,
    Checkpoint,
    Checkpointer,
    CheckpointWriter,
    Comm,
    CommError,
    Context,
    DType,
    Error,
    FusedAllreduce,
    InternalError,
    InvalidError,
    Preemption,
    ReduceOp,
    ShardTail,
    SysError,
    TimeoutError,
    Work,
    __version__,
    signal_from_name,
)
from . import _dtrain

__all__ = [
    "init", "Context", "Comm", "Work", "FusedAllreduce", "DType", "ReduceOp", "Meter",
    "Checkpointer", "Checkpoint", "CheckpointWriter", "Shard", "ShardTail", "Preemption",
    "EXIT_REQUEUE", "signal_from_name", "Error", "InvalidError", "CommError", "SysError",
    "InternalError", "TimeoutError",
]

_exit_status = None  # the main thread's last sys.exit() argument
_exit_hooks = False  # _leave_if_failed registered, sys.exit wrapped


def _live_context():
    """The process's live Context, or None (held by Python, a process group or its subgroups)."""
    return _dtrain._live_context()


def init():
    """Bootstraps this process (dtrain::init()) and returns its Context.

    While the process's Context lives (one init() returned, or that init_process_group(backend=
    "dtrain") made, held by anything: Python, a process group or its subgroups), init() returns
    it: MPI cannot be initialized twice in a process, and two Contexts would be two sequences of
    collectives (docs/torch.md, "One Context per process").
    """
    ctx = _dtrain._init()
    _install_exit_hooks()
    return ctx


def _made_by(group):
    """For dtrain.torch: `group` (a process group that made the process's Context) holds it."""
    _dtrain._note_context(group.context)
    # A rank whose script raised leaves the job at exit (_leave_if_failed) rather than waiting in
    # the group's Context's finalize for ranks still in their training loop.
    _install_exit_hooks()


def _install_exit_hooks():
    """Lets a rank that ends with an error leave the job instead of finalizing.

    Finalizing is collective (MPI_Finalize and the frees before it wait for every rank), so a rank
    whose script raised, or called sys.exit() non-zero, would wait at interpreter exit for ranks
    still in their training loop, while they wait for it until DTRAIN_TIMEOUT. C++ sees the
    unwinding (std::uncaught_exceptions), but Python prints the traceback and clears the exception
    before it destroys the Context, and keeps no exit status: the uncaught exception is left in
    sys.last_value, and sys.exit's argument is noted here (SystemExit raised directly, or by
    exit()/quit(), is not seen). The Context's abort() then tells the other ranks and makes its
    destruction free nothing collectively.
    """
    global _exit_hooks
    if _exit_hooks:
        return
    _exit_hooks = True
    exit_as_python_does = _sys.exit

    def exit_noting_status(status=None):
        global _exit_status
        # SystemExit ends only the thread that raises it, unless it is the main thread.
        if _threading.current_thread() is _threading.main_thread():
            _exit_status = status
        exit_as_python_does(status)

    exit_noting_status.__doc__ = exit_as_python_does.__doc__
    _sys.exit = exit_noting_status
    # atexit runs before the interpreter destroys the modules' objects, the Context among them.
    _atexit.register(_leave_if_failed)


def _leave_if_failed():
    ctx = _live_context()
    if ctx is None or ctx.size == 1:
        return  # nothing to finalize, or nobody to wait for
    error = getattr(_sys, "last_value", None)
    if error is not None and not hasattr(_sys, "ps1"):  # an interactive session survives errors
        ctx.abort(f"an uncaught {type(error).__name__} (the traceback above)")
    # EXIT_REQUEUE is a stop every rank agreed on (Preemption.should_stop): they finalize together.
    elif _exit_status not in (None, 0, EXIT_REQUEUE):
        ctx.abort(f"sys.exit({_exit_status!r})")


class Meter(_dtrain._Meter):
    """Per-rank step records in RUN_DIR/rank-NNNNN.jsonl (docs/metrics.md).

    Meter(ctx, run_dir=None): run_dir None means DTRAIN_RUN_DIR; without either the meter is
    disabled and drops records, so a script runs unchanged outside dtrain.

    next_step is the number the next step gets when none is given: one past the last recorded;
    before the first record, one past the step of the checkpoint that a Checkpointer of the same
    Context loaded (load_latest()), else 0. So a restarted attempt continues the numbering.
    """

    @_contextmanager
    def step(self, samples, step=None):
        """Times the body as one training step of `samples` and records it (start_step() and
        end_step()); only collectives run inside the body count in its comm_seconds.

        The step number is `step`, or next_step. A body that raises records nothing.
        """
        number = self.next_step if step is None else step
        self.start_step()
        yield number
        self.end_step(samples, number)


def _index(value, name, high):
    """`value` as an int from 0 to `high`, or InvalidError naming `name` (as libdtrain's Shard)."""
    try:
        number = _operator.index(value)
    except TypeError:
        number = None
    if number is None or isinstance(value, bool) or not 0 <= number <= high:
        raise InvalidError(
            f"dtrain: shard: {name}; expected an integer from 0 to {high}, got {value!r}")
    return number


class Shard(_dtrain._Shard):
    """This rank's samples of a data set, usable as a torch.utils.data.Sampler.

    Shard(num_samples, ctx, shuffle=True, seed=0, tail="pad") takes rank and world from the
    Context; Shard(num_samples, rank=r, world=w, ...) gives them directly. The indices are
    libdtrain's: the same as a C++ dtrain::Shard with the same arguments.

    As a sampler it yields the indices of the epoch set by set_epoch(epoch, consumed=0) (from
    position `consumed` on, for a run resumed mid-epoch), and len() is how many it yields.
    """

    def __init__(self, num_samples, ctx=None, *, rank=None, world=None, shuffle=True, seed=0,
                 tail="pad"):
        """This rank's share of `num_samples` samples: rank and world from `ctx`, or given.

        `shuffle` permutes each epoch by (`seed`, epoch); `tail` ("pad", "drop", "exact_once" or
        a ShardTail) says what happens to the samples that do not divide evenly.
        """
        if ctx is not None:
            if rank is not None or world is not None:
                raise ValueError("dtrain: Shard: expected a ctx or rank and world, got both")
            rank, world = ctx.rank, ctx.size
        elif rank is None or world is None:
            raise ValueError("dtrain: Shard: expected a ctx, or rank and world")
        super().__init__(num_samples, rank, world, shuffle, seed, tail)
        self.epoch = 0
        self.consumed = 0

    def set_epoch(self, epoch, consumed=0):
        """Makes iteration yield `epoch`'s indices from position `consumed` on (a resumed run)."""
        # Checked here, not at iteration: a negative consumed made len() wrong, a negative
        # epoch failed later in indices().
        epoch = _index(epoch, "epoch", 2**64 - 1)
        self.consumed = _index(consumed, "consumed", self.size())
        self.epoch = epoch

    def __len__(self):
        return self.size() - self.consumed

    def __iter__(self):
        return iter(self.indices(self.epoch, self.consumed))

    def __repr__(self):
        return (f"<dtrain.Shard rank {self.rank} of {self.world}: {self.size()} of "
                f"{self.num_samples} samples, epoch {self.epoch}>")
