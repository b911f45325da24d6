//===- LoweringUtils.h - helpers shared by the tx-to-linalg patterns ------===//

#ifndef TX_LIB_CONVERSION_TXTOLINALG_LOWERINGUTILS_H
#define TX_LIB_CONVERSION_TXTOLINALG_LOWERINGUTILS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

#include <string>

namespace mlir::tx::detail {

/// A fresh buffer of `type` (identity layout), its dynamic sizes read from
/// the same dimensions of `shapeSource`.
Value allocLike(OpBuilder &b, Location loc, MemRefType type,
                Value shapeSource);

/// The type values of float type `type` are computed in: f32 for floats
/// narrower than f32 (norms, softmax, transcendental functions and GEMM
/// accumulation compute in f32, as PyTorch's kernels do), `type` otherwise.
Type computeType(Type type);
/// Extends a float narrower than f32 to f32 (see computeType).
Value toCompute(OpBuilder &b, Location loc, Value v);
/// Rounds a compute value back to `elemType`.
Value fromCompute(OpBuilder &b, Location loc, Value v, Type elemType);
/// A float constant of `type`.
Value floatConst(OpBuilder &b, Location loc, Type type, double value);

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

/// The subview `[..., offset:offset+size]` along the last dimension.
Value sliceLastDim(OpBuilder &b, Location loc, Value v, int64_t offset,
                   int64_t size);

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

} // namespace mlir::tx::detail

#endif // TX_LIB_CONVERSION_TXTOLINALG_LOWERINGUTILS_H
