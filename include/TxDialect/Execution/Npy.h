//===- Npy.h - .npy files ---------------------------------------*- C++ -*-===//
//
// The .npy files the runner reads and writes (little-endian f32, C order).
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_EXECUTION_NPY_H
#define TXDIALECT_EXECUTION_NPY_H

#include "TxDialect/Execution/Tensor.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Error.h"

namespace mlir {
namespace tx {

/// Reads a `.npy` file: little-endian f32 (`<f4`), C order, format 1.0-3.0.
/// Anything else is an error that says what the file holds.
llvm::Expected<Tensor> readNpy(llvm::StringRef path);
/// Reads a `.npy` file like readNpy, but its data straight into the memory
/// that `destination` returns for the file's shape (room for that many
/// floats), with one read and no intermediate copy. When `destination`
/// returns null nothing is read (the caller rejects the shape). Returns the
/// shape.
llvm::Expected<std::vector<int64_t>> readNpyInto(
    llvm::StringRef path,
    llvm::function_ref<float *(const std::vector<int64_t> &shape)> destination);
/// Writes `t` as a format 1.0 `.npy` file of `<f4`.
llvm::Error writeNpy(llvm::StringRef path, const Tensor &t);

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_EXECUTION_NPY_H
