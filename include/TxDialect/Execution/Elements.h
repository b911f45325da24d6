//===- Elements.h - element types -------------------------------*- C++ -*-===//
//
// The element types the runner passes (f32 on its interface; f16 and bf16
// memrefs and weights converted at the boundary).
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_EXECUTION_ELEMENTS_H
#define TXDIALECT_EXECUTION_ELEMENTS_H

#include "mlir/IR/Types.h"

#include <cstddef>
#include <optional>

namespace mlir {
namespace tx {

/// The element types the runner passes: tensors are f32 on its interface
/// (Tensor, .npy files); a 16-bit memref or weight is converted at the
/// boundary (rounded to nearest even on the way in, exact on the way out).
enum class ElementType { F32, F16, BF16 };

/// The ElementType of `type`, or std::nullopt when the runner cannot pass it.
std::optional<ElementType> runnerElementType(Type type);

/// Bytes of one element of `element`.
inline size_t elementBytes(ElementType element) {
  return element == ElementType::F32 ? 4 : 2;
}

/// Writes `count` floats into `out` as `element` (which must not be F32
/// for the 16-bit forms) / reads them back.
void storeElements(const float *in, size_t count, ElementType element,
                   void *out);
void loadElements(const void *in, size_t count, ElementType element,
                  float *out);

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_EXECUTION_ELEMENTS_H
