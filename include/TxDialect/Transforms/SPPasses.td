//===- SPPasses.td - sequence-parallelism passes -----------*- tablegen -*-===//
//
// Config finalisation, the sequence-parallel and async-TP rewrites and the
// contract check closing the SP pipeline. (The lowering of the collectives to
// runtime calls is a conversion: Conversion/CollectivesPasses.td.)
//
//===----------------------------------------------------------------------===//

#ifndef TX_SP_PASSES_TD
#define TX_SP_PASSES_TD

include "mlir/Pass/PassBase.td"

def TxFinalizeConfig : Pass<"tx-finalize-config", "::mlir::ModuleOp"> {
  let summary = "Makes the module's compilation settings consistent (vLLM's decision table)";
  let description = [{
    Rewrites the module's `tx.config` the way vLLM finalises its
    compilation config, with a warning for every change:

    * `async_tp` on turns `sequence_parallel` on;
    * `sequence_parallel` with `tp_size = 1` turns SP and async TP off;
    * `sequence_parallel` without `sp_min_tokens` computes it as
      `floor(MB * 2^20 * tp / (hidden * element_size))` with the
      architecture's constants (sm_90: hidden >= 8192, 8 MB; sm_100:
      hidden >= 8192, 32 MB); hidden below the minimum or an unknown
      architecture turn SP and async TP off (set `sp_min_tokens` by hand to
      force SP); a user-set count is kept;
    * unset `splitting_ops` means vLLM's default, the attention ops: it
      becomes `["tx.attention"]` (piecewise compilation), silently as in
      vLLM;
    * an empty splitting-op list given by the user (`splitting_ops = []`,
      full graph) with piecewise CUDA graphs: `piecewise` becomes `none`,
      `full_and_piecewise` becomes `full`;
    * SP or async TP with splitting ops (given or defaulted) and no graph
      partition clears the splitting ops (full graph), and a CUDA-graph mode
      with piecewise graphs becomes `full`;
    * under SP, capture sizes are filtered to multiples of `tp_size`.

    A missing `hidden_size` is inferred from the rmsnorm weights (with a
    warning); `element_size` defaults to 2 (bf16/f16) with a warning.
  }];
}

def TxSequenceParallel : Pass<"tx-sequence-parallel", "::mlir::ModuleOp"> {
  let summary = "all_reduce -> (add_)rmsnorm becomes reduce_scatter -> norm on the token slice -> all_gather";
  let description = [{
    Under `sequence_parallel`, every `tx.all_reduce` whose result feeds a
    `tx.rmsnorm` (first layer: the all-reduced value is also the residual) or
    the input of a `tx.add_rmsnorm` (middle and last layers) becomes a
    `tx.reduce_scatter` along the token dimension, the norm runs on the
    local slice of `T / tp` tokens, and a `tx.all_gather` restores the full
    normalised activation before its first consumer. The residual stream
    stays scattered from one norm to the next; a residual that is not
    scattered yet (a replicated input) is sliced at `rank * T / tp`. A
    scattered value that something else needs in full is all-gathered
    before that consumer.

    Static token counts: applied when `T >= sp_min_tokens` and
    `T % tp_size == 0`. Dynamic token counts: the function `@f` is versioned:
    `@f_sp` is the rewritten copy and `@f` dispatches on the token count of
    its first argument with a dynamic leading dimension (`scf.if` on
    `memref.dim`).

    Fails on a module that is not compiled as one full graph
    (`splitting_ops = []` or `graph_partition`; unset splitting ops are the
    default, attention, hence piecewise).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def TxAsyncTP : Pass<"tx-async-tp", "::mlir::ModuleOp"> {
  let summary = "Fuses all_gather -> linear and linear -> reduce_scatter (async TP)";
  let description = [{
    Under `async_tp`, `tx.linear(tx.all_gather(x))` becomes
    `tx.all_gather_linear` and `tx.reduce_scatter(tx.linear(x))` becomes
    `tx.linear_reduce_scatter` (sum). An all-gather read by several
    consumers is left alone (fusing would gather once per consumer), with a
    remark. Fails on a module that is not compiled as one full graph.
  }];
}

def TxVerifySPContract : Pass<"tx-verify-sp-contract", "::mlir::ModuleOp"> {
  let summary = "Checks the sequence-parallel contract at the end of the SP pipeline";
  let description = [{
    Under `sequence_parallel` (and only then): the module is full graph; no
    `tx.all_reduce` feeds a norm in a function where the rewrite applied (a
    function with any reduce-scatter), and every norm of such a function
    runs on scattered tokens with a residual that is scattered the same way.
  }];
}

#endif // TX_SP_PASSES_TD
