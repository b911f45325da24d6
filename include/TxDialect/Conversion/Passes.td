//===- Passes.td - tx to linalg and the CPU pipeline -------*- tablegen -*-===//

#ifndef TX_CONVERSION_PASSES_TD
#define TX_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def TxToLinalg : Pass<"tx-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lower tx compute ops to linalg/memref/arith/math on buffers";
  let description = [{
    Every tx compute op becomes linalg (matmul, generic, fill, copy), memref
    (alloc, views, globals) and arith/math on the same buffers:

    * `tx.layer @s` becomes `memref.global @__tx_w_s : memref<OUTxINxT>` (and
      `@__tx_b_s : memref<OUTxT>` with a bias), `tx.param @p` becomes
      `@__tx_p_p`; both uninitialized, carrying `tx.checkpoint` (and
      `tx.stacking`) so a runner can bind checkpoint tensors to them.
    * `tx.linear` is `linalg.matmul` with a transposed-B indexing map over the
      input with its leading dimensions collapsed (a `linalg.generic`
      contraction when they cannot be collapsed).
    * norms reduce in f32; attention uses a max-subtracted softmax; views are
      memref views honouring strides; fresh results are `memref.alloc`.
    * guards become constants; collectives over a group of one become copies.

    * dynamic sizes that must agree (elementwise operands, rotary tokens
      and cos/sin rows, attention key/value tokens, a norm's weight, a
      linear's input features, a slice's extent, a view's element count,
      static result sizes) are compared at run time, before the op reads
      anything: a mismatch calls `tx_rt_check_failed(check, lhs, rhs)`, and
      the module's `tx.runtime_checks` table holds each check's message
      (op, location, both operands and dimensions).

    `tx.container_*`, `tx.opaque_call` and (without `allow-collectives`)
    collectives over more than one rank cannot be lowered: the pass fails
    with an error naming the op.
  }];
  let options = [
    Option<"allowCollectives", "allow-collectives", "bool", "false",
           "Leave collectives over more than one rank (and tx.rank) for a "
           "later lowering instead of failing">,
    Option<"runtimeChecks", "runtime-checks", "bool", "true",
           "Check at run time that the dynamic sizes an op needs to agree "
           "do (a call of tx_rt_check_failed on a mismatch; see "
           "TxToLinalg.h). Off: no checks, and a host without that function "
           "can run the code">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def TxCpuTileAndVectorize : Pass<"tx-cpu-tile-and-vectorize", "::mlir::ModuleOp"> {
  let summary = "Tile and vectorise linalg GEMMs and static linalg ops for CPU";
  let description = [{
    Blocks every `linalg.matmul` for the cache by `gemm-cache-tile` (N, K):
    loops over weight blocks of at most N x K (the largest that divide the
    weight, so every block is static), with every token row passing over a
    block while it is in cache; inside them, tiles it by `gemm-tile`
    (M, N, K) with scf.for loops, peels the token loop so the main tiles are
    static, then vectorises every linalg op with a static shape (GEMM tiles
    become `vector.contract`, lowered to outer products / FMAs). Linalg ops
    with dynamic
    shapes stay for `convert-linalg-to-loops`. Implemented as a
    transform-dialect script generated per class of GEMM shapes.
  }];
  let options = [
    ListOption<"gemmTile", "gemm-tile", "int64_t",
               "GEMM register tile sizes M,N,K (default 8,8,8)">,
    ListOption<"gemmCacheTile", "gemm-cache-tile", "int64_t",
               "GEMM cache block of the weight N,K (default 256,256; 0: "
               "that dimension is not blocked)">,
    ListOption<"gemmPackedTile", "gemm-packed-tile", "int64_t",
               "Register tile sizes M,N,K of packed GEMMs (default 8,32,8)">,
    Option<"parallelBlocks", "parallel-blocks", "bool", /*default=*/"false",
           "Make the loop over a GEMM's N cache blocks an scf.forall (run on "
           "threads by tx-to-cpu{threads=N})">,
    Option<"gemmPackMinTokens", "gemm-pack-min-tokens", "int64_t",
           /*default=*/"32",
           "Pack GEMM operands (weight block transposed, token rows copied) "
           "when a call has at least this many tokens (0: never)">,
    Option<"testUnsafeHoist", "test-unsafe-hoist", "bool", /*default=*/"false",
           "Testing only, UNSAFE: the accumulator hoisting ignores the own "
           "effects of ops with regions (a linalg op reading the buffer), so "
           "that the differential tests can show they catch it">
  ];
  let dependentDialects = [
    "::mlir::transform::TransformDialect", "::mlir::vector::VectorDialect",
    "::mlir::scf::SCFDialect", "::mlir::linalg::LinalgDialect"
  ];
}

def TxCopiesToLinalg : Pass<"tx-copies-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Rewrite memref.copy as linalg.copy";
  let description = [{
    The LLVM lowering of a memref.copy between non-contiguous buffers calls
    `memrefCopy` from MLIR's C runner utilities; as a linalg.copy it becomes
    loops and needs no runtime library. Deallocation clones of returned
    views produce such copies.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def TxReturnContiguous : Pass<"tx-return-contiguous", "::mlir::ModuleOp"> {
  let summary = "Return strided views from public functions as fresh copies";
  let description = [{
    A public function that returns a strided view (a transpose or slice)
    returns a contiguous copy instead, and its result type loses the layout.
    Callers through the C interface see the same descriptor layout, and the
    buffer deallocation pipeline needs no clone of a strided buffer (which
    convert-bufferization-to-memref cannot lower).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect"];
}

def TxEmitCInterface : Pass<"tx-emit-c-interface", "::mlir::ModuleOp"> {
  let summary = "Mark public functions with llvm.emit_c_interface";
  let description = [{
    So that the in-process runner (and C callers) can call them with memref
    descriptors through `_mlir_ciface_<name>`.
  }];
}

#endif // TX_CONVERSION_PASSES_TD
