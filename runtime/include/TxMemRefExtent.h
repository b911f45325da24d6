//===- TxMemRefExtent.h - the memory a memref descriptor spans --*- C++ -*-===//
//
// The mgpu*RegisterMemRef functions of both device runtimes (runtime/cuda,
// runtime/emulator) register the bytes a memref reaches: its descriptor
// (StridedMemRefType<char, N>'s layout, without MLIR's runner headers) and
// the extent its strides reach from the first element.
//
//===----------------------------------------------------------------------===//

#ifndef TX_RUNTIME_TXMEMREFEXTENT_H
#define TX_RUNTIME_TXMEMREFEXTENT_H

#include <cstdint>

namespace tx::runtime {

struct MemRefDescriptorPrefix {
  char *allocated;
  char *aligned;
  int64_t offset;
  int64_t sizesAndStrides[1];
};

/// The first byte of the memref's data.
inline char *memRefData(const MemRefDescriptorPrefix *desc,
                        int64_t elementSizeBytes) {
  return desc->aligned + desc->offset * elementSizeBytes;
}

/// The bytes from the first element to the end of the last one: the extent
/// the strides reach, not the product of the sizes (views); 0 when empty.
inline uint64_t memRefBytes(int64_t rank, const MemRefDescriptorPrefix *desc,
                            int64_t elementSizeBytes) {
  const int64_t *sizes = desc->sizesAndStrides;
  const int64_t *strides = desc->sizesAndStrides + rank;
  int64_t last = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (sizes[i] == 0)
      return 0;
    last += (sizes[i] - 1) * strides[i];
  }
  return static_cast<uint64_t>(last + 1) * elementSizeBytes;
}

} // namespace tx::runtime

#endif // TX_RUNTIME_TXMEMREFEXTENT_H
