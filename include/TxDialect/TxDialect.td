//===- TxDialect.td - the tx dialect definition ------------*- tablegen -*-===//
//
// The tx dialect models the forward method of a PyTorch transformer module:
// linear layers as symbols, existence guards as optional values, activations
// as mutable buffers with views and in-place writes, transformer ops and
// tensor-parallel collectives.
//
//===----------------------------------------------------------------------===//

#ifndef TX_DIALECT_TD
#define TX_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Tx_Dialect : Dialect {
  let name = "tx";
  let cppNamespace = "::mlir::tx";
  let summary = "A transformer dialect: projections, guards, buffers, collectives";
  let description = [{
    `tx` models what a PyTorch module's `forward` does, closely enough that the
    unsafe patterns an inference engine meets when it fuses projections can be
    written down and every safe one rewritten:

    * linear layers are module-level symbols (`tx.layer`), called by
      `tx.linear`; merged layers carry a stacking map back to the original
      checkpoint tensors;
    * `self.v_proj is not None` is a `tx.layer_ref` (a possibly-None reference)
      tested by `tx.guard`;
    * activations are memrefs: views (`tx.view`, `tx.transpose`, `tx.slice`,
      `tx.alias`) implement `ViewLikeOpInterface`, in-place forms
      (`tx.unary_into`, `tx.binary_into`, `tx.copy`) declare writes, container
      writes (`tx.container_set`) and opaque calls (`tx.opaque_call`) are
      explicit;
    * transformer ops (rmsnorm, rotary, attention, activations) and
      collectives (`tx.all_reduce`, `tx.reduce_scatter`, `tx.all_gather` and
      the fused GEMM forms).

    Every op that touches a buffer declares its memory effects, so upstream
    `AliasAnalysis::getModRef` answers questions about it correctly.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasConstantMaterializer = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let extraClassDeclaration = [{
    /// Name of the module attribute that carries the compilation settings.
    static constexpr ::llvm::StringLiteral getConfigAttrName() {
      return ::llvm::StringLiteral("tx.config");
    }
  }];
}

class Tx_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tx_Dialect, mnemonic, traits>;

#endif // TX_DIALECT_TD
