# dtrain.Preemption in one process: a signal sent to this process makes should_stop() true;
# close() (or leaving the with block) restores the previous handlers.
import os
import signal

import pytest

import dtrain
from conftest import run_fresh


def test_default_signals_and_a_signal_received(ctx):
    with dtrain.Preemption(ctx) as p:
        assert p.signals == [signal.SIGUSR1, signal.SIGTERM]
        assert not p.requested() and not p.should_stop() and p.signal_received == 0
        os.kill(os.getpid(), signal.SIGUSR1)
        assert p.requested() and p.should_stop() and p.signal_received == signal.SIGUSR1
    assert p.closed


def test_explicit_signals_by_number_or_name(ctx):
    with dtrain.Preemption(ctx, [signal.SIGUSR2, "HUP"]) as p:
        assert p.signals == [signal.SIGUSR2, signal.SIGHUP]
        os.kill(os.getpid(), signal.SIGHUP)
        assert p.should_stop()


def test_one_signal_alone_by_name_or_number(ctx):
    # Issue 45 item 8: "USR1" was read letter by letter ("U", "S", ...).
    with dtrain.Preemption(ctx, "USR1") as p:
        assert p.signals == [signal.SIGUSR1]
    with dtrain.Preemption(ctx, signal.SIGUSR2) as p:
        assert p.signals == [signal.SIGUSR2]
    with pytest.raises(dtrain.InvalidError, match=r"dtrain: Preemption: signals; expected a "
                                                  r"signal name or number, or a list of them, "
                                                  r"got 1.5"):
        dtrain.Preemption(ctx, 1.5)


def test_signals_from_the_environment():
    got = run_fresh("import dtrain; print(dtrain.Preemption(dtrain.init()).signals)",
                    DTRAIN_PREEMPT_SIGNALS="USR2,TERM")
    assert got == str([signal.SIGUSR2.value, signal.SIGTERM.value])


def test_close_restores_the_previous_handler(ctx):
    got = []
    previous = signal.signal(signal.SIGUSR2, lambda *_: got.append(1))
    try:
        p = dtrain.Preemption(ctx, [signal.SIGUSR2])
        p.close()
        os.kill(os.getpid(), signal.SIGUSR2)
        assert got == [1]
    finally:
        signal.signal(signal.SIGUSR2, previous)


def test_errors(ctx):
    with pytest.raises(dtrain.InvalidError, match="BOGUS"):
        dtrain.Preemption(ctx, ["BOGUS"])
    # Issue 33: was pybind11's "Unable to cast Python instance to C++ type".
    for bad, got in [(1.5, "1.5"), (2**40, str(2**40)), (None, "None"), (True, "True")]:
        with pytest.raises(dtrain.InvalidError, match=r"dtrain: Preemption: signals\[1\]; "
                                                      r"expected a signal name \(\"SIGTERM\", "
                                                      r"\"USR1\"\) or number, got " + got):
            dtrain.Preemption(ctx, ["SIGUSR1", bad])
    with dtrain.Preemption(ctx):
        with pytest.raises(dtrain.InvalidError):
            dtrain.Preemption(ctx)  # one at a time
    p = dtrain.Preemption(ctx)
    p.close()
    with pytest.raises(ValueError, match="Preemption: closed"):
        p.should_stop()
    assert dtrain.signal_from_name("SIGTERM") == signal.SIGTERM
    assert dtrain.EXIT_REQUEUE == 85
