//===- GPUPasses.td - passes of the tx GPU lowering --------*- tablegen -*-===//
//
// The passes of the tx-to-nvvm pipeline that upstream does not provide: a
// target check that fails early with a clear message, and the GEMM kernel
// generator (block/thread tiling with shared-memory staging).
//
//===----------------------------------------------------------------------===//

#ifndef TX_CODEGEN_GPUPASSES
#define TX_CODEGEN_GPUPASSES

include "mlir/Pass/PassBase.td"

def TxGPUCheckTarget : Pass<"tx-gpu-check-target", "ModuleOp"> {
  let summary = "Check that the requested NVIDIA target can be produced";
  let description = [{
    Validates the chip, PTX feature and output format of the tx-to-nvvm
    pipeline before any lowering runs, so that a target the CUDA Toolkit or
    LLVM's NVPTX back end cannot produce (a chip CUDA 13 dropped, a PTX
    version too old for the chip, `format=bin` without `ptxas`,
    `format=fatbin` without `fatbinary`) is a diagnostic naming what is
    missing instead of a failure deep inside serialization.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "Target chip: sm_75 .. sm_121, with an `a` suffix where the "
           "architecture has one (sm_90a)">,
    Option<"features", "features", "std::string", /*default=*/"\"\"",
           "PTX feature, `+ptxNN` (empty: the lowest the chip needs)">,
    Option<"format", "format", "std::string", /*default=*/"\"isa\"",
           "Output format: isa (PTX), bin (cubin through ptxas) or fatbin">,
    Option<"toolkit", "toolkit", "std::string", /*default=*/"\"\"",
           "CUDA Toolkit directory the pipeline resolved (empty: none)">,
    Option<"math", "math", "std::string", /*default=*/"\"auto\"",
           "Kernel math functions: auto, libdevice or polynomial">,
    Option<"memory", "memory", "std::string", /*default=*/"\"device\"",
           "Memory model: device or host-mapped">,
  ];
}

