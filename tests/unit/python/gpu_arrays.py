"""Device arrays for dtrain's GPU tests, from whichever library this Python has (torch with CUDA,
else CuPy), and why there are none: the tests skip with that reason where no GPU is usable."""
import shutil
import subprocess


def _torch():
    try:
        import torch
    except ImportError:
        return None, "torch is not installed"
    if not torch.backends.cuda.is_built():
        return None, f"torch {torch.__version__} was built without CUDA"
    if torch.cuda.device_count() == 0:
        return None, "torch sees no CUDA device (CUDA_VISIBLE_DEVICES, driver)"
    return torch, ""


def _cupy():
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
        return cupy, ""
    except Exception as e:  # ImportError, or CUDARuntimeError without a device
        return None, f"CuPy unusable ({type(e).__name__}: {e})"


def gpu_count():
    """Visible GPUs as nvidia-smi lists them (0 without nvidia-smi)."""
    if shutil.which("nvidia-smi") is None:
        return 0
    out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
    return sum(1 for line in out.splitlines() if line.startswith("GPU "))


def array_library():
    """(module, "") for torch or CuPy with a usable GPU, else (None, why not)."""
    torch, why_torch = _torch()
    if torch is not None:
        return torch, ""
    cupy, why_cupy = _cupy()
    if cupy is not None:
        return cupy, ""
    return None, f"no usable GPU: {why_torch}; {why_cupy}"


def device_array(lib, values, dtype, device):
    """`values` (a list) as a 1-D array of `dtype` ("float32", "bfloat16") on cuda:`device`,
    written when returned (the copy's stream synchronized: dtrain waits for no stream)."""
    if lib.__name__ == "torch":
        array = lib.tensor(values, dtype=getattr(lib, dtype), device=f"cuda:{device}")
    else:
        with lib.cuda.Device(device):
            array = lib.asarray(values, dtype=dtype)
    synchronize(lib)
    return array


def host_list(lib, array):
    """The values of a device array, as Python floats."""
    if lib.__name__ == "torch":
        return array.float().cpu().tolist()
    return [float(v) for v in lib.asnumpy(array)]


def synchronize(lib):
    """The stream contract: the caller's writes are done before a dtrain call."""
    if lib.__name__ == "torch":
        lib.cuda.current_stream().synchronize()
    else:
        lib.cuda.get_current_stream().synchronize()
