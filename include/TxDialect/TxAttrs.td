//===- TxAttrs.td - tx dialect attributes and enums --------*- tablegen -*-===//

#ifndef TX_ATTRS_TD
#define TX_ATTRS_TD

include "TxDialect/TxDialect.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Tx_GuardPredicate : I32EnumAttr<"GuardPredicate",
    "how a possibly-None layer reference is tested", [
      I32EnumAttrCase<"is_none", 0>,
      I32EnumAttrCase<"is_not_none", 1>,
      I32EnumAttrCase<"truthy", 2>,
      I32EnumAttrCase<"falsy", 3>,
      I32EnumAttrCase<"eq_none", 4>,
      I32EnumAttrCase<"ne_none", 5>
    ]> {
  let cppNamespace = "::mlir::tx";
  let description = [{
    `is_none` / `is_not_none` are identity tests (`x is None`); `truthy` /
    `falsy` are `bool(x)` / `not x` in a pure boolean context. These fold when
    the layer is known. `eq_none` / `ne_none` are `x == None` / `x != None`:
    a subclass may override `__eq__`, so they never fold.
  }];
}

def Tx_UnaryKind : I32EnumAttr<"UnaryKind", "elementwise unary function", [
      I32EnumAttrCase<"silu", 0>,
      I32EnumAttrCase<"gelu", 1>,
      I32EnumAttrCase<"gelu_tanh", 2>,
      I32EnumAttrCase<"relu", 3>,
      I32EnumAttrCase<"neg", 4>,
      I32EnumAttrCase<"exp", 5>,
      I32EnumAttrCase<"tanh", 6>,
      I32EnumAttrCase<"sigmoid", 7>
    ]> {
  let cppNamespace = "::mlir::tx";
}

def Tx_BinaryKind : I32EnumAttr<"BinaryKind", "elementwise binary function", [
      I32EnumAttrCase<"add", 0>,
      I32EnumAttrCase<"sub", 1>,
      I32EnumAttrCase<"mul", 2>,
      I32EnumAttrCase<"div", 3>,
      // torch.clamp(x, min, max) is min(max(x, min), max); both propagate
      // NaN, as PyTorch's clamp, maximum and minimum do.
      I32EnumAttrCase<"max", 4>,
      I32EnumAttrCase<"min", 5>
    ]> {
  let cppNamespace = "::mlir::tx";
}

def Tx_CUDAGraphMode : I32EnumAttr<"CUDAGraphMode", "CUDA-graph capture mode", [
      I32EnumAttrCase<"none", 0>,
      I32EnumAttrCase<"piecewise", 1>,
      I32EnumAttrCase<"full", 2>,
      I32EnumAttrCase<"full_and_piecewise", 3>
    ]> {
  let cppNamespace = "::mlir::tx";
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

class Tx_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Tx_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Tx_StackEntryAttr : Tx_Attr<"StackEntry", "stack"> {
  let summary = "Where one original checkpoint tensor sits in a merged layer";
  let description = [{
    Rows `[offset, offset + size)` of the merged weight (and bias) hold the
    tensor `<source>.weight` (and `<source>.bias`) of the original layer.
    `heads` is the number of attention heads in that part (0 when the part is
    not head-structured); under tensor parallelism with fewer heads than ranks
    the heads are replicated rather than split. `unknown_heads` marks a part
    made of attention heads whose count nobody gave (`heads` is then 0): it
    can be loaded unsharded but not sharded over several ranks, since a
    row split could cut a head in two.

    ```mlir
    #tx.stack<source = "model.layers.0.self_attn.k_proj", offset = 64, size = 16, heads = 2>
    #tx.stack<source = "model.layers.0.self_attn.v_proj", offset = 80, size = 16, unknown_heads = true>
    ```
  }];
  let parameters = (ins
    "::mlir::StringAttr":$source,
    "int64_t":$offset,
    "int64_t":$size,
    DefaultValuedParameter<"int64_t", "0">:$heads,
    DefaultValuedParameter<"bool", "false">:$unknown_heads
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Tx_CompileConfigAttr : Tx_Attr<"CompileConfig", "config"> {
  let summary = "Compilation settings of a module (vLLM's CompilationConfig)";
  let description = [{
    Attached to the module as `tx.config`. As in vLLM, `splitting_ops` has
    three states: unset means the default splitting ops (attention,
    `tx.attention`), so the module is compiled piecewise; `[]` means one
    full graph; a list splits the module at those ops. The module is
    compiled as one full graph when `splitting_ops = []` or `graph_partition`
    is set; otherwise passes that need to see the whole graph (sequence
    parallelism, async TP) refuse to run. `tx-finalize-config` resolves an
    unset list to the default one, or clears it under sequence parallelism.

    ```mlir
    module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true,
        splitting_ops = ["tx.attention"], cudagraph_mode = full_and_piecewise,
        hidden_size = 4096, arch = "sm_90">} { ... }
    ```
  }];
  let parameters = (ins
    DefaultValuedParameter<"int64_t", "1">:$tp_size,
    DefaultValuedParameter<"bool", "false">:$sequence_parallel,
    DefaultValuedParameter<"bool", "false">:$async_tp,
    OptionalParameter<"std::optional<int64_t>">:$sp_min_tokens,
    OptionalParameter<"::mlir::ArrayAttr">:$splitting_ops,
    DefaultValuedParameter<"bool", "false">:$graph_partition,
    DefaultValuedParameter<"::mlir::tx::CUDAGraphMode",
        "::mlir::tx::CUDAGraphMode::none">:$cudagraph_mode,
    OptionalParameter<"::mlir::ArrayAttr">:$capture_sizes,
    OptionalParameter<"std::optional<int64_t>">:$hidden_size,
    OptionalParameter<"std::optional<int64_t>">:$element_size,
    OptionalParameter<"::mlir::StringAttr">:$arch
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// True when the module is compiled as one graph: an empty splitting-op
    /// list (unset means the default, attention), or splitting done by graph
    /// partition inside one compiled graph.
    bool isFullGraph() const;

    /// The splitting ops in effect: the given list, or the default one
    /// (`tx.attention`, vLLM's attention ops) when `splitting_ops` is unset.
    ::mlir::ArrayAttr getEffectiveSplittingOps() const;

    /// The default splitting ops of an unset `splitting_ops`.
    static ::mlir::ArrayAttr getDefaultSplittingOps(::mlir::MLIRContext *ctx);
  }];
}

#endif // TX_ATTRS_TD
