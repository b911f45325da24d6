//===- TestCommVolume.cpp - bytes moved by a function's collectives -------===//
//
// A test pass printing, per collective and per function, the payload (the
// full tensor) and what each rank sends with ring algorithms over n ranks:
//   all_reduce                        2 (n-1)/n * S
//   reduce_scatter, all_gather        (n-1)/n * S
// where S is the byte size of the full (unscattered) tensor.
//
//===----------------------------------------------------------------------===//

#include "mlir/Pass/Pass.h"
#include "TxDialect/TxDialect.h"
#include "TxDialect/TxOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <limits>

namespace mlir::tx {
#define GEN_PASS_DECL_TXTESTCOMMVOLUME
#define GEN_PASS_DEF_TXTESTCOMMVOLUME
#include "TestPasses.h.inc"
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

  /// Bytes of `type` with dynamic dimensions taken as `tokens`; nullopt
  /// when a dimension is dynamic and `tokens` unset, failure when the size
  /// does not fit in 64 bits.
  FailureOr<std::optional<int64_t>> bytes(Type t) const {
    auto type = cast<MemRefType>(t);
    std::optional<int64_t> n = type.getElementTypeBitWidth() / 8;
    for (int64_t d : type.getShape()) {
      if (ShapedType::isDynamic(d)) {
        if (tokens <= 0)
          return std::optional<int64_t>();
        d = tokens;
      }
      n = llvm::checkedMul(*n, d);
      if (!n)
        return failure();
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
    if (tokens < 0) {
      getOperation().emitError()
          << "tokens must not be negative, got "
          << static_cast<int64_t>(tokens);
      return signalPassFailure();
    }
    bool overflow = false;
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
        FailureOr<std::optional<int64_t>> s = bytes(value.getType());
        if (succeeded(s) && !*s) {
          known = false;
          op->emitRemark() << kind << ": dynamic size (pass tokens=N)";
          return;
        }
        // factor * (n - 1) * payload / n, and the totals, in 128 bits.
        using I128 = __int128;
        I128 max = std::numeric_limits<int64_t>::max();
        I128 payload = 0, send = 0;
        if (succeeded(s)) {
          payload = local ? I128(**s) * n : I128(**s);
          if (payload <= max)
            send = I128(kind == "all_reduce" ? 2 : 1) * (n - 1) * payload / n;
        }
        if (failed(s) || payload > max || payload + total.payload > max ||
            send + total.ringSend > max) {
          op->emitError() << kind
                          << ": the byte count does not fit in 64 bits";
          overflow = true;
          return;
        }
        total.payload += static_cast<int64_t>(payload);
        total.ringSend += static_cast<int64_t>(send);
        op->emitRemark() << kind << ": payload "
                         << static_cast<int64_t>(payload)
                         << " B, ring send per rank "
                         << static_cast<int64_t>(send) << " B";
      });
      if (overflow)
        return signalPassFailure();
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
