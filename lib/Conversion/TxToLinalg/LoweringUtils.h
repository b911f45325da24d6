//===- LoweringUtils.h - helpers shared by the tx-to-linalg patterns ------===//

#ifndef TX_LIB_CONVERSION_TXTOLINALG_LOWERINGUTILS_H
#define TX_LIB_CONVERSION_TXTOLINALG_LOWERINGUTILS_H

#include "TxDialect/TxOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

#include <string>

namespace mlir::tx::detail {

/// What of `op`'s shapes the lowering needs static and it lacks: the head
/// counts and head_dims of a tx.attention, the head_dim of a tx.rotary
/// (their loops and halves are built from them); empty when lowerable.
/// The patterns and checkTxLowerable (its located error) share it.
std::string dynamicHeadShape(Operation *op);

/// A fresh buffer of `type` (identity layout), its dynamic sizes read from
/// the same dimensions of `shapeSource`.
Value allocLike(OpBuilder &b, Location loc, MemRefType type,
                Value shapeSource);
/// A fresh f32 buffer of one value per row of `x` (x's shape without its
/// last dimension): the per-row statistics of the norms.
Value allocRowStatistic(OpBuilder &b, Location loc, Value x);

/// The type values of float type `type` are computed in: f32 for floats
/// narrower than f32 (norms, softmax, transcendental functions and GEMM
/// accumulation compute in f32, as PyTorch's kernels do), `type` otherwise.
/// A vector of floats computes in a vector of the same shape.
Type computeType(Type type);
/// Extends a float (or vector of floats) narrower than f32 to f32 (see
/// computeType).
Value toCompute(OpBuilder &b, Location loc, Value v);
/// Rounds a compute value (or vector) back to `elemType` (for a vector `v`,
/// its element type or the vector type).
Value fromCompute(OpBuilder &b, Location loc, Value v, Type elemType);
/// A float constant of `type` (a splat for a vector type).
Value floatConst(OpBuilder &b, Location loc, Type type, double value);
/// Gemma 2's score soft-capping of an f32 `score`: `cap * tanh(score / cap)`.
Value softcapScore(OpBuilder &b, Location loc, Value score, double cap);

/// `(d0, ..., d_{rank-1}) -> (d_{rank-r}, ..., d_{rank-1})` for an operand of
/// rank `r` broadcast over leading dimensions (r == 0: a scalar).
AffineMap suffixMap(MLIRContext *ctx, unsigned rank, unsigned r);

/// A linalg.generic with all-parallel iterators over `output`'s shape; each
/// input is a memref broadcast over leading dims or a scalar. `body` gets the
/// block arguments of the inputs (output's last) and returns the value to
/// store.
void buildElementwise(
    OpBuilder &b, Location loc, ValueRange inputs, Value output,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body);

//===----------------------------------------------------------------------===//
// Rows (RowLoops.cpp): the CPU form of ops over a static last dimension
//===----------------------------------------------------------------------===//

/// Whether an op writing `output` can be lowered as rows: rank at least 2
/// (rows to run in parallel), a dynamic leading dimension (a static shape
/// is vectorised as linalg by the CPU pipeline) and a static, non-empty
/// last dimension.
bool hasStaticRows(Type output);

/// An scf.parallel over the first `count` dimensions of `shapeSource` (all
/// of them from the buffer's sizes); `body` gets the induction variables.
/// With `count` 0 the body is emitted in place with no variables.
void buildParallelRows(
    OpBuilder &b, Location loc, Value shapeSource, unsigned count,
    function_ref<void(OpBuilder &, Location, ValueRange)> body);

/// The chunks of a static row of `length` elements: an scf.for over chunks
/// of kRowChunk elements, then one chunk of the remainder; `body` gets the
/// chunk's offset (an index) and its static width.
constexpr int64_t kRowChunk = 64;
void forEachChunk(
    OpBuilder &b, Location loc, int64_t length,
    function_ref<void(OpBuilder &, Location, Value, int64_t)> body);

/// `buffer[lead..., offset : offset + width]` as a vector of the buffer's
/// element type: a vector.load where the last dimension has unit stride, a
/// transfer_read otherwise. `lead` indexes the leading dimensions.
Value loadChunk(OpBuilder &b, Location loc, Value buffer, ValueRange lead,
                Value offset, int64_t width);
/// Stores vector `value` at `buffer[lead..., offset : offset + width]`.
void storeChunk(OpBuilder &b, Location loc, Value value, Value buffer,
                ValueRange lead, Value offset);
/// The sum of the lanes of `v` by a fixed tree (halves added while the
/// width is even, then the rest in order): the same order on every call.
Value treeSum(OpBuilder &b, Location loc, Value v);
/// A reduction over a static row of `length` elements in f32: `step` folds
/// the chunk at `offset` (of `width` elements) into the accumulator vector
/// of the same width; the lanes of the full chunks' accumulator are summed
/// by treeSum, then those of the remainder chunk (folded into a zero
/// accumulator of its width) are added. The same order on every call.
Value rowAccumulate(
    OpBuilder &b, Location loc, int64_t length,
    function_ref<Value(OpBuilder &, Location, Value, int64_t, Value)> step);

/// What buildElementwise computes, as rows (`hasStaticRows(output)`): an
/// scf.parallel over the leading dimensions of `output`, each row in chunks
/// of vectors. `body` gets one vector per input (a scalar input broadcast),
/// in the input's element type, and returns the vector to store; it is the
/// same body as buildElementwise's (arith/math ops on vectors).
void buildRowwise(OpBuilder &b, Location loc, ValueRange inputs, Value output,
                  function_ref<Value(OpBuilder &, Location, ValueRange)> body);
/// buildRowwise where `rows` and the output allow it, else
/// buildElementwise.
void buildMap(OpBuilder &b, Location loc, ValueRange inputs, Value output,
              bool rows,
              function_ref<Value(OpBuilder &, Location, ValueRange)> body);

/// `target` = `source` (same shape and element type): rows where `rows`
/// and the target allow (buildMap), else one linalg.copy.
void buildCopy(OpBuilder &b, Location loc, Value source, Value target,
               bool rows);

/// A conversion pattern with a row form (tx-to-linalg{row-loops}).
template <typename Op> struct RowsConversionPattern : OpConversionPattern<Op> {
  RowsConversionPattern(MLIRContext *ctx, bool rows)
      : OpConversionPattern<Op>(ctx), rows(rows) {}
  /// Lower as rows where the shapes allow it.
  bool rows;
};

/// The subview `[..., offset : offset + size * stride : stride]` along the
/// last dimension (`size` elements).
Value sliceLastDim(OpBuilder &b, Location loc, Value v, int64_t offset,
                   int64_t size, int64_t stride = 1);

//===----------------------------------------------------------------------===//
// Runtime checks (RuntimeChecks.cpp)
//===----------------------------------------------------------------------===//

/// A buffer whose sizes a runtime check reads, and how the message names it:
/// `buffer` is the converted value, `name` says which operand of the op it is
/// and where it comes from (see `describeOperand`).
struct CheckedBuffer {
  Value buffer;
  std::string name;
};

/// "input (argument 0 'x')", "cos (the result of 'tx.view' at f.mlir:3:8,
/// a view of argument 2 'cos')": `role` of `op` read from tx value
/// `original` (the value before the conversion).
std::string describeOperand(StringRef role, Value original);
/// "f.mlir:3:8": the first file location in `loc` (else `loc` as MLIR
/// prints it).
std::string shortLocation(Location loc);
/// `describeOperand` for operand `original` of the op being lowered, with
/// `converted` its buffer after the conversion.
CheckedBuffer checked(StringRef role, Value original, Value converted);

/// Emits, at the insertion point, a check that dimension `lhsDim` of `lhs`
/// equals dimension `rhsDim` of `rhs` when the program runs. Nothing is
/// emitted when both are static (the verifier compared them).
void checkDimsEqual(OpBuilder &b, Operation *op, const CheckedBuffer &lhs,
                    int64_t lhsDim, const CheckedBuffer &rhs, int64_t rhsDim);
/// A check that dimension `dim` of `buffer` is `expected` (`what` says where
/// the expected size comes from, e.g. "the in_features of '@q_proj'").
void checkDimEquals(OpBuilder &b, Operation *op, const CheckedBuffer &buffer,
                    int64_t dim, int64_t expected, StringRef what);
/// `checkDimsEqual` for every dimension of two buffers of the same rank.
void checkSameShape(OpBuilder &b, Operation *op, const CheckedBuffer &lhs,
                    const CheckedBuffer &rhs);
/// Every static dimension of `result` (a fresh buffer's type) that `input`
/// has dynamic must match it: the lowering sizes the loops by the result.
void checkResultShape(OpBuilder &b, Operation *op, const CheckedBuffer &input,
                      MemRefType result, StringRef resultName = "result");
/// The run-time checks both attention lowerings make: key and value have
/// the same tokens and heads, the key's head_dim is the query's `headDim`,
/// and the result's static sizes match the query's tokens and heads.
void checkAttentionShapes(OpBuilder &b, AttentionOp op,
                          const CheckedBuffer &query, const CheckedBuffer &key,
                          const CheckedBuffer &value, int64_t headDim);
/// The most general form: when the i1 `failed` holds at run time, the program
/// stops with `message`, whose `{0}` and `{1}` are replaced by the index
/// values `lhs` and `rhs`. The message is prefixed with `op`'s name and
/// location.
void emitRuntimeCheck(OpBuilder &b, Operation *op, Value failed, Value lhs,
                      Value rhs, StringRef message);

/// After the conversion: numbers the checks the patterns emitted, records
/// their messages in the module's `tx.runtime_checks` table and declares the
/// runtime function, or (`keep` false) removes them.
void finalizeRuntimeChecks(ModuleOp module, bool keep);

//===----------------------------------------------------------------------===//
// Containers (Containers.cpp)
//===----------------------------------------------------------------------===//

/// Lowers container arguments to pointers and tx.container_set/get to calls
/// of the container runtime (TxToLinalg.h), after checking that no buffer a
/// container copies is written afterwards (PyTorch's containers hold the
/// tensors, not copies). `swapGet` (testing only) reads a tuple's values in
/// reverse order.
LogicalResult lowerTxContainers(ModuleOp module, bool swapGet);

} // namespace mlir::tx::detail

#endif // TX_LIB_CONVERSION_TXTOLINALG_LOWERINGUTILS_H
