# -*- Python -*-
import os
import shutil

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "TX"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tx_obj_root, "test")
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%tx_src_root", config.tx_src_root))
config.substitutions.append(("%tx_lib_dir", config.tx_lib_dir))
config.substitutions.append(("%llvm_lib_dir", config.llvm_lib_dir))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.tx_tools_dir, append_path=True)

tools = ["tx-opt", "mlir-opt", "mlir-runner"]
llvm_config.add_tool_substitutions(
    [ToolSubst(t, unresolved="ignore") for t in tools],
    [config.tx_tools_dir, config.llvm_tools_dir])

# Optional tools: tests that need them say `REQUIRES: <feature>` and are
# reported as UNSUPPORTED (visibly skipped) where the tool is missing.
cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
ptxas = shutil.which("ptxas") or (
    os.path.join(cuda_home, "bin", "ptxas")
    if os.path.exists(os.path.join(cuda_home, "bin", "ptxas")) else None)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
if shutil.which("mpirun"):
    config.available_features.add("mpi")
try:
    import numpy  # noqa: F401
    config.available_features.add("numpy")
except ImportError:
    pass
