//===- TxOps.td - tx dialect operations --------------------*- tablegen -*-===//

#ifndef TX_OPS_TD
#define TX_OPS_TD

include "TxDialect/TxDialect.td"
include "TxDialect/TxTypes.td"
include "TxDialect/TxAttrs.td"
include "TxDialect/TxInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ViewLikeInterface.td"

// An activation read by an op, and a fresh activation an op allocates and
// fills. The Allocate effect is what lets alias analysis tell fresh buffers
// apart from the function's inputs.
defvar Tx_ReadBuf = Arg<AnyMemRef, "buffer read", [MemRead]>;
defvar Tx_FreshBuf = Res<AnyMemRef, "fresh buffer", [MemAlloc, MemWrite]>;

//===----------------------------------------------------------------------===//
// Parameters and layers
//===----------------------------------------------------------------------===//

def Tx_LayerOp : Tx_Op<"layer", [Symbol]> {
  let summary = "A linear layer of the module (nn.Linear)";
  let description = [{
    Declares `self.<name> = nn.Linear(in_features, out_features, bias)`. Its
    weight is `[out_features, in_features]` of `dtype`, loaded from the
    checkpoint tensor `<checkpoint>.weight` (`checkpoint` defaults to the
    symbol name). A merged layer carries `stacking`: the row ranges of the
    original layers it was stacked from, in order, covering all its rows.

    ```mlir
    tx.layer @q_proj : 64 -> 64, f32
    tx.layer @qkv : 64 -> 96, f32 bias stacking [
      #tx.stack<source = "q_proj", offset = 0, size = 64, heads = 4>,
      #tx.stack<source = "k_proj", offset = 64, size = 16, heads = 1>,
      #tx.stack<source = "v_proj", offset = 80, size = 16, heads = 1>]
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    ConfinedAttr<I64Attr, [IntPositive]>:$in_features,
    ConfinedAttr<I64Attr, [IntPositive]>:$out_features,
    TypeAttrOf<AnyFloat>:$dtype,
    UnitAttr:$bias,
    OptionalAttr<StrAttr>:$checkpoint,
    OptionalAttr<TypedArrayAttrBase<Tx_StackEntryAttr, "stacking map">>:$stacking
  );
  let assemblyFormat = [{
    $sym_name `:` $in_features `->` $out_features `,` $dtype (`bias` $bias^)?
    (`stacking` $stacking^)? attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Prefix of this layer's checkpoint tensors.
    ::llvm::StringRef getCheckpointPrefix() {
      return getCheckpoint() ? *getCheckpoint() : getSymName();
    }
  }];
}

def Tx_NoneLayerOp : Tx_Op<"none_layer", [Symbol]> {
  let summary = "A module attribute that is None (self.v_proj = None)";
  let description = [{
    Declares that `self.<name>` exists as an attribute but is `None`, as in
    Gemma 4's attention when `attention_k_eq_v` holds. Guards on it fold to
    "absent"; it cannot be called.

    ```mlir
    tx.none_layer @v_proj
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name);
  let assemblyFormat = "$sym_name attr-dict";
}

def Tx_ParamOp : Tx_Op<"param", [Symbol]> {
  let summary = "A parameter tensor of the module (e.g. a norm weight)";
  let description = [{
    A named parameter with a static buffer type, loaded from the checkpoint
    tensor `checkpoint` (defaults to the symbol name).

    ```mlir
    tx.param @input_layernorm : memref<64xf32>
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    TypeAttrOf<AnyStaticShapeMemRef>:$type,
    OptionalAttr<StrAttr>:$checkpoint
  );
  let assemblyFormat = "$sym_name `:` $type attr-dict";
  let extraClassDeclaration = [{
    ::llvm::StringRef getCheckpointName() {
      return getCheckpoint() ? *getCheckpoint() : getSymName();
    }
  }];
}

def Tx_GetParamOp : Tx_Op<"get_param",
    [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "The buffer of a parameter";
  let description = [{
    ```mlir
    %w = tx.get_param @input_layernorm : memref<64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param);
  let results = (outs AnyStaticShapeMemRef:$result);
  let assemblyFormat = "$param attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Existence guards
//===----------------------------------------------------------------------===//

def Tx_LayerRefOp : Tx_Op<"layer_ref",
    [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "self.<name>: a reference to a layer that may be None";
  let description = [{
    Reads the module attribute `self.<name>`, which names a `tx.layer` or a
    `tx.none_layer`. Its only proper use is a `tx.guard`.

    ```mlir
    %r = tx.layer_ref @v_proj
    %b = tx.guard is_not_none %r
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$layer);
  let results = (outs Tx_LayerRefType:$result);
  let assemblyFormat = "$layer attr-dict";
}

def Tx_GuardOp : Tx_Op<"guard", [Pure]> {
  let summary = "Tests a possibly-None layer reference";
  let description = [{
    `is_none` / `is_not_none` (identity tests) and `truthy` / `falsy`
    (`if x:`, `not x`) fold to a constant when the reference names a
    `tx.layer` (exists) or a `tx.none_layer` (absent). `eq_none` / `ne_none`
    (`x == None`, `x != None`) never fold: `__eq__` may be overridden.

    ```mlir
    %b = tx.guard is_not_none %r
    ```
  }];
  let arguments = (ins Tx_GuardPredicate:$predicate, Tx_LayerRefType:$ref);
  let results = (outs I1:$result);
  let assemblyFormat = "$predicate $ref attr-dict";
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// True for the predicates that may fold: identity tests and truthiness.
    bool isFoldable() {
      return getPredicate() != GuardPredicate::eq_none &&
             getPredicate() != GuardPredicate::ne_none;
    }
    /// The value of the guard when the layer exists (`exists`) or is None.
    bool evaluate(bool exists);
  }];
}

//===----------------------------------------------------------------------===//
// Projections
//===----------------------------------------------------------------------===//

class Tx_ProjectionOp<string mnemonic, list<Trait> traits = []>
    : Tx_Op<mnemonic, traits # [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
                                TxProjectionOpInterface]> {
  let results = (outs Tx_FreshBuf:$result);
  let hasVerifier = 1;
}

def Tx_LinearOp : Tx_ProjectionOp<"linear"> {
  let summary = "Calls a linear layer: y = x W^T (+ b)";
  let description = [{
    `self.<layer>(x)`: reads the input buffer (`[..., in_features]`) and
    returns a fresh buffer `[..., out_features]`.

    ```mlir
    %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$layer, Tx_ReadBuf:$input);
  let assemblyFormat = [{
    $layer `(` $input `)` attr-dict `:` type($input) `->` type($result)
  }];
}

def Tx_AllGatherLinearOp : Tx_ProjectionOp<"all_gather_linear",
    [DeclareOpInterfaceMethods<TxCollectiveOpInterface>]> {
  let summary = "All-gather along a dimension fused with a linear layer";
  let description = [{
    `linear(all_gather(x, dim))` as one communication+compute op (async TP).

    ```mlir
    %y = tx.all_gather_linear @gate_up(%x) dim 0 group 2 : memref<8x64xf32> -> memref<16x256xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$layer, Tx_ReadBuf:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                       ConfinedAttr<I64Attr, [IntPositive]>:$group_size);
  let assemblyFormat = [{
    $layer `(` $input `)` `dim` $dim `group` $group_size attr-dict `:`
    type($input) `->` type($result)
  }];
}

def Tx_LinearReduceScatterOp : Tx_ProjectionOp<"linear_reduce_scatter",
    [DeclareOpInterfaceMethods<TxCollectiveOpInterface>]> {
  let summary = "A linear layer fused with a sum reduce-scatter";
  let description = [{
    `reduce_scatter(linear(x), dim)` (sum) as one op (async TP).

    ```mlir
    %y = tx.linear_reduce_scatter @o_proj(%x) dim 0 group 2 : memref<16x64xf32> -> memref<8x64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$layer, Tx_ReadBuf:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                       ConfinedAttr<I64Attr, [IntPositive]>:$group_size);
  let assemblyFormat = [{
    $layer `(` $input `)` `dim` $dim `group` $group_size attr-dict `:`
    type($input) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Views (no memory effects; the result aliases the source)
//===----------------------------------------------------------------------===//

class Tx_ViewOp<string mnemonic, list<Trait> traits = []>
    : Tx_Op<mnemonic, traits # [Pure,
        DeclareOpInterfaceMethods<ViewLikeOpInterface, ["getViewSource"]>]> {
  let results = (outs AnyMemRef:$result);
  let hasVerifier = 1;
}

def Tx_ViewOp : Tx_ViewOp<"view"> {
  let summary = "x.view(...): the same elements under another shape";
  let description = [{
    Follows PyTorch's `view` rule: a contiguous source may take any shape of
    the same number of elements (at most one result dimension dynamic); a
    strided source (a slice of a merged projection, say) may be viewed when
    every group of merged or split dimensions is contiguous within itself,
    and its leading dynamic dimensions are kept as they are. The result's
    strides are the ones PyTorch would compute (see `inferResultType`).

    ```mlir
    %v = tx.view %q : memref<?x64xf32> -> memref<?x4x16xf32>
    %w = tx.view %s : memref<?x64xf32, strided<[96, 1]>>
                   -> memref<?x4x16xf32, strided<[96, 16, 1]>>
    ```
  }];
  let arguments = (ins AnyMemRef:$source);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let extraClassDeclaration = [{
    /// The type of `source` viewed with `shape`, or failure when PyTorch's
    /// view rule rejects it (the reason goes to `reason` when given).
    static ::mlir::FailureOr<::mlir::MemRefType>
    inferResultType(::mlir::MemRefType source, ::llvm::ArrayRef<int64_t> shape,
                    std::string *reason = nullptr);
  }];
}

def Tx_TransposeOp : Tx_ViewOp<"transpose"> {
  let summary = "x.permute(...) / x.transpose(a, b) as a strided view";
  let description = [{
    ```mlir
    %t = tx.transpose %x [1, 0] : memref<4x8xf32> -> memref<8x4xf32, strided<[1, 8]>>
    ```
  }];
  let arguments = (ins AnyMemRef:$source, DenseI64ArrayAttr:$permutation);
  let assemblyFormat = [{
    $source $permutation attr-dict `:` type($source) `->` type($result)
  }];
}

def Tx_SliceOp : Tx_ViewOp<"slice"> {
  let summary = "x.narrow(dim, offset, size) / x[..., a:b] as a view";
  let description = [{
    ```mlir
    %k = tx.slice %qkv dim 1 offset 64 size 16
        : memref<?x96xf32> -> memref<?x16xf32, strided<[96, 1], offset: 64>>
    ```
  }];
  let arguments = (ins AnyMemRef:$source,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$offset,
                       ConfinedAttr<I64Attr, [IntPositive]>:$size);
  let assemblyFormat = [{
    $source `dim` $dim `offset` $offset `size` $size attr-dict `:`
    type($source) `->` type($result)
  }];
}

def Tx_AliasOp : Tx_ViewOp<"alias", [AllTypesMatch<["source", "result"]>]> {
  let summary = "x.data / x.detach(): the same storage under another name";
  let arguments = (ins AnyMemRef:$source);
  let assemblyFormat = "$source attr-dict `:` type($source)";
  let hasVerifier = 0;
}

//===----------------------------------------------------------------------===//
// Elementwise ops, value and in-place forms
//===----------------------------------------------------------------------===//

def Tx_UnaryOp : Tx_Op<"unary"> {
  let summary = "An elementwise function into a fresh buffer (F.silu(x))";
  let description = [{
    ```mlir
    %y = tx.unary silu %x : memref<?x64xf32> -> memref<?x64xf32>
    ```
  }];
  let arguments = (ins Tx_UnaryKind:$kind, Tx_ReadBuf:$input);
  let results = (outs Tx_FreshBuf:$result);
  let assemblyFormat = "$kind $input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Tx_BinaryOp : Tx_Op<"binary",
    [DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "An elementwise binary op into a fresh buffer (a + b)";
  let description = [{
    `rhs` has the shape of `lhs`, a suffix of it (broadcast), or is a float
    scalar of the element type.

    ```mlir
    %y = tx.binary mul %a, %b : memref<?x64xf32>, memref<?x64xf32> -> memref<?x64xf32>
    ```
  }];
  // Effects are written by hand (TxOps.cpp): a scalar rhs is not memory.
  let arguments = (ins Tx_BinaryKind:$kind, AnyMemRef:$lhs,
                       AnyTypeOf<[AnyMemRef, AnyFloat]>:$rhs);
  let results = (outs AnyMemRef:$result);
  let assemblyFormat = [{
    $kind $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tx_UnaryIntoOp : Tx_Op<"unary_into"> {
  let summary = "An elementwise function written into a buffer (inplace=True, out=)";
  let description = [{
    `F.relu(x, inplace=True)` is `tx.unary_into relu %x into %x`;
    `torch.sigmoid(x, out=o)` writes `%o`.

    ```mlir
    tx.unary_into silu %x into %x : memref<?x64xf32>, memref<?x64xf32>
    ```
  }];
  let arguments = (ins Tx_UnaryKind:$kind, Tx_ReadBuf:$input,
                       Arg<AnyMemRef, "written", [MemWrite]>:$target);
  let assemblyFormat = [{
    $kind $input `into` $target attr-dict `:` type($input) `,` type($target)
  }];
  let hasVerifier = 1;
}

def Tx_BinaryIntoOp : Tx_Op<"binary_into",
    [DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "An elementwise binary op written into a buffer (x.mul_(2), out=)";
  let description = [{
    `x.mul_(2)` is `tx.binary_into mul %x, %c2 into %x`; `torch.add(a, b,
    out=o)` writes `%o`.

    ```mlir
    tx.binary_into mul %x, %c into %x : memref<?x64xf32>, f32, memref<?x64xf32>
    ```
  }];
  // Effects are written by hand (TxOps.cpp): a scalar rhs is not memory.
  let arguments = (ins Tx_BinaryKind:$kind, AnyMemRef:$lhs,
                       AnyTypeOf<[AnyMemRef, AnyFloat]>:$rhs, AnyMemRef:$target);
  let assemblyFormat = [{
    $kind $lhs `,` $rhs `into` $target attr-dict `:` type($lhs) `,` type($rhs)
    `,` type($target)
  }];
  let hasVerifier = 1;
}

def Tx_CopyOp : Tx_Op<"copy"> {
  let summary = "target.copy_(source)";
  let arguments = (ins Tx_ReadBuf:$source,
                       Arg<AnyMemRef, "written", [MemWrite]>:$target);
  let assemblyFormat = [{
    $source `into` $target attr-dict `:` type($source) `,` type($target)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Containers and opaque calls
//===----------------------------------------------------------------------===//

def Tx_ContainerSetOp : Tx_Op<"container_set"> {
  let summary = "container[index] = (values...)";
  let description = [{
    Writes a slot of a container (`shared_kv_states[idx] = (k, v)`). The
    stored buffers escape into the container, where later code may write
    through them, so they are declared written as well (over-approximation).

    ```mlir
    tx.container_set %states[%idx] = %k, %v : memref<?x16xf32>, memref<?x16xf32>
    ```
  }];
  let arguments = (ins Arg<Tx_ContainerType, "written", [MemWrite]>:$container,
                       Index:$index,
                       Arg<Variadic<AnyMemRef>, "escaping", [MemWrite]>:$values);
  let assemblyFormat = [{
    $container `[` $index `]` `=` $values attr-dict `:` type($values)
  }];
}

def Tx_ContainerGetOp : Tx_Op<"container_get"> {
  let summary = "(values...) = container[index]";
  let description = [{
    The buffers read back may alias anything stored in the container.

    ```mlir
    %k, %v = tx.container_get %states[%idx] : memref<?x16xf32>, memref<?x16xf32>
    ```
  }];
  let arguments = (ins Arg<Tx_ContainerType, "read", [MemRead]>:$container,
                       Index:$index);
  let results = (outs Variadic<AnyMemRef>:$values);
  let assemblyFormat = "$container `[` $index `]` attr-dict `:` type($values)";
}

def Tx_OpaqueCallOp : Tx_Op<"opaque_call"> {
  let summary = "A call the compiler cannot see into";
  let description = [{
    Any Python call whose effects are unknown. It declares no memory effects,
    so analyses treat it as reading and writing everything.

    ```mlir
    %r = tx.opaque_call "my_hook"(%x) : (memref<?x64xf32>) -> memref<?x64xf32>
    ```
  }];
  let arguments = (ins StrAttr:$callee, Variadic<AnyType>:$args);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = [{
    $callee `(` $args `)` attr-dict `:` functional-type($args, $results)
  }];
}

//===----------------------------------------------------------------------===//
// Transformer ops
//===----------------------------------------------------------------------===//

def Tx_RMSNormOp : Tx_Op<"rmsnorm"> {
  let summary = "RMSNorm over the last dimension: x / rms(x) * (weight_offset + weight)";
  let description = [{
    `result = x * rsqrt(mean(x^2) + epsilon) * (weight_offset + weight)` over
    the last dimension (16-bit inputs normalised in f32, rounded once).
    `weight_offset` (default 0, printed only when non-zero) is added to the
    weight: Gemma's RMSNorm scales by `1 + weight` (`offset 1.0`). The weight
    is optional: without it the result is `x * rsqrt(mean(x^2) + epsilon)`
    (an RMSNorm without a learned scale); an offset needs a weight.

    ```mlir
    %y = tx.rmsnorm %x, %w eps 1.0e-06 : memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>
    %g = tx.rmsnorm %x, %w eps 1.0e-06 offset 1.0 : memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>
    %n = tx.rmsnorm %x eps 1.0e-06 : memref<?x64xf32> -> memref<?x64xf32>
    ```
  }];
  let arguments = (ins Tx_ReadBuf:$input,
                       Arg<Optional<AnyMemRef>, "weight read", [MemRead]>:$weight,
                       F64Attr:$epsilon,
                       DefaultValuedAttr<F64Attr, "0.0">:$weight_offset);
  let results = (outs Tx_FreshBuf:$result);
  let assemblyFormat = [{
    $input (`,` $weight^)? `eps` $epsilon (`offset` $weight_offset^)? attr-dict
    `:` type($input) (`,` type($weight)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tx_AddRMSNormOp : Tx_Op<"add_rmsnorm"> {
  let summary = "Fused residual add + RMSNorm (vLLM's fused_add_rms_norm)";
  let description = [{
    `residual_out = input + residual; result = rmsnorm(residual_out) * (weight_offset + weight)`.
    The weight is optional, as on `tx.rmsnorm`.

    ```mlir
    %y, %r = tx.add_rmsnorm %x, %res, %w eps 1.0e-06
        : memref<?x64xf32>, memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>, memref<?x64xf32>
    ```
  }];
  let arguments = (ins Tx_ReadBuf:$input, Tx_ReadBuf:$residual,
                       Arg<Optional<AnyMemRef>, "weight read", [MemRead]>:$weight,
                       F64Attr:$epsilon,
                       DefaultValuedAttr<F64Attr, "0.0">:$weight_offset);
  let results = (outs Tx_FreshBuf:$result, Tx_FreshBuf:$residual_out);
  let assemblyFormat = [{
    $input `,` $residual (`,` $weight^)? `eps` $epsilon (`offset` $weight_offset^)?
    attr-dict `:` type($input) `,` type($residual) (`,` type($weight)^)? `->`
    type($result) `,` type($residual_out)
  }];
  let hasVerifier = 1;
}

def Tx_LayerNormOp : Tx_Op<"layernorm", [AttrSizedOperandSegments]> {
  let summary = "LayerNorm over the last dimension: (x - mean) / std (* weight) (+ bias)";
  let description = [{
    `result = (x - mean(x)) * rsqrt(var(x) + epsilon) * weight + bias` over
    the last dimension, with the biased variance of the centred values (as
    `torch.nn.LayerNorm`). `weight` and `bias` are optional: without a
    weight `nn.LayerNorm(elementwise_affine=False)` / `F.layer_norm(x,
    shape)` (no scale, no shift), without a bias `nn.LayerNorm(bias=False)`;
    a bias needs a weight (the printed form names them by position).
    16-bit inputs are normalised in f32.

    ```mlir
    %y = tx.layernorm %x, %w, %b eps 1.0e-05 : memref<?x64xf32>, memref<64xf32>, memref<64xf32> -> memref<?x64xf32>
    %z = tx.layernorm %x, %w eps 1.0e-05 : memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>
    %n = tx.layernorm %x eps 1.0e-05 : memref<?x64xf32> -> memref<?x64xf32>
    ```
  }];
  let arguments = (ins Tx_ReadBuf:$input,
                       Arg<Optional<AnyMemRef>, "weight read", [MemRead]>:$weight,
                       Arg<Optional<AnyMemRef>, "bias read", [MemRead]>:$bias,
                       F64Attr:$epsilon);
  let results = (outs Tx_FreshBuf:$result);
  let assemblyFormat = [{
    $input (`,` $weight^)? (`,` $bias^)? `eps` $epsilon attr-dict `:`
    type($input) (`,` type($weight)^)? (`,` type($bias)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tx_RotaryOp : Tx_Op<"rotary"> {
  let summary = "Rotary position embedding (NeoX halves or interleaved pairs)";
  let description = [{
    `input` is `[tokens, heads, head_dim]`; `cos` and `sin` are
    `[tokens, head_dim / 2]`, already gathered for each token's position:
    one angle per rotated pair of features.

    Without `interleaved` (NeoX, Llama: rotate halves), feature `i` and
    feature `i + head_dim / 2` are a pair rotated by angle `i`:
    `out[i] = x[i] cos[i] - x[i + D/2] sin[i]`,
    `out[i + D/2] = x[i + D/2] cos[i] + x[i] sin[i]`.

    With `interleaved` (GPT-J's `rotate_every_two`, Cohere, GLM, CodeGen:
    `x[..., ::2]` and `x[..., 1::2]`), features `2i` and `2i + 1` are the
    pair rotated by angle `i`:
    `out[2i] = x[2i] cos[i] - x[2i+1] sin[i]`,
    `out[2i+1] = x[2i+1] cos[i] + x[2i] sin[i]`.
    HF's Cohere gives each angle twice (`repeat_interleave(freqs, 2)`,
    `[tokens, head_dim]`); tx takes it once per pair (`cos[..., ::2]`).

    Partial rotary (only the first features of a head rotated) is a
    `tx.rotary` of a `tx.slice` of the head.

    ```mlir
    %qr = tx.rotary %q, %cos, %sin : memref<?x4x16xf32>, memref<?x8xf32>, memref<?x8xf32> -> memref<?x4x16xf32>
    %kr = tx.rotary %k, %cos, %sin interleaved : memref<?x2x16xf32>, memref<?x8xf32>, memref<?x8xf32> -> memref<?x2x16xf32>
    ```
  }];
  let arguments = (ins Tx_ReadBuf:$input, Tx_ReadBuf:$cos, Tx_ReadBuf:$sin,
                       UnitAttr:$interleaved);
  let results = (outs Tx_FreshBuf:$result);
  let assemblyFormat = [{
    $input `,` $cos `,` $sin (`interleaved` $interleaved^)? attr-dict `:`
    type($input) `,` type($cos) `,` type($sin) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tx_AttentionOp : Tx_Op<"attention"> {
  let summary = "Scaled dot-product attention with grouped-query heads";
  let description = [{
    `query` is `[tokens, q_heads, head_dim]`, `key` is
    `[kv_tokens, kv_heads, head_dim]` and `value` `[kv_tokens, kv_heads,
    v_head_dim]` with `q_heads % kv_heads == 0` (query head `h` reads kv
    head `h / (q_heads / kv_heads)`); the result is `[tokens, q_heads,
    v_head_dim]`. `v_head_dim` is usually `head_dim`; MLA (DeepSeek-V2/V3)
    has its own. With T tokens and S
    kv_tokens, query `t` is at position `t + (S - T)` (aligned at the end,
    as a decode step after a cache). `causal`: key `s` is visible to query
    `t` when `s <= t + (S - T)`.

    `window W` (sliding-window attention: Mistral, Gemma 2/3, Qwen2, Phi-3,
    Starcoder2; only with `causal`): key `s` is visible when it is causally
    visible and `(t + (S - T)) - s < W`, i.e. each query sees itself and the
    `W - 1` keys before it. This is HF's convention (`sliding_window_overlay`
    of transformers' masking_utils: `kv_idx > q_idx - sliding_window`; the
    older `_prepare_4d_causal_attention_mask(sliding_window=W)` masks
    `tril(diagonal=-W)`, the same keys).

    `softcap c` (Gemma 2's `attn_logit_softcapping`): each scaled score `x`
    becomes `c * tanh(x / c)` before the mask and the softmax.

    Per query row, with the visible keys only: `p = softmax(cap(scale * q.k))`,
    `out = sum p v`; a row with no visible key is zero.

    ```mlir
    %o = tx.attention %q, %k, %v scale 0.25 causal
        : memref<?x4x16xf32>, memref<?x2x16xf32>, memref<?x2x16xf32> -> memref<?x4x16xf32>
    %s = tx.attention %q, %k, %v scale 0.25 causal window 4096 softcap 50.0
        : memref<?x4x16xf32>, memref<?x2x16xf32>, memref<?x2x16xf32> -> memref<?x4x16xf32>
    ```
  }];
  let arguments = (ins Tx_ReadBuf:$query, Tx_ReadBuf:$key, Tx_ReadBuf:$value,
                       F64Attr:$scale, UnitAttr:$causal,
                       OptionalAttr<I64Attr>:$window,
                       OptionalAttr<F64Attr>:$softcap);
  let results = (outs Tx_FreshBuf:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value `scale` $scale (`causal` $causal^)?
    (`window` $window^)? (`softcap` $softcap^)? attr-dict
    `:` type($query) `,` type($key) `,` type($value) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Collectives (sum reduction over a tensor-parallel group)
//===----------------------------------------------------------------------===//

class Tx_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : Tx_Op<mnemonic,
            traits # [DeclareOpInterfaceMethods<TxCollectiveOpInterface>]> {
  let results = (outs Tx_FreshBuf:$result);
  let hasVerifier = 1;
}

def Tx_AllReduceOp : Tx_CollectiveOp<"all_reduce"> {
  let summary = "Sum all-reduce over the tensor-parallel group";
  let description = [{
    ```mlir
    %y = tx.all_reduce %x group 2 : memref<?x64xf32> -> memref<?x64xf32>
    ```
  }];
  let arguments = (ins Tx_ReadBuf:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$group_size);
  let assemblyFormat = [{
    $input `group` $group_size attr-dict `:` type($input) `->` type($result)
  }];
}

def Tx_ReduceScatterOp : Tx_CollectiveOp<"reduce_scatter"> {
  let summary = "Sum reduce-scatter along a dimension";
  let description = [{
    Rank `r` keeps slice `r` of the summed buffer along `dim`.

    ```mlir
    %y = tx.reduce_scatter %x dim 0 group 2 : memref<16x64xf32> -> memref<8x64xf32>
    ```
  }];
  let arguments = (ins Tx_ReadBuf:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                       ConfinedAttr<I64Attr, [IntPositive]>:$group_size);
  let assemblyFormat = [{
    $input `dim` $dim `group` $group_size attr-dict `:` type($input) `->` type($result)
  }];
}

def Tx_RankOp : Tx_Op<"rank", [Pure]> {
  let summary = "This process's rank in the tensor-parallel group";
  let description = [{
    The index (0 to `group - 1`) of the calling rank in its tensor-parallel
    group: the slice of tokens a reduce-scatter along the token dimension
    leaves on it starts at `rank * tokens / group`. Sequence parallelism uses
    it to slice a replicated residual like the reduce-scatter.

    ```mlir
    %r = tx.rank group 2
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntPositive]>:$group_size);
  let results = (outs Index:$result);
  let assemblyFormat = "`group` $group_size attr-dict";
  let hasVerifier = 1;
}

def Tx_AllGatherOp : Tx_CollectiveOp<"all_gather"> {
  let summary = "All-gather along a dimension";
  let description = [{
    ```mlir
    %y = tx.all_gather %x dim 0 group 2 : memref<8x64xf32> -> memref<16x64xf32>
    ```
  }];
  let arguments = (ins Tx_ReadBuf:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                       ConfinedAttr<I64Attr, [IntPositive]>:$group_size);
  let assemblyFormat = [{
    $input `dim` $dim `group` $group_size attr-dict `:` type($input) `->` type($result)
  }];
}

#endif // TX_OPS_TD
