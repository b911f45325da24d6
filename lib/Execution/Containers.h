//===- Containers.h - the runner's container objects ------------*- C++ -*-===//
//
// What a `!tx.container` argument points to when the runner calls a
// function (tx-to-linalg lowers the container ops to calls of the
// tx_rt_container_* functions, TxToLinalg.h): entries by index, each a tuple
// of stored buffers (copies made at the write). The runner keeps one
// container per container argument name, across calls.
//
//===----------------------------------------------------------------------===//

#ifndef TX_LIB_EXECUTION_CONTAINERS_H
#define TX_LIB_EXECUTION_CONTAINERS_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir::tx::detail {

struct StoredValue {
  int64_t dtype = 0; // 0 f32, 1 f16, 2 bf16
  std::vector<int64_t> shape;
  std::vector<char> bytes; // C order
};

struct Container {
  /// index -> the values of `container[index] = (a, b, ...)`; a slot is
  /// empty between the writes of one tuple's values.
  std::map<int64_t, std::vector<std::optional<StoredValue>>> entries;
};

/// The tx_rt_container_* functions, by name, for the JIT.
std::vector<std::pair<const char *, void *>> containerRuntimeSymbols();

} // namespace mlir::tx::detail

#endif // TX_LIB_EXECUTION_CONTAINERS_H
