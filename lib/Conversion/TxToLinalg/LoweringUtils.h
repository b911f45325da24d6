//===- LoweringUtils.h - helpers shared by the tx-to-linalg patterns ------===//

#ifndef TX_LIB_CONVERSION_TXTOLINALG_LOWERINGUTILS_H
#define TX_LIB_CONVERSION_TXTOLINALG_LOWERINGUTILS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

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

} // namespace mlir::tx::detail

#endif // TX_LIB_CONVERSION_TXTOLINALG_LOWERINGUTILS_H
