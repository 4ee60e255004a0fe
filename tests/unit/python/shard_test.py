# dtrain.Shard gives exactly the C++ dtrain::Shard's indices (shard_indices, built from
# shard_indices.cpp, prints them) and works as a torch Sampler: set_epoch, len, iteration.
import os
import subprocess

import pytest

import dtrain

CASES = [
    # n, world, shuffle, seed, tail, epoch, consumed
    (10, 1, True, 0, "pad", 0, 0),
    (10, 3, True, 42, "pad", 0, 0),
    (17, 4, True, 7, "drop", 3, 0),
    (17, 4, True, 7, "exact_once", 1, 0),
    (100, 7, False, 0, "pad", 2, 0),
    (1000, 2, True, 12345, "pad", 5, 100),
    (60000, 2, True, 42, "pad", 1, 0),
    (5, 8, True, 1, "pad", 0, 0),
    (0, 2, True, 1, "drop", 0, 0),
]


def cxx_indices(n, rank, world, shuffle, seed, tail, epoch, consumed):
    out = subprocess.run([os.environ["SHARD_INDICES"], str(n), str(rank), str(world),
                          "1" if shuffle else "0", str(seed), tail, str(epoch), str(consumed)],
                         check=True, capture_output=True, text=True).stdout
    return [int(x) for x in out.split()]


@pytest.mark.parametrize("n,world,shuffle,seed,tail,epoch,consumed", CASES)
def test_indices_equal_the_cxx_shards(n, world, shuffle, seed, tail, epoch, consumed):
    for rank in range(world):
        shard = dtrain.Shard(n, rank=rank, world=world, shuffle=shuffle, seed=seed, tail=tail)
        want = cxx_indices(n, rank, world, shuffle, seed, tail, epoch, consumed)
        assert shard.indices(epoch, consumed) == want
        shard.set_epoch(epoch, consumed)
        assert list(shard) == want and len(shard) == len(want)


def test_known_values_of_libdtrains_shuffle():
    # Pinned so a change of libdtrain's generator shows here as well as in its own tests.
    assert dtrain.Shard(10, rank=0, world=1, seed=3).indices(0) == [4, 8, 9, 6, 2, 3, 7, 1, 5, 0]
    assert dtrain.Shard(10, rank=1, world=2, shuffle=False).indices(0) == [1, 3, 5, 7, 9]


def test_shard_from_a_context(ctx):
    shard = dtrain.Shard(7, ctx, shuffle=False)
    assert (shard.rank, shard.world) == (0, 1)
    assert list(shard) == list(range(7))
    assert "rank 0 of 1" in repr(shard)


def test_sampler_protocol_follows_the_epoch():
    shard = dtrain.Shard(50, rank=1, world=2, seed=9)
    first = list(shard)
    shard.set_epoch(1)
    second = list(shard)
    assert len(shard) == 25 and sorted(first) != first and first != second
    shard.set_epoch(1, consumed=20)
    assert list(shard) == second[20:] and len(shard) == 5


def test_properties_and_options():
    shard = dtrain.Shard(10, rank=1, world=3, shuffle=False, seed=5, tail=dtrain.ShardTail.DROP)
    assert (shard.num_samples, shard.rank, shard.world) == (10, 1, 3)
    assert (shard.shuffle, shard.seed, shard.tail) == (False, 5, dtrain.ShardTail.DROP)
    assert shard.size() == 3 and shard.total_size() == 9
    assert shard.at(0, 2) == shard.indices(0)[2]
    files = [f"f{i}" for i in range(10)]
    assert shard.select(files, 0) == [files[i] for i in shard.indices(0)]


def test_a_torch_dataloader_takes_it_as_its_sampler():
    torch = pytest.importorskip("torch")
    data = torch.utils.data.TensorDataset(torch.arange(20))
    shard = dtrain.Shard(20, rank=0, world=2, seed=1)
    loader = torch.utils.data.DataLoader(data, batch_size=5, sampler=shard)
    got = [int(x) for (batch,) in loader for x in batch]
    assert got == shard.indices(0) and len(loader) == 2


def test_errors():
    with pytest.raises(dtrain.InvalidError, match=r"dtrain: shard: rank; expected 0 to 1, got 2"):
        dtrain.Shard(10, rank=2, world=2)
    with pytest.raises(ValueError, match='tail; expected pad, drop or exact_once, got "last"'):
        dtrain.Shard(10, rank=0, world=1, tail="last")
    with pytest.raises(ValueError, match="expected a ctx, or rank and world"):
        dtrain.Shard(10)
    shard = dtrain.Shard(10, rank=0, world=2)
    with pytest.raises(dtrain.InvalidError,
                       match="consumed; expected an integer from 0 to 5, got 6"):
        shard.set_epoch(0, consumed=6)
    with pytest.raises(dtrain.InvalidError):
        shard.indices(0, 6)
    with pytest.raises(dtrain.InvalidError):
        shard.at(0, 5)
    with pytest.raises(dtrain.InvalidError, match="10"):
        shard.select(["a"], 0)


# Issue 33: a negative consumed made len() wrong; negative or non-integer arguments met pybind11's
# own "incompatible function arguments" message. Each is named instead.
def test_bad_numbers_are_named():
    shard = dtrain.Shard(10, rank=0, world=2)
    with pytest.raises(dtrain.InvalidError, match=r"dtrain: shard: consumed; expected an integer "
                                                  r"from 0 to 5, got -5"):
        shard.set_epoch(0, consumed=-5)
    with pytest.raises(dtrain.InvalidError, match=r"dtrain: shard: epoch; expected an integer "
                                                  r"from 0 to 18446744073709551615, got -1"):
        shard.set_epoch(-1)
    with pytest.raises(dtrain.InvalidError, match=r"consumed; expected an integer from 0 to 5, "
                                                  r"got 1.5"):
        shard.set_epoch(0, consumed=1.5)
    assert len(shard) == 5
    for call, name, got in [(lambda: dtrain.Shard(-1, rank=0, world=1), "num_samples", "-1"),
                            (lambda: dtrain.Shard(10, rank=0, world=1, seed=-2), "seed", "-2"),
                            (lambda: dtrain.Shard("10", rank=0, world=1), "num_samples", "'10'"),
                            (lambda: shard.indices(-1), "epoch", "-1"),
                            (lambda: shard.at(0, -1), "i", "-1"),
                            (lambda: shard.select([str(i) for i in range(10)], 0, -3),
                             "consumed", "-3")]:
        with pytest.raises(dtrain.InvalidError, match=r"dtrain: shard: %s; expected an integer "
                                                      r"from 0 to 18446744073709551615, got %s"
                                                      % (name, got)):
            call()


def test_more_indices_than_memory_can_hold_are_named():
    huge = dtrain.Shard(2**63, rank=0, world=1, shuffle=False)
    with pytest.raises(dtrain.InvalidError, match=r"dtrain: shard: indices: 9223372036854775808 "
                                                  r"samples from position 0; expected at most "
                                                  r"[0-9]+ \(what one list can hold\)"):
        huge.indices(0)
