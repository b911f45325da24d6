//===- CollectivesPasses.td - collectives lowering pass ----*- tablegen -*-===//
//
// The lowering of tx collectives to calls of the collectives runtime
// (lib/Conversion/CollectivesToRuntime). It belongs to the conversion layer:
// the sequence-parallel rewrites (SPPasses.td) produce the collectives, this
// pass lowers them.
//
//===----------------------------------------------------------------------===//

#ifndef TX_COLLECTIVES_PASSES_TD
#define TX_COLLECTIVES_PASSES_TD

include "mlir/Pass/PassBase.td"

def TxLowerCollectivesToRuntime
    : Pass<"tx-lower-collectives-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Lowers tx collectives to calls of the tx_rt_* runtime";
  let description = [{
    Every collective (and fused GEMM+collective, split back into a
    `tx.linear` and a collective) over a group larger than one becomes a
    `memref.alloc` of the result and a call to `tx_rt_<op>_<type>` with
    unranked memref descriptors (`llvm.emit_c_interface`), `tx.rank`
    becomes a call to `tx_rt_rank`. Element types: f32, f16, bf16. Groups of
    one fold to copies (no runtime needed).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // TX_COLLECTIVES_PASSES_TD
