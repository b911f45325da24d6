//===- TestPasses.td - test-only passes --------------------*- tablegen -*-===//
//
// Passes that print an analysis's answers for FileCheck. Registered by
// tx-opt only: never part of the library, the plugin or the install.
//
//===----------------------------------------------------------------------===//

#ifndef TX_TEST_PASSES_TD
#define TX_TEST_PASSES_TD

include "mlir/Pass/PassBase.td"

def TxTestPrintFusionAnalysis
    : Pass<"tx-test-print-fusion-analysis", "::mlir::ModuleOp"> {
  let summary = "Prints the stacked-linear analysis of every sibling group";
  let description = [{
    For every group of sibling projections: the calls, the insertion point
    chosen (or the refusal), the values that may alias the input, and every
    op judged to write the input with the reason. Writes to stdout.
  }];
}

def TxTestCommVolume : Pass<"tx-test-comm-volume", "::mlir::ModuleOp"> {
  let summary = "Prints the bytes each collective of each function moves";
  let description = [{
    For each function, one remark per collective and one total, each with
    the payload (bytes of the full tensor) and the bytes each rank sends
    with a ring algorithm over `n` ranks (all_reduce `2(n-1)/n * S`,
    reduce_scatter and all_gather `(n-1)/n * S`, with `S` the size of the
    full, unscattered tensor). Dynamic dimensions take `tokens`.
  }];
  let options = [
    Option<"tokens", "tokens", "int64_t", "0",
           "value used for dynamic dimensions (0: report them as unknown)">
  ];
}

#endif // TX_TEST_PASSES_TD
