//===- tx-rt-check.cpp - every collective through the runtime's C ABI -----===//
//
// Run once per rank (`mpirun -np N tx-rt-check`, or alone for the single
// backend). Rank r contributes (r + 1) * base[i]; each result is compared
// with the value computed locally. Prints "PASS <case>" / "FAIL <case>"
// from rank 0 and exits non-zero on a failure.
//
//===----------------------------------------------------------------------===//

#include "tx_runtime.h"

#include "../Half.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using namespace tx::rt;

namespace {

int rank, world, failures = 0;

/// A rank-2 buffer of `rows x cols` viewed through a descriptor with the
/// given row stride (> cols: a strided view of a wider buffer).
template <typename T> struct Mat {
  std::vector<T> storage;
  StridedMemRefType<T, 2> desc;
  Mat(int64_t rows, int64_t cols, int64_t rowStride = -1) {
    if (rowStride < 0)
      rowStride = cols;
    storage.assign(rows * rowStride + 1, T());
    desc.basePtr = desc.data = storage.data();
    desc.offset = 1; // a non-zero offset, as a slice would have
    desc.sizes[0] = rows;
    desc.sizes[1] = cols;
    desc.strides[0] = rowStride;
    desc.strides[1] = 1;
  }
  T &at(int64_t i, int64_t j) {
    return storage[1 + i * desc.strides[0] + j];
  }
  TxRtUnrankedMemRef unranked() { return {2, &desc}; }
};

float base(int64_t i, int64_t j) { return float((i * 7 + j * 3) % 11) - 5; }

struct BF16 { uint16_t bits; };
struct F16 { uint16_t bits; };

void report(const std::string &name, bool ok) {
  if (!ok)
    ++failures;
  if (rank == 0)
    std::printf("%s %s\n", ok ? "PASS" : "FAIL", name.c_str());
}

/// Runs the three collectives on a `rows x cols` input of element type T
/// along `dim`, with a strided input when `strided`.
template <typename T, typename Conv>
void runCase(const char *type, Conv conv, int64_t dim, bool strided,
             void (*ar)(TxRtUnrankedMemRef *, TxRtUnrankedMemRef *, int64_t),
             void (*rs)(TxRtUnrankedMemRef *, TxRtUnrankedMemRef *, int64_t,
                        int64_t),
             void (*ag)(TxRtUnrankedMemRef *, TxRtUnrankedMemRef *, int64_t,
                        int64_t)) {
  const int64_t rows = 4 * world, cols = 6;
  const float sumScale = float(world * (world + 1) / 2);
  std::string suffix = std::string(type) + " dim " + std::to_string(dim) +
                       (strided ? " strided" : "");
  Mat<T> in(rows, cols, strided ? cols + 3 : cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      in.at(i, j) = conv.enc(float(rank + 1) * base(i, j));
  auto inU = in.unranked();

  { // all_reduce
    Mat<T> out(rows, cols);
    auto outU = out.unranked();
    ar(&inU, &outU, world);
    bool ok = true;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        ok &= std::fabs(conv.dec(out.at(i, j)) - sumScale * base(i, j)) < 1e-3f;
    report("all_reduce " + suffix, ok);
  }
  { // reduce_scatter: rank r keeps block r along dim
    int64_t orows = dim == 0 ? rows / world : rows;
    int64_t ocols = dim == 1 ? cols / world : cols;
    if (dim == 1 && cols % world != 0) {
      report("reduce_scatter " + suffix + " (skipped: cols)", true);
    } else {
      Mat<T> out(orows, ocols);
      auto outU = out.unranked();
      rs(&inU, &outU, dim, world);
      bool ok = true;
      for (int64_t i = 0; i < orows; ++i)
        for (int64_t j = 0; j < ocols; ++j) {
          int64_t gi = dim == 0 ? rank * orows + i : i;
          int64_t gj = dim == 1 ? rank * ocols + j : j;
          ok &= std::fabs(conv.dec(out.at(i, j)) - sumScale * base(gi, gj)) <
                1e-3f;
        }
      report("reduce_scatter " + suffix, ok);
    }
  }
  { // all_gather: every rank's input, rank r's block at r
    int64_t orows = dim == 0 ? rows * world : rows;
    int64_t ocols = dim == 1 ? cols * world : cols;
    Mat<T> out(orows, ocols);
    auto outU = out.unranked();
    ag(&inU, &outU, dim, world);
    bool ok = true;
    for (int64_t i = 0; i < orows; ++i)
      for (int64_t j = 0; j < ocols; ++j) {
        int64_t src = dim == 0 ? i / rows : j / cols;
        float expect = float(src + 1) * base(i % rows, j % cols);
        ok &= std::fabs(conv.dec(out.at(i, j)) - expect) < 1e-3f;
      }
    report("all_gather " + suffix, ok);
  }
}

struct F32Conv {
  float enc(float f) { return f; }
  float dec(float v) { return v; }
};
struct BF16Conv {
  uint16_t enc(float f) { return floatToBf16(f); }
  float dec(uint16_t v) { return bf16ToFloat(v); }
};
struct F16Conv {
  uint16_t enc(float f) { return floatToF16(f); }
  float dec(uint16_t v) { return f16ToFloat(v); }
};

} // namespace

int main(int argc, char **argv) {
  world = int(tx_rt_world_size());
  rank = int(tx_rt_world_rank());
  if (rank == 0)
    std::printf("backend %s, %d ranks, rank in group %lld\n",
                tx_rt_backend_name(), world, (long long)tx_rt_rank(world));
  for (int64_t dim : {0, 1})
    for (bool strided : {false, true}) {
      runCase<float>("f32", F32Conv(), dim, strided,
                     _mlir_ciface_tx_rt_all_reduce_f32,
                     _mlir_ciface_tx_rt_reduce_scatter_f32,
                     _mlir_ciface_tx_rt_all_gather_f32);
      runCase<uint16_t>("bf16", BF16Conv(), dim, strided,
                        _mlir_ciface_tx_rt_all_reduce_bf16,
                        _mlir_ciface_tx_rt_reduce_scatter_bf16,
                        _mlir_ciface_tx_rt_all_gather_bf16);
      runCase<uint16_t>("f16", F16Conv(), dim, strided,
                        _mlir_ciface_tx_rt_all_reduce_f16,
                        _mlir_ciface_tx_rt_reduce_scatter_f16,
                        _mlir_ciface_tx_rt_all_gather_f16);
    }
  if (argc > 1 && std::string(argv[1]) == "--bad-group") {
    Mat<float> a(2, 2), b(2, 2);
    auto au = a.unranked(), bu = b.unranked();
    _mlir_ciface_tx_rt_all_reduce_f32(&au, &bu, world + 1); // aborts
  }
  if (argc > 1 && std::string(argv[1]) == "--on-stream") {
    // What the host code of tx-to-nvvm calls: needs the nccl backend.
    Mat<float> a(2, 2), b(2, 2);
    auto au = a.unranked(), bu = b.unranked();
    int stream = 0;
    _mlir_ciface_tx_rt_all_reduce_f32_on_stream(&au, &bu, world, &stream);
  }
  tx_rt_finalize();
  return failures ? 1 : 0;
}
