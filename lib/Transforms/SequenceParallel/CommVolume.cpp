//===- CommVolume.cpp - bytes moved by a function's collectives -----------===//
//
// A test pass printing, per collective and per function, the payload (the
// full tensor) and what each rank sends with ring algorithms over n ranks:
//   all_reduce                        2 (n-1)/n * S
//   reduce_scatter, all_gather        (n-1)/n * S
// where S is the byte size of the full (unscattered) tensor.
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Transforms/SequenceParallel.h"

#include "TxDialect/TxDialect.h"
#include "TxDialect/TxOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tx {
#define GEN_PASS_DEF_TXTESTCOMMVOLUME
#include "TxDialect/Transforms/SPPasses.h.inc"
} // namespace mlir::tx

using namespace mlir;
using namespace mlir::tx;

namespace {

struct Volume {
  int64_t payload = 0; // bytes of the full tensor
  int64_t ringSend = 0; // bytes each rank sends
};

struct CommVolumePass
    : public tx::impl::TxTestCommVolumeBase<CommVolumePass> {
  using Base::Base;

  /// Bytes of `type` with dynamic dimensions taken as `tokens`.
  std::optional<int64_t> bytes(Type t) const {
    auto type = cast<MemRefType>(t);
    int64_t n = type.getElementTypeBitWidth() / 8;
    for (int64_t d : type.getShape()) {
      if (ShapedType::isDynamic(d)) {
        if (tokens <= 0)
          return std::nullopt;
        d = tokens;
      }
      n *= d;
    }
    return n;
  }

  /// The full tensor a collective moves, its kind and group size.
  std::optional<std::tuple<StringRef, Value, int64_t, bool>>
  describe(Operation *op) const {
    if (auto c = dyn_cast<AllReduceOp>(op))
      return std::make_tuple(StringRef("all_reduce"), c.getInput(),
                             c.getGroupSize(), false);
    if (auto c = dyn_cast<ReduceScatterOp>(op))
      return std::make_tuple(StringRef("reduce_scatter"), c.getInput(),
                             c.getGroupSize(), false);
    if (auto c = dyn_cast<AllGatherOp>(op))
      return std::make_tuple(StringRef("all_gather"), c.getResult(),
                             c.getGroupSize(), false);
    // The fused ops move the gathered input / the unreduced GEMM output,
    // which are `group` times their local operand / result.
    if (auto c = dyn_cast<AllGatherLinearOp>(op))
      return std::make_tuple(StringRef("all_gather_linear"), c.getInput(),
                             c.getGroupSize(), true);
    if (auto c = dyn_cast<LinearReduceScatterOp>(op))
      return std::make_tuple(StringRef("linear_reduce_scatter"),
                             c.getResult(), c.getGroupSize(), true);
    return std::nullopt;
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      Volume total;
      bool known = true;
      int count = 0;
      func.walk([&](Operation *op) {
        auto d = describe(op);
        if (!d)
          return;
        auto [kind, value, n, local] = *d;
        ++count;
        std::optional<int64_t> s = bytes(value.getType());
        if (!s) {
          known = false;
          op->emitRemark() << kind << ": dynamic size (pass tokens=N)";
          return;
        }
        int64_t payload = local ? *s * n : *s;
        int64_t factor = kind == "all_reduce" ? 2 : 1;
        int64_t send = factor * (n - 1) * payload / n;
        total.payload += payload;
        total.ringSend += send;
        op->emitRemark() << kind << ": payload " << payload
                         << " B, ring send per rank " << send << " B";
      });
      if (count == 0)
        continue;
      if (!known) {
        func.emitRemark() << count << " collectives, total unknown";
        continue;
      }
      func.emitRemark() << count << " collectives: payload " << total.payload
                        << " B, ring send per rank " << total.ringSend
                        << " B";
    }
  }
};

} // namespace
