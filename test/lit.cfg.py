# -*- Python -*-
import os
import shutil
import subprocess
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "TX"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".c"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tx_obj_root, "test")
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%tx_src_root", config.tx_src_root))
config.substitutions.append(("%tx_lib_dir", config.tx_lib_dir))
config.substitutions.append(("%llvm_lib_dir", config.llvm_lib_dir))
config.substitutions.append(("%tx_obj_root", config.tx_obj_root))

# The interpreter running lit (Debian's python3, with python3-numpy).
config.substitutions.append(("%python", sys.executable))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.tx_tools_dir, append_path=True)

tools = ["tx-opt", "mlir-opt", "mlir-runner", "tx-difftest", "tx-capi-test", "tx-rt-check"]
llvm_config.add_tool_substitutions(
    [ToolSubst(t, unresolved="ignore") for t in tools],
    [config.tx_tools_dir, config.llvm_tools_dir])

# Optional tools: tests that need them say `REQUIRES: <feature>` and are
# reported as UNSUPPORTED (visibly skipped) where the tool is missing.
cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
def runs(tool):
    # A tool counts only if it starts (a wrapper script may point at a
    # toolkit that is gone).
    try:
        return subprocess.run([tool, "--version"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False
ptxas = shutil.which("ptxas") or (
    os.path.join(cuda_home, "bin", "ptxas")
    if os.path.exists(os.path.join(cuda_home, "bin", "ptxas")) else None)
if ptxas and not runs(ptxas):
    ptxas = None
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
# The toolkit as tx-to-nvvm resolves it (findCUDAToolkit): of CUDA_HOME,
# the directory above the ptxas on PATH and /usr/local/cuda, the first with
# libdevice, else the first with ptxas.
toolkits = [d for d in [os.environ.get("CUDA_HOME"),
                        os.path.dirname(os.path.dirname(ptxas)) if ptxas else None,
                        "/usr/local/cuda"] if d]
def in_toolkit(*parts):
    return next((d for d in toolkits if os.path.exists(os.path.join(d, *parts))), None)
with_libdevice = in_toolkit("nvvm", "libdevice", "libdevice.10.bc")
toolkit_dir = with_libdevice or in_toolkit("bin", "ptxas")
if with_libdevice or os.path.exists(
        "/usr/lib/nvidia-cuda-toolkit/libdevice/libdevice.10.bc"):
    config.available_features.add("libdevice")
# GPU lowering (issue 6): the CUDA runtime's GPU-free checks, and the
# toolkit's stub libcuda (loads, but cuInit reports it is no driver).
if os.path.exists(os.path.join(config.tx_tools_dir, "tx-cuda-runtime-test")):
    config.available_features.add("cuda-runtime")
if ptxas:
    config.substitutions.append(("%cuda_bin", os.path.dirname(ptxas)))
# nvcc compiles device code through the toolkit's cicc.
if toolkit_dir:
    nvcc = os.path.join(toolkit_dir, "bin", "nvcc")
    if os.path.exists(nvcc) and runs(nvcc) and \
            os.path.exists(os.path.join(toolkit_dir, "nvvm", "bin", "cicc")):
        config.available_features.add("nvcc")
        config.substitutions.append(("%cuda_home", toolkit_dir))
cuda_stub = os.path.join(cuda_home, "lib64", "stubs", "libcuda.so")
if os.path.exists(cuda_stub):
    config.available_features.add("cuda-stub")
    config.substitutions.append(("%cuda_stub", cuda_stub))
if shutil.which("mpirun"):
    config.available_features.add("mpi")
    # Sequence parallelism (issue 5): N ranks of one command, as root too.
    config.substitutions.append(
        ("%mpirun", "mpirun --allow-run-as-root --oversubscribe"))
# Sequence parallelism (issue 5): the collectives runtime and its checker.
config.substitutions.append(("%tx_runtime",
                             os.path.join(config.tx_lib_dir, "libtx_runtime.so")))
if os.path.exists(os.path.join(config.tx_tools_dir, "tx-rt-check")):
    config.available_features.add("tx-runtime")
# CPU benchmark (issue 4): built only where OpenBLAS is installed.
if os.path.exists(os.path.join(config.tx_tools_dir, "tx-bench-cpu")):
    config.available_features.add("tx-bench-cpu")
try:
    import numpy  # noqa: F401
    config.available_features.add("numpy")
except ImportError:
    pass
# The frontend's checks against PyTorch (python3-torch) say `REQUIRES: torch`.
import importlib.util
if importlib.util.find_spec("torch") is not None:
    config.available_features.add("torch")
# The Python package's tests (test/python) run with the Python that runs
# lit (Debian's python3), which has python3-pytest and python3-numpy.
import sys
config.substitutions.append(("%tx_python", sys.executable))
try:
    import pytest  # noqa: F401
    config.available_features.add("pytest")
except ImportError:
    pass
