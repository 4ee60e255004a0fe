# dtrain.Checkpointer in one process: bytes and streamed saves, load_latest's fields, keep,
# paths of any bytes, and the errors as dtrain.Error subclasses with libdtrain's codes.
import io
import os

import numpy as np
import pytest

import dtrain


def test_nothing_to_load_in_a_new_directory(ctx, tmp_path):
    ckpt = dtrain.Checkpointer(ctx, tmp_path / "ckpt")
    assert ckpt.load_latest() is None
    assert ckpt.dir == str(tmp_path / "ckpt")


def test_save_bytes_and_load_them_back(ctx, tmp_path):
    ckpt = dtrain.Checkpointer(ctx, tmp_path / "ckpt")
    weights = np.arange(1000, dtype=np.float32)
    ckpt.save(5, weights, rank_data=b"rng-5")
    ckpt.save(7, b"state seven", rank_data=bytearray(b"rng-7"))
    c = ckpt.load_latest()
    assert isinstance(c, dtrain.Checkpoint)
    assert (c.step, c.data, c.rank_data, c.saved_world) == (7, b"state seven", b"rng-7", 1)
    assert c.path == str(tmp_path / "ckpt" / "ckpt-000000000007") and c.skipped == []
    assert (tmp_path / "ckpt" / "latest").read_text().strip() == "ckpt-000000000007"
    assert "step 7" in repr(c)


def test_keep_prunes_old_checkpoints(ctx, tmp_path):
    ckpt = dtrain.Checkpointer(ctx, str(tmp_path), keep=2)
    for step in range(5):
        ckpt.save(step, bytes([step]))
    assert sorted(p for p in os.listdir(tmp_path) if p.startswith("ckpt-")) == [
        "ckpt-000000000003", "ckpt-000000000004"]


def test_streamed_save_through_a_file_like_writer(ctx, tmp_path):
    ckpt = dtrain.Checkpointer(ctx, tmp_path)
    seen = []

    def write(f):
        assert f.writable() and not f.seekable() and not f.closed
        assert f.write(b"abc") == 3
        f.write(np.array([1, 2], dtype=np.int64))
        f.flush()
        seen.append((f, f.tell()))

    ckpt.save(1, write)
    writer, told = seen[0]
    assert told == 19 and writer.closed
    with pytest.raises(ValueError, match="CheckpointWriter: closed"):
        writer.write(b"late")
    assert ckpt.load_latest().data == b"abc" + np.array([1, 2], dtype=np.int64).tobytes()


def test_an_exception_in_the_writer_fails_the_save(ctx, tmp_path):
    ckpt = dtrain.Checkpointer(ctx, tmp_path)
    ckpt.save(1, b"one")

    def write(f):
        f.write(b"partial")
        raise RuntimeError("disk on fire")

    with pytest.raises(dtrain.Error, match="disk on fire"):
        ckpt.save(2, write)
    c = ckpt.load_latest()
    assert (c.step, c.data) == (1, b"one")


def test_torch_save_streams_into_the_checkpoint(ctx, tmp_path):
    torch = pytest.importorskip("torch")
    model = torch.nn.Linear(3, 2)
    ckpt = dtrain.Checkpointer(ctx, tmp_path)
    ckpt.save(3, lambda f: torch.save(model.state_dict(), f))
    state = torch.load(io.BytesIO(ckpt.load_latest().data))
    assert torch.equal(state["weight"], model.weight.detach())


def test_paths_of_any_bytes(ctx, tmp_path):
    odd = os.fsencode(str(tmp_path)) + b"/\xff-dir"
    ckpt = dtrain.Checkpointer(ctx, odd)
    ckpt.save(1, b"x")
    assert os.fsencode(ckpt.load_latest().path) == odd + b"/ckpt-000000000001"


def test_a_newer_checkpoint_refuses_an_older_save(ctx, tmp_path):
    dtrain.Checkpointer(ctx, tmp_path).save(20, b"new")
    with pytest.raises(dtrain.InvalidError, match="holds a newer checkpoint") as e:
        dtrain.Checkpointer(ctx, tmp_path).save(1, b"old")
    assert e.value.code == "invalid"
    dtrain.Checkpointer(ctx, tmp_path, discard_newer=True).save(1, b"old")
    assert dtrain.Checkpointer(ctx, tmp_path).load_latest().step == 1


def test_corrupt_checkpoints_are_skipped_or_an_error(ctx, tmp_path):
    ckpt = dtrain.Checkpointer(ctx, tmp_path)
    ckpt.save(1, b"good")
    ckpt.save(2, b"soon torn")
    with open(tmp_path / "ckpt-000000000002", "r+b") as f:
        f.truncate(70)
    c = ckpt.load_latest()
    assert c.step == 1 and len(c.skipped) == 1 and "ckpt-000000000002" in c.skipped[0]
    with open(tmp_path / "ckpt-000000000001", "r+b") as f:
        f.truncate(10)
    with pytest.raises(dtrain.SysError) as e:
        ckpt.load_latest()
    assert e.value.code == "system"


def test_bad_arguments(ctx, tmp_path):
    with pytest.raises(dtrain.InvalidError):
        dtrain.Checkpointer(ctx, tmp_path, keep=-1)
    with pytest.raises(dtrain.InvalidError):
        dtrain.Checkpointer(ctx, "")
    with pytest.raises(dtrain.InvalidError):
        dtrain.Checkpointer(ctx, tmp_path).save(-1, b"x")
    with pytest.raises(ValueError, match="Checkpointer.save: data: not contiguous"):
        dtrain.Checkpointer(ctx, tmp_path).save(1, np.zeros(4)[::2])
    with pytest.raises(TypeError):
        dtrain.Checkpointer(ctx, tmp_path).save(1, 42)


# Issue 33: the system cuts a path at a NUL byte ("ck\0pt" made ck/); refused, naming the argument.
def test_paths_with_a_nul_byte_are_refused(ctx, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for path in ["ck\0pt", b"ck\0pt"]:
        with pytest.raises(ValueError, match=r"dtrain: Checkpointer: dir: NUL byte at position 2; "
                                             r"expected a path without NUL bytes, got "):
            dtrain.Checkpointer(ctx, path)
    with pytest.raises(ValueError, match=r"dtrain: Meter: run_dir: NUL byte at position 3; "):
        dtrain.Meter(ctx, run_dir="run\0x")
    assert not os.path.exists("ck") and not os.path.exists("run")
