//===- Tensor.cpp - host tensors and seeded ones --------------------------===//

#include "TxDialect/Execution/Tensor.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::tx;
using llvm::StringRef;

Tensor Tensor::zeros(std::vector<int64_t> shape) {
  int64_t n = numElements(shape);
  return Tensor(std::move(shape), std::vector<float>(n, 0.0f));
}

int64_t Tensor::numElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::optional<int64_t>
Tensor::checkedNumElements(const std::vector<int64_t> &shape) {
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
    return std::nullopt;
  if (llvm::is_contained(shape, 0))
    return 0;
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d > kMaxElements / n)
      return std::nullopt;
    n *= d;
  }
  return n;
}

std::string Tensor::typeString() const {
  std::string s;
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + "f32";
}

static uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

Tensor tx::randomTensor(StringRef name, std::vector<int64_t> shape,
                        uint64_t seed) {
  // FNV-1a of the name, then mixed with the seed.
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : name)
    h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  uint64_t base = splitmix64(h ^ splitmix64(seed));
  Tensor t = Tensor::zeros(std::move(shape));
  for (size_t i = 0; i < t.data.size(); ++i) {
    uint64_t r = splitmix64(base + i);
    // 24 random bits -> [0, 1) exactly representable in f32 -> [-1, 1).
    t.data[i] = static_cast<float>(r >> 40) * (2.0f / 16777216.0f) - 1.0f;
  }
  return t;
}