def TxGPUHostRegister : Pass<"tx-gpu-host-register", "ModuleOp"> {
  let summary = "Make the host buffers that kernels read device-accessible";
  let description = [{
    The tx calling convention passes host buffers: arguments from the caller,
    weights in memref.globals, activations from memref.alloc (malloc; the
    caller frees returned ones with free()). In every host function that
    launches kernels, each such buffer is registered with the driver
    (`gpu.host_register`: pinned and mapped, so with unified addressing the
    kernels use the host pointer as is) right where it comes into being, and
    unregistered before a `memref.dealloc`. Correct everywhere, but kernels
    then read host memory over the bus: this is `tx-to-nvvm{memory=host-mapped}`
    (and what tx-gpu-device-buffers does for a function whose host code needs
    its buffers on the host); the default keeps them on the device. A caller
    that passes device or managed memory of its own gets it used as is
    (registration of those is skipped by the runtime).
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect"];
}

def TxGPUDeviceBuffers : Pass<"tx-gpu-device-buffers", "ModuleOp"> {
  let summary = "Keep weights and activations in device memory; one stream "
                "per call; CUDA graphs when the config asks";
  let description = [{
    The default memory model of tx-to-nvvm, for every host function that
    launches kernels:

    * **weights** (the `memref.global`s the function reads) live in device
      memory. The module gets `__tx_gpu_load_weights()`, which allocates each
      once (and uploads those with a host initial value; a function called
      first loads them itself), and `__tx_gpu_release_weights()`, which
      frees them (the runner calls it on unload); a call after the release
      is a runtime error saying so. Checkpoint weights (uninitialized,
      tagged `tx.checkpoint`) have no host copy: their global is removed and
      `__tx_gpu_write_weight_<global>(host, byte offset, bytes)` copies into
      the device buffer, so the runner writes each checkpoint tensor of a
      stacked weight into its slice and never holds the merged weight;
    * **activations**: every `memref.alloc` becomes a `gpu.alloc` and every
      `memref.dealloc` a `gpu.dealloc` (stream-ordered); a `memref.copy`
      between device buffers a device-to-device `gpu.memcpy`;
    * **arguments** are copied to device buffers at entry (and back at
      return when a kernel may write them), **results** are copied to new host
      buffers (the caller frees them, as on the CPU);
    * everything is enqueued on one stream (an async token threaded through
      the function), synchronised once, at the return.

    * **collectives** (`tx_rt_<op>_<type>` calls of
      tx-lower-collectives-to-runtime) take device buffers and become
      `tx_rt_<op>_<type>_on_stream` with the call's stream, enqueued between
      its kernels (the nccl backend).

    A function whose host code reads or writes a buffer itself (a
    `memref.load` outside a kernel, a call other than a collective, kernels
    in host control flow) runs host-mapped, with a warning naming the buffer
    and why; one that manages device memory itself (`gpu.alloc`, ...) with a
    remark. `tx-to-nvvm{memory=host-mapped}` is that model as an explicit
    choice, without diagnostics.

    With `cudagraph_mode = full` in the module's `tx.config`, each call is
    bracketed by `txGpuGraphBegin(slot, tokens, captured)` and
    `txGpuGraphEnd(slot)` (the runtime's CUDA-graph entry points; `tokens`
    is the first dynamic size of the arguments, `captured` whether it is one
    of `capture_sizes`, every size when the list is unset): the runtime
    captures the call's launches once per token count and replays them.
  }];
  let options = [
    Option<"testUploadWeightsPerCall", "test-upload-weights-per-call", "bool",
           /*default=*/"false",
           "Testing only, SLOW: upload the weights at every call and free "
           "them at its end (what the counters must show is not done)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def TxGPUCheckLibdevice : Pass<"tx-gpu-check-libdevice", "ModuleOp"> {
  let summary = "Fail when kernels call libdevice and no libdevice is linked";
  let description = [{
    convert-gpu-to-nvvm lowers math functions (rsqrt, erf, tanh, ...) to
    calls of libdevice's `__nv_*` functions. Without libdevice the PTX would
    carry unresolved externs that only fail when ptxas or the driver's JIT
    sees them; this pass makes that a diagnostic at the kernel.
  }];
  let options = [
    Option<"libdevice", "libdevice", "std::string", /*default=*/"\"\"",
           "Path of libdevice.10.bc being linked (empty: none found)">,
  ];
}

def TxGPUApproximateMath : Pass<"tx-gpu-approximate-math"> {
  let summary = "Replace the math functions of kernels by self-contained "
                "code (no libdevice)";
  let description = [{
    The `math=polynomial` mode of tx-to-nvvm, and its `math=auto` mode when
    no libdevice is found; the pipeline runs it on each `gpu.module`, and it
    runs on any op (a CPU function, to test its numerics against libm):

    * transcendental functions (exp, expm1, log, log1p, log2, tanh, erf,
      erfc, sin, cos, atan, atan2, asin, acos, cbrt) become MLIR's polynomial
      approximations (upstream `populateMathPolynomialApproximationPatterns`,
      f16/bf16 computed in f32); the hyperbolic and power functions that have
      no approximation are first expanded into ones that do;
    * what is left (sqrt, rsqrt as 1/sqrt, fma, fabs, floor, ceil, copysign,
      ...) becomes LLVM intrinsics the NVPTX back end implements natively.

    A math function with neither an approximation nor a native lowering is
    an error at the op, naming it, rather than a libdevice call that cannot
    be linked.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::vector::VectorDialect"];
}

def TxGPUTileContractions : Pass<"tx-gpu-tile-contractions", "ModuleOp"> {
  let summary = "Lower linalg contractions on buffers to shared-memory tiled "
                "gpu.launch kernels, on tensor cores where the types allow";
  let description = [{
    Every linalg contraction on buffers with one M, one N and one K dimension
    (and at most one batch dimension) -- linalg.matmul in any of its
    transposed forms, linalg.batch_matmul, or a linalg.generic that is a
    contraction -- becomes one `gpu.launch` whose grid tiles the output into
    `BM x BN` blocks (batch on grid z). The K loop walks `BK`-deep slices:
    the block stages the A and B slices in workgroup (shared) memory with
    cooperative, coalesced, bounds-checked loads, `gpu.barrier`, accumulates
    from shared memory, `gpu.barrier`. Two kernels:

    * **tensor cores** (`mma=auto` on sm_80 and newer): A and B f16 or bf16
      (or f32 with `mma=tf32`, rounded to TF32 when staged), the output f32,
      and a body that is `acc + a * b`. The block has `(BM/WM) x (BN/WN)`
      warps; each holds a `WM x WN` tile of f32 accumulators as mma.sync
      fragments (`m16n8k16`, TF32 `m16n8k8`), loads its 16-bit operand
      fragments with `ldmatrix` from the K-contiguous shared tiles, and
      issues `(WM/16) x (WN/8)` mma.sync per 16-deep step.
    * **SIMT** (every other contraction): `(BM/RM) x (BN/RN)` threads, each
      owning an `RM x RN` register tile of accumulators (interleaved so that
      stores coalesce); the contraction body (mul/add, with any casts) is
      cloned per accumulator, so the element types are whatever the op says.

    With `split-k-blocks=N`, a multiply-accumulate GEMM into f32 whose
    output tiles give fewer than N blocks (decode: a few token rows) spreads
    each tile's K slices over several blocks (grid z = batch x splits,
    computed at run time from the shapes); each block adds its partial sums
    into the output with atomics instead of reading and storing it. The
    sum order then depends on scheduling when more than one split runs.

    Other linalg ops are left for the parallel-loop path.
  }];
  let options = [
    ListOption<"blockTile", "block-tile", "int64_t",
               "SIMT kernel: output tile of one thread block and K slice "
               "depth BM,BN,BK (default 64,64,16)">,
    ListOption<"threadTile", "thread-tile", "int64_t",
               "SIMT kernel: output tile of one thread RM,RN (default 4,4)">,
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "Target chip; tensor cores are used from sm_80">,
    Option<"mma", "mma", "std::string", /*default=*/"\"auto\"",
           "Tensor cores: auto (f16/bf16 GEMMs), tf32 (also f32 GEMMs, with "
           "operands rounded to TF32) or off">,
    ListOption<"mmaBlockTile", "mma-block-tile", "int64_t",
               "Tensor-core kernel: BM,BN,BK (default 64,64,32)">,
    ListOption<"mmaWarpTile", "mma-warp-tile", "int64_t",
               "Tensor-core kernel: output tile of one warp WM,WN "
               "(default 32,32)">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark at every contraction naming the kernel it got "
           "and, for the SIMT kernel, why not tensor cores">,
    Option<"splitKBlocks", "split-k-blocks", "int64_t", /*default=*/"0",
           "Split-K: when a GEMM's output tiles give fewer blocks than "
           "this, spread its K tiles over more blocks that add their "
           "partial sums with f32 atomics (0: off)">,
    Option<"testBreak", "test-break", "std::string", /*default=*/"\"\"",
           "Testing only, WRONG KERNELS: drop-barrier (no barrier between "
           "staging the shared tiles and reading them) or fragment-offset "
           "(tensor-core accumulators stored one column off), to show that "
           "executing the kernels (tx-run --device=emulator) catches such "
           "bugs">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::memref::MemRefDialect",
    "::mlir::nvgpu::NVGPUDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect"
  ];
}

def TxGPUAlignWorkgroupBuffers
    : Pass<"tx-gpu-align-workgroup-buffers", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Align the workgroup (shared-memory) buffers of kernels";
  let description = [{
    Gives every workgroup attribution of the module's `gpu.func`s an
    `llvm.align` of at least `alignment` bytes. The lowering otherwise aligns
    a shared buffer to its element size, while `ldmatrix` and vector accesses
    need 16-byte aligned rows.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"16",
           "Minimum alignment in bytes">,
  ];
}

#endif // TX_CODEGEN_GPUPASSES
