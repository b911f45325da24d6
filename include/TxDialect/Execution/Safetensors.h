//===- Safetensors.h - safetensors checkpoints ------------------*- C++ -*-===//
//
// Checkpoints in the safetensors format (Hugging Face's): one file, or the
// shards of a `model.safetensors.index.json`. Files are mapped, their
// headers checked when opened, and tensors converted to f32 when read.
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_EXECUTION_SAFETENSORS_H
#define TXDIALECT_EXECUTION_SAFETENSORS_H

#include "TxDialect/Execution/Elements.h"
#include "TxDialect/Execution/Tensor.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mlir {
namespace tx {

/// One tensor of a safetensors file, as its header describes it.
struct SafetensorsEntry {
  std::string dtype; ///< "F32", "BF16", ... (as written in the file)
  std::vector<int64_t> shape;
  /// Byte range [begin, end) in the data that follows the header.
  uint64_t begin = 0, end = 0;
};

/// A mapped safetensors file: an 8-byte little-endian header length N, N
/// bytes of JSON {name: {dtype, shape, data_offsets}, "__metadata__": {..}},
/// then the data. `open` checks the header (JSON, offsets inside the file,
/// not inverted or overlapping, sizes matching shape and dtype).
class SafetensorsFile {
public:
  static llvm::Expected<std::unique_ptr<SafetensorsFile>>
  open(llvm::StringRef path);

  llvm::StringRef path() const { return filePath; }
  /// The entry of tensor `name`, or null.
  const SafetensorsEntry *find(llvm::StringRef name) const;
  /// The tensor names, sorted.
  std::vector<std::string> names() const;
  /// Tensor `name` converted to f32 (F32, F16, BF16 and F64 tensors; any
  /// other dtype is an error naming the tensor and the dtype).
  llvm::Expected<Tensor> read(llvm::StringRef name) const;
  /// The stored bytes of `entry` (an entry of this file).
  const char *bytes(const SafetensorsEntry &entry) const {
    return data.data() + entry.begin;
  }

private:
  std::string filePath;
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  llvm::StringRef data; ///< the bytes after the header
  llvm::StringMap<SafetensorsEntry> entries;
};

/// A checkpoint in safetensors files: one file, or a sharded checkpoint's
/// index json ({"weight_map": {tensor: shard file}}, shard files relative
/// to the index's directory). Every file is opened (and checked) by `open`.
class SafetensorsCheckpoint {
public:
  /// `path`: a `.safetensors` file, a `.json` index, or a directory holding
  /// `model.safetensors` or `model.safetensors.index.json`.
  static llvm::Expected<std::unique_ptr<SafetensorsCheckpoint>>
  open(llvm::StringRef path);
  /// The safetensors checkpoint file in directory `dir` (its index when
  /// there is one, else model.safetensors), or "" when it has neither.
  static std::string findInDirectory(llvm::StringRef dir);

  /// The file `open` was given (the index of a sharded checkpoint).
  llvm::StringRef path() const { return indexPath; }
  /// Tensor `name` converted to f32, checked to have `shape`. A missing
  /// tensor, another shape or an unsupported dtype is an error naming the
  /// file and the tensor (and a near name for a missing one).
  llvm::Expected<Tensor> read(llvm::StringRef name,
                              const std::vector<int64_t> &shape) const;
  /// Tensor `name`, checked like `read`, stored at `dest` as `element`
  /// values: the bytes copied as they are where the checkpoint's dtype is
  /// `element`'s, else converted (through f32, as `read` does).
  llvm::Error readInto(llvm::StringRef name, const std::vector<int64_t> &shape,
                       ElementType element, void *dest) const;

private:
  /// The file that holds tensor `name`, checked to have `shape`.
  llvm::Expected<const SafetensorsFile *>
  lookup(llvm::StringRef name, const std::vector<int64_t> &shape) const;

  std::string indexPath;
  std::vector<std::unique_ptr<SafetensorsFile>> files;
  /// Tensor name -> index into `files`.
  llvm::StringMap<size_t> where;
};

/// Writes `tensors` as F32 tensors of a safetensors file at `path`.
llvm::Error
writeSafetensors(llvm::StringRef path,
                 const std::vector<std::pair<std::string, Tensor>> &tensors);

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_EXECUTION_SAFETENSORS_H
