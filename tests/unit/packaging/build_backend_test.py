"""The pip build backend's own parts, without building anything: the wheel it zips (one copy of
a symlinked library, a RECORD whose hashes match, the interpreter's tag), the metadata pip reads
first, and its refusals. `pip install .` itself is tests/integration/python/pip_install_test.sh."""
import base64
import hashlib
import importlib.util
import os
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
spec = importlib.util.spec_from_file_location(
    "dtrain_build_backend", ROOT / "python/build_backend/dtrain_build_backend.py")
backend = importlib.util.module_from_spec(spec)
spec.loader.exec_module(backend)


def stage_with_library(tmp_path):
    stage = tmp_path / "stage"
    (stage / "dtrain").mkdir(parents=True)
    (stage / "dtrain/__init__.py").write_text("x = 1\n")
    (stage / "dtrain/libdtrain.so.0.1.0").write_bytes(b"\x7fELF library")
    (stage / "dtrain/libdtrain.so.0.1.0").chmod(0o755)
    os.symlink("libdtrain.so.0.1.0", stage / "dtrain/libdtrain.so.0")
    return stage


def test_the_wheel_holds_a_symlinked_library_once_under_the_name_modules_load(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    name = backend.write_wheel(stage_with_library(tmp_path), out, "1.2.3", "cp311-cp311-linux_x86_64")
    assert name == "dtrain-1.2.3-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(out / name) as wheel:
        names = wheel.namelist()
        assert sorted(names) == [
            "dtrain-1.2.3.dist-info/LICENSE", "dtrain-1.2.3.dist-info/METADATA",
            "dtrain-1.2.3.dist-info/RECORD", "dtrain-1.2.3.dist-info/WHEEL",
            "dtrain/__init__.py", "dtrain/libdtrain.so.0"]
        assert wheel.read("dtrain/libdtrain.so.0") == b"\x7fELF library"
        assert (wheel.getinfo("dtrain/libdtrain.so.0").external_attr >> 16) & 0o777 == 0o755
        record = wheel.read("dtrain-1.2.3.dist-info/RECORD").decode().splitlines()
        assert record[-1] == "dtrain-1.2.3.dist-info/RECORD,,"
        for line in record[:-1]:
            path, digest, size = line.split(",")
            data = wheel.read(path)
            want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert digest == "sha256=" + want, line
            assert int(size) == len(data), line
        assert len(record) == len(names)
        assert "Tag: cp311-cp311-linux_x86_64" in wheel.read(
            "dtrain-1.2.3.dist-info/WHEEL").decode().splitlines()


def test_the_tag_is_this_interpreters():
    tag = backend.wheel_tag()
    python = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    assert tag.startswith(f"{python}-{python}-linux_"), tag


def test_the_metadata_pip_asks_for_first_has_the_projects_version(tmp_path):
    version = backend.project_version()
    assert version.count(".") >= 1, version
    name = backend.prepare_metadata_for_build_wheel(str(tmp_path))
    assert name == f"dtrain-{version}.dist-info"
    metadata = (tmp_path / name / "METADATA").read_text().splitlines()
    assert metadata[:3] == ["Metadata-Version: 2.1", "Name: dtrain", f"Version: {version}"]
    assert "Requires-Python: >=3.9" in metadata
    assert backend.get_requires_for_build_wheel() == []


def test_editable_installs_sdists_and_old_or_other_interpreters_are_refused_by_name(monkeypatch):
    with pytest.raises(SystemExit) as e:
        backend.build_editable("/nonexistent")
    assert str(e.value) == ("dtrain: pip install: editable installs (pip install -e) are not "
                            "supported; expected `pip install .`, or PYTHONPATH=<cmake build dir>/python")
    with pytest.raises(SystemExit, match="source distributions are not built"):
        backend.build_sdist("/nonexistent")
    monkeypatch.setattr(sys, "version_info", (3, 8, 18, "final", 0))
    with pytest.raises(SystemExit, match=r"^dtrain: pip install: expected Python 3\.9 or later, got "):
        backend.check_interpreter()


def test_cmake_sees_the_environment_pip_isolated_the_backend_from(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "/tmp/pip-build-env-abc/site")
    monkeypatch.setenv("PYTHONNOUSERSITE", "1")
    env = backend.cmake_environment()
    assert "PYTHONPATH" not in env and "PYTHONNOUSERSITE" not in env
    monkeypatch.setenv("PYTHONPATH", "/home/me/lib")  # the user's own: kept
    assert backend.cmake_environment()["PYTHONPATH"] == "/home/me/lib"
