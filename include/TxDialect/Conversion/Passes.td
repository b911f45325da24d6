//===- Passes.td - tx to linalg and the host interface ----*- tablegen -*-===//

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

    * container arguments (`!tx.container`) become `!llvm.ptr` to a
      container object of the host, `tx.container_set` / `tx.container_get`
      calls of its runtime (`tx_rt_container_*`, TxToLinalg.h) that store
      and read back copies; a get checks at run time that the entry was set
      with the types the op reads. A write to a buffer after it was stored,
      or to a buffer read back, is rejected (a PyTorch container holds the
      tensor itself and would see it).

    `tx.opaque_call` and (without `allow-collectives`) collectives over more
    than one rank cannot be lowered: the pass fails with an error naming the
    op.
  }];
  let options = [
    Option<"allowCollectives", "allow-collectives", "bool", "false",
           "Leave collectives over more than one rank (and tx.rank) for a "
           "later lowering instead of failing">,
    Option<"runtimeChecks", "runtime-checks", "bool", "true",
           "Check at run time that the dynamic sizes an op needs to agree "
           "do (a call of tx_rt_check_failed on a mismatch; see "
           "TxToLinalg.h). Off: no checks, and a host without that function "
           "can run the code">,
    Option<"rowAttention", "row-attention", "bool", "false",
           "Lower tx.attention for CPUs (tx-to-cpu sets it): an scf.parallel "
           "over query heads, in it a loop over query rows that visits the "
           "visible keys only, scores as head_dim-vector dot products (a "
           "fixed summation tree), one row of scores per head. Off: linalg "
           "ops over a [heads, T, S] score buffer (what tx-to-nvvm maps)">,
    Option<"rowLoops", "row-loops", "bool", "false",
           "Lower elementwise ops, norms and rotary for CPUs (tx-to-cpu sets "
           "it) where the last dimension is static: an scf.parallel over "
           "the leading (token) dimensions, each row in vectors of static "
           "width (a norm's sum of squares in a fixed order within the "
           "row). Off: linalg ops over the whole buffer">,
    Option<"testBreakContainers", "test-break-containers", "std::string",
           "\"\"",
           "Testing only, WRONG results: 'swap-get' makes tx.container_get "
           "read a tuple's values in reverse order (to show that the "
           "comparisons with PyTorch catch it)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
    "::mlir::LLVM::LLVMDialect"
  ];
}

def TxProfileOps : Pass<"tx-profile-ops", "::mlir::ModuleOp"> {
  let summary = "Bracket every tx op with calls of a runtime timer";
  let description = [{
    Per-op accounting (`tx-to-cpu{profile=true}`, `tx-run --profile`): runs
    on tx before any lowering. Every tx op that computes (not views,
    `tx.get_param`, guards or symbols) gets `tx_rt_profile_begin(id)` before
    it and `tx_rt_profile_end(id)` after it, and every function body one such
    pair around it, so that everything the op lowers to (runtime checks,
    allocations, fills, loops, parallel tasks) is timed under its id. The
    module's `tx.profile_ops` table names each id: kind (`op` or
    `function`), op and symbol (`tx.linear @q_proj`), location and function
    (see ProfileOps.h). The runner provides the two functions and prints the
    table sorted by time. Without this pass the code is unchanged.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
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
  let options = [
    Option<"rows", "rows", "bool", "false",
           "Copy as parallel rows of vectors where the result has a dynamic "
           "leading and a static last dimension (as tx-to-linalg{row-loops} "
           "lowers tx.copy); otherwise one linalg.copy">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def TxEmitCInterface : Pass<"tx-emit-c-interface", "::mlir::ModuleOp"> {
  let summary = "Mark public functions with llvm.emit_c_interface";
  let description = [{
    So that the in-process runner (and C callers) can call them with memref
    descriptors through `_mlir_ciface_<name>`.
  }];
}

#endif // TX_CONVERSION_PASSES_TD
