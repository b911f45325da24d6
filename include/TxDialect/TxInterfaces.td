//===- TxInterfaces.td - tx op interfaces ------------------*- tablegen -*-===//
//
// The op families the analyses, rewrites and lowerings recognise: the
// projections (a call of a linear layer, alone or fused with a collective)
// and the collectives (a sum reduction or gather over a tensor-parallel
// group, alone or fused with a projection).
//
//===----------------------------------------------------------------------===//

#ifndef TX_INTERFACES_TD
#define TX_INTERFACES_TD

include "mlir/IR/OpBase.td"

def TxProjectionOpInterface : OpInterface<"TxProjectionOpInterface"> {
  let description = [{
    A call of a linear layer (`tx.layer`): `y = x W^T (+ b)` on the last
    dimension of the input, `tx.linear` and its fused collective forms
    (`tx.all_gather_linear`, `tx.linear_reduce_scatter`). The input is a
    buffer `[..., in_features]`, the result a fresh buffer
    `[..., out_features]` of the layer.
  }];
  let cppNamespace = "::mlir::tx";
  let methods = [
    InterfaceMethod<"The layer called (a `tx.layer` symbol).",
      "::mlir::FlatSymbolRefAttr", "getLayerAttr", (ins),
      [{ return $_op.getLayerAttr(); }]>,
    InterfaceMethod<"The buffer multiplied by the layer's weight.",
      "::mlir::TypedValue<::mlir::MemRefType>", "getInput", (ins),
      [{ return $_op.getInput(); }]>,
    InterfaceMethod<"The operand holding the input.",
      "::mlir::OpOperand &", "getInputOperand", (ins),
      [{ return $_op.getInputMutable(); }]>,
    InterfaceMethod<"The fresh output buffer (last dimension: out_features).",
      "::mlir::TypedValue<::mlir::MemRefType>", "getResult", (ins),
      [{ return $_op.getResult(); }]>,
  ];
  let extraClassDeclaration = [{
    /// The called layer's name.
    ::llvm::StringRef getLayerName() { return getLayerAttr().getValue(); }
    /// The `tx.layer` called, or null when the symbol is not one.
    ::mlir::tx::LayerOp lookupLayer();
  }];
}

def TxCollectiveOpInterface : OpInterface<"TxCollectiveOpInterface"> {
  let description = [{
    A collective over a tensor-parallel group of `group_size` ranks:
    `tx.all_reduce`, `tx.reduce_scatter`, `tx.all_gather` and the fused GEMM
    forms (`tx.all_gather_linear` gathers before its projection,
    `tx.linear_reduce_scatter` reduce-scatters after it). Over a group of
    one every collective is the identity.
  }];
  let cppNamespace = "::mlir::tx";
  let methods = [
    InterfaceMethod<"The number of ranks in the group.",
      "int64_t", "getGroupSize", (ins),
      [{ return static_cast<int64_t>($_op.getGroupSize()); }]>,
    InterfaceMethod<[{
        What is communicated: an all-reduce, a reduce-scatter or an
        all-gather (the fused forms say which collective they contain).
      }],
      "::mlir::tx::CollectiveKind", "getCollectiveKind", (ins)>,
    InterfaceMethod<[{
        The dimension scattered or gathered; none for an all-reduce.
      }],
      "std::optional<int64_t>", "getCollectiveDim", (ins)>,
    InterfaceMethod<"The op's input buffer.",
      "::mlir::TypedValue<::mlir::MemRefType>", "getInput", (ins),
      [{ return $_op.getInput(); }]>,
    InterfaceMethod<"The operand holding the input.",
      "::mlir::OpOperand &", "getInputOperand", (ins),
      [{ return $_op.getInputMutable(); }]>,
    InterfaceMethod<"The fresh result buffer.",
      "::mlir::TypedValue<::mlir::MemRefType>", "getResult", (ins),
      [{ return $_op.getResult(); }]>,
  ];
  let extraClassDeclaration = [{
    /// Whether this op contains a projection (a fused GEMM form).
    bool isFusedWithProjection();
    /// The runtime name of the collective: "all_reduce", "reduce_scatter"
    /// or "all_gather".
    ::llvm::StringRef getCollectiveName();
  }];
}

#endif // TX_INTERFACES_TD
